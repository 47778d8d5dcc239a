/**
 * PullConsumer options (RocketMQ's DefaultMQPullConsumer fields, units in the names): the type, frozen
 * defaults and the one resolve function, which also checks the derived rule that a held pull's RPC
 * deadline exceeds the broker's suspend time.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../../common/errors.js';
import { groupNameProblem } from '../../../common/names.js';
import {
  clientOptionsShape,
  finishClientOptions,
  instanceNameForClient,
  ms,
  parseOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from '../../instance/client-options.js';

export interface PullConsumerOptions extends ClientOptions {
  /** The consumer group (offsets, heartbeat). Required. */
  consumerGroup: string;
  /** CLUSTERING (default) or BROADCASTING: what the heartbeat announces. */
  messageModel?: 'CLUSTERING' | 'BROADCASTING';
  /** How long the broker may hold `pullBlockIfNotFound`, ms (brokerSuspendMaxTimeMillis). Default 20000. */
  brokerSuspendMaxTimeMs?: number;
  /** RPC deadline of `pullBlockIfNotFound`, ms (consumerTimeoutMillisWhenSuspend); must exceed brokerSuspendMaxTimeMs. Default 30000. */
  consumerTimeoutMsWhenSuspend?: number;
  /** RPC deadline of `pull`, ms (consumerPullTimeoutMillis). Default 10000. */
  consumerPullTimeoutMs?: number;
  /** Retries before a message sent back goes to the DLQ (maxReconsumeTimes). Default 16. */
  maxReconsumeTimes?: number;
}

export const DEFAULT_PULL_CONSUMER_OPTIONS = Object.freeze({
  messageModel: 'CLUSTERING' as const,
  brokerSuspendMaxTimeMs: 20_000,
  consumerTimeoutMsWhenSuspend: 30_000,
  consumerPullTimeoutMs: 10_000,
  maxReconsumeTimes: 16,
});

const pullConsumerSchema = z
  .object({
    ...clientOptionsShape,
    consumerGroup: z.string().superRefine((v, ctx) => {
      const p = groupNameProblem(v);
      if (p) ctx.addIssue({ code: 'custom', message: p });
    }),
    messageModel: z.enum(['CLUSTERING', 'BROADCASTING']).default(DEFAULT_PULL_CONSUMER_OPTIONS.messageModel),
    brokerSuspendMaxTimeMs: ms(0, 120_000).default(DEFAULT_PULL_CONSUMER_OPTIONS.brokerSuspendMaxTimeMs),
    consumerTimeoutMsWhenSuspend: ms(1).default(DEFAULT_PULL_CONSUMER_OPTIONS.consumerTimeoutMsWhenSuspend),
    consumerPullTimeoutMs: ms(1).default(DEFAULT_PULL_CONSUMER_OPTIONS.consumerPullTimeoutMs),
    maxReconsumeTimes: z.int().min(-1).max(16).default(DEFAULT_PULL_CONSUMER_OPTIONS.maxReconsumeTimes),
  })
  .superRefine((o, ctx) => {
    // RocketMQ: "The consumer pull timeout is too small" — a held pull must be answered by the broker first.
    if (o.consumerTimeoutMsWhenSuspend <= o.brokerSuspendMaxTimeMs)
      ctx.addIssue({
        code: 'custom',
        path: ['consumerTimeoutMsWhenSuspend'],
        message: `must be greater than brokerSuspendMaxTimeMs (${o.brokerSuspendMaxTimeMs}), so the broker answers a held pull before the client gives up`,
      });
  });

export type ResolvedPullConsumerOptions = ResolvedClientOptions & {
  consumerGroup: string;
  messageModel: 'CLUSTERING' | 'BROADCASTING';
  brokerSuspendMaxTimeMs: number;
  consumerTimeoutMsWhenSuspend: number;
  consumerPullTimeoutMs: number;
  maxReconsumeTimes: number;
};

/** Validates and completes pull-consumer options; a bad option throws InvalidArgumentError naming it. */
export function resolvePullConsumerOptions(options: PullConsumerOptions): ResolvedPullConsumerOptions {
  if (options === undefined)
    throw new InvalidArgumentError(
      'options',
      'PullConsumer options are required (at least consumerGroup and endpoints)',
    );
  const o = finishClientOptions(parseOptions(pullConsumerSchema, options, 'PullConsumer'));
  // RocketMQ: changeInstanceNameToPID only in CLUSTERING mode (a broadcasting client keeps its name).
  const instanceName = o.messageModel === 'CLUSTERING' ? instanceNameForClient(o.instanceName) : o.instanceName;
  return Object.freeze({ ...o, instanceName });
}
