/**
 * The trace options every traced client takes (RocketMQ: the `enableMsgTrace` and
 * `customizedTraceTopic` constructor arguments of DefaultMQProducer, DefaultMQPushConsumer and
 * DefaultLitePullConsumer), and the start of a client's tracing from them.
 */
import { z } from 'zod';
import { topicNameProblem } from '../../common/names.js';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { MQClientInstance } from '../instance/mq-client-instance.js';
import { AsyncTraceDispatcher, type TraceStats } from './async-trace-dispatcher.js';
import { DEFAULT_TRACE_TOPIC, TRACE_GROUP_NAME_PREFIX } from './trace-codec.js';
import { MsgTrace } from './trace-hooks.js';
import { instanceTraceSender } from './trace-sender.js';

export interface TraceOptions {
  /**
   * Sends RocketMQ message-trace records (what `mqadmin queryMsgTraceById` shows) to `traceTopic`,
   * batched and in the background: a full trace queue or a failing trace topic drops records (counted
   * in `traceStats()`), never a message. Default false.
   */
  enableMsgTrace?: boolean;
  /** The topic trace records go to (RocketMQ's customizedTraceTopic). Default `RMQ_SYS_TRACE_TOPIC`. */
  traceTopic?: string;
}

export interface ResolvedTraceOptions {
  enableMsgTrace: boolean;
  traceTopic: string;
}

/** The zod shape each traced client's schema spreads. */
export const traceOptionsShape = {
  enableMsgTrace: z.boolean().default(false),
  traceTopic: z
    .string()
    .superRefine((v, ctx) => {
      const p = topicNameProblem(v);
      if (p) ctx.addIssue({ code: 'custom', message: p });
    })
    .default(DEFAULT_TRACE_TOPIC),
};

/** RocketMQ's TraceDispatcher.Type, part of the trace producer's group name. */
export type TraceClientType = 'PRODUCE' | 'CONSUME';

let traceProducers = 0;

/**
 * The tracing of a started client, or undefined when `enableMsgTrace` is off. The records are sent
 * through the client's own instance, as producer group `_INNER_TRACE_PRODUCER-<group>-<type>-<n>`.
 */
export function startMsgTrace(
  instance: MQClientInstance,
  options: ResolvedTraceOptions & { logger: Logger; clock: Clock },
  group: string,
  type: TraceClientType,
): MsgTrace | undefined {
  if (!options.enableMsgTrace) return undefined;
  const traceGroup = `${TRACE_GROUP_NAME_PREFIX}-${group}-${type}-${++traceProducers}`;
  const dispatcher = new AsyncTraceDispatcher({
    traceTopic: options.traceTopic,
    send: instanceTraceSender(instance, traceGroup),
    logger: options.logger,
    clock: options.clock,
  });
  return new MsgTrace(dispatcher, group, options.clock, options.logger);
}

/** A client's trace counts, or undefined when tracing is off. */
export function traceStatsOf(trace: MsgTrace | undefined): TraceStats | undefined {
  return trace?.dispatcher.stats();
}
