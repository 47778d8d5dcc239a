/**
 * PushConsumer options: RocketMQ's DefaultMQPushConsumer fields and ranges
 * (DefaultMQPushConsumerImpl.checkConfig) with units in the names, plus the shared client options.
 * One zod schema, frozen defaults, one resolve function.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { InvalidArgumentError } from '../../../common/errors.js';
import { REBALANCE_LOCK_MAX_LIVE_TIME_MS } from '../process-queue.js';
import { REBALANCE_LOCK_INTERVAL_MS } from './queue-locker.js';
import { groupNameProblem } from '../../../common/names.js';
import { AllocateMessageQueueAveragely, type AllocateMessageQueueStrategy } from '../allocate-message-queue.js';
import {
  clientOptionsShape,
  finishClientOptions,
  parseOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from '../../instance/client-options.js';
import { traceOptionsShape, type ResolvedTraceOptions, type TraceOptions } from '../../trace/trace-options.js';
import { defaultConsumeTimestamp } from '../compute-pull-from-where.js';
import { ConsumeFromWhere, MessageModel } from '../consumer-constants.js';

export interface PushConsumerOptions extends ClientOptions, TraceOptions {
  /** The consumer group. Required; RocketMQ's name rules; not `DEFAULT_CONSUMER`. */
  consumerGroup: string;
  /** CLUSTERING (default: the group shares the queues) or BROADCASTING (every member gets everything). */
  messageModel?: MessageModel;
  /**
   * Where a group with no committed offset starts, per queue. Default CONSUME_FROM_LAST_OFFSET. An
   * existing group always resumes from its committed offset. Note RocketMQ's rule: a brand-new group
   * on a queue whose first message (offset 0) is still in the broker's memory starts at 0.
   */
  consumeFromWhere?: ConsumeFromWhere;
  /** For CONSUME_FROM_TIMESTAMP: `yyyyMMddHHmmss`, local time. Default: 30 minutes before construction. */
  consumeTimestamp?: string;
  /** Queue allocation among the group's members. Default `new AllocateMessageQueueAveragely()`. */
  allocateMessageQueueStrategy?: AllocateMessageQueueStrategy;
  /** Listener calls running at once (RocketMQ's consumer threads). Default 20, range [1, 1000]. */
  consumeThreadMax?: number;
  /** Pause pulling a queue while its held messages span more offsets than this. Default 2000, [1, 65535]. */
  consumeConcurrentlyMaxSpan?: number;
  /** Pause pulling a queue while it holds more messages than this. Default 1000, [1, 65535]. */
  pullThresholdForQueue?: number;
  /** Pause pulling a queue while its held bodies exceed this many MiB. Default 100, [1, 1024]. */
  pullThresholdSizeForQueueMiB?: number;
  /** Topic-wide message limit, split evenly over the queues held (overrides the per-queue one). -1 = off (default), else [1, 6553500]. */
  pullThresholdForTopic?: number;
  /** Topic-wide size limit in MiB, split evenly over the queues held. -1 = off (default), else [1, 102400]. */
  pullThresholdSizeForTopicMiB?: number;
  /** Wait between two pulls of one queue after messages were found, ms. Default 0, [0, 65535]. */
  pullIntervalMs?: number;
  /** Messages per listener call. Default 1, [1, 1024]. */
  consumeMessageBatchMaxSize?: number;
  /** Messages asked for per pull. Default 32, [1, 1024]. */
  pullBatchSize?: number;
  /**
   * Deliveries before a message goes to `%DLQ%<group>`; -1 (default) means 16 for concurrent
   * consumption and no limit for orderly consumption (as in RocketMQ).
   */
  maxReconsumeTimes?: number;
  /** Orderly consumption: how long a suspended queue (or key) waits before its batch is retried, ms. Default 1000. */
  suspendCurrentQueueTimeMillis?: number;
  /** A message whose listener call has run longer than this is handed back for retry, minutes. Default 15. */
  consumeTimeoutMinutes?: number;
  /** Retry delay after a failed pull, ms. Default 1000 (RocketMQ's pullTimeDelayMillsWhenException). */
  pullTimeDelayMsWhenException?: number;
  /** Send the subscription with every pull instead of relying on the heartbeat. Default false. */
  postSubscriptionWhenPull?: boolean;
  /** How long the broker may hold an empty pull (long polling), ms. Default 15000. */
  brokerSuspendMaxTimeMs?: number;
  /** Client deadline of a held pull, ms; must exceed brokerSuspendMaxTimeMs. Default 30000. */
  consumerTimeoutMsWhenSuspend?: number;
  /**
   * BROADCASTING only: the directory of the local offset files
   * (`<dir>/<clientId>/<group>/offsets.json`). Default `<os.tmpdir()>/rocketmq-ts-offsets`; set a
   * durable directory when offsets must survive a reboot.
   */
  offsetStoreDir?: string;
  /**
   * A queue holding messages with no consume progress for this long raises a `stall` event, ms.
   * Default 60000; 0 turns the check off.
   */
  stallTimeoutMs?: number;
  /** Default deadline of `shutdown()` for in-flight listeners, ms. Default 10000. */
  shutdownTimeoutMs?: number;
  /**
   * How long `start()` keeps trying to reach the broker(s) before it rejects with a
   * `StartTimeoutError`, ms. Default 10000.
   */
  startTimeoutMs?: number;
  /**
   * Orderly consumption: how often the broker locks of the queues held are renewed, ms. Default 20000
   * (RocketMQ: rocketmq.client.rebalance.lockInterval). Must stay below `rebalanceLockMaxLiveTimeMs`.
   */
  rebalanceLockIntervalMs?: number;
  /**
   * Orderly consumption: a queue whose lock the broker has not confirmed for this long is not consumed,
   * ms. Default 30000 (RocketMQ: rocketmq.client.rebalance.lockMaxLiveTime). Keep it well below the
   * broker's lock lifetime (`rebalanceLockMaxLiveTimeMs` on the bundled broker, 60 s in RocketMQ): that
   * margin is what keeps a member that lost its lock from consuming alongside the next holder.
   */
  rebalanceLockMaxLiveTimeMs?: number;
  /**
   * CLUSTERING: after `start()`, unless the brokers list this member alone, the first division of the
   * queues waits until the group's membership has not changed for this long, ms, so that members
   * starting together never pull the same queue (docs/consumer.md, "Members starting together"); it is
   * also the time a member that started alone has to hand queues over. Default 500 (RocketMQ's
   * first-pull delay, which the first pulls after a settle skip); 0 turns the settle off.
   */
  startSettleMs?: number;
  /** The longest a start-up settle waits while the membership keeps changing, ms. Default 3000. */
  startSettleMaxMs?: number;
  /** Aborting this signal shuts the consumer down (as `shutdown()`). */
  signal?: AbortSignal;
  /**
   * How messages are fetched: 'PULL' (default: the group's members share the queues and pull them) or
   * 'POP' (RocketMQ 5's push consumer with client rebalance off: the broker hands each message to one
   * member, which acknowledges it; see docs/consumer.md, "Pull, push or POP"). POP is CLUSTERING only
   * and takes a concurrent listener.
   */
  consumeMode?: PushConsumeMode;
  /** POP: how long a popped message stays invisible to the group before it is delivered again, ms. Default 60000. */
  popInvisibleTimeMs?: number;
  /** POP: messages asked for per POP_MESSAGE. Default 32, [1, 32]. */
  popBatchNums?: number;
  /** POP: stop popping an assignment while this many of its messages wait for their acknowledgement. Default 96. */
  popThresholdForQueue?: number;
  /**
   * POP: the wait before a failed message is delivered again, by delay level (level 0 takes the message's
   * reconsumeTimes), ms. Default RocketMQ's popDelayLevel: 10 s, 30 s, 1 min, 2 min ... 2 h.
   */
  popRetryDelaysMs?: readonly number[];
}

/** How a PushConsumer fetches messages. */
export type PushConsumeMode = 'PULL' | 'POP';

/** The longest invisible time a broker accepts (RocketMQ proxy's maxInvisibleTimeMills: 12 hours). */
export const POP_MAX_INVISIBLE_TIME_MS = 12 * 3600 * 1000;
/** A shorter invisible time would run out before a listener has had a chance to finish. */
export const POP_MIN_INVISIBLE_TIME_MS = 1000;
/** RocketMQ: DefaultMQPushConsumerImpl.popDelayLevel, in seconds. */
const POP_DELAY_LEVEL_S = [10, 30, 60, 120, 180, 240, 300, 360, 420, 480, 540, 600, 1200, 1800, 3600, 7200];

export const DEFAULT_PUSH_CONSUMER_OPTIONS = Object.freeze({
  messageModel: MessageModel.CLUSTERING,
  consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
  consumeThreadMax: 20,
  consumeConcurrentlyMaxSpan: 2000,
  pullThresholdForQueue: 1000,
  pullThresholdSizeForQueueMiB: 100,
  pullThresholdForTopic: -1,
  pullThresholdSizeForTopicMiB: -1,
  pullIntervalMs: 0,
  consumeMessageBatchMaxSize: 1,
  pullBatchSize: 32,
  maxReconsumeTimes: -1,
  suspendCurrentQueueTimeMillis: 1000,
  consumeTimeoutMinutes: 15,
  pullTimeDelayMsWhenException: 1000,
  postSubscriptionWhenPull: false,
  brokerSuspendMaxTimeMs: 15_000,
  consumerTimeoutMsWhenSuspend: 30_000,
  stallTimeoutMs: 60_000,
  shutdownTimeoutMs: 10_000,
  startTimeoutMs: 10_000,
  rebalanceLockIntervalMs: REBALANCE_LOCK_INTERVAL_MS,
  rebalanceLockMaxLiveTimeMs: REBALANCE_LOCK_MAX_LIVE_TIME_MS,
  startSettleMs: 500,
  startSettleMaxMs: 3000,
  consumeMode: 'PULL' as PushConsumeMode,
  popInvisibleTimeMs: 60_000,
  popBatchNums: 32,
  popThresholdForQueue: 96,
  popRetryDelaysMs: Object.freeze(POP_DELAY_LEVEL_S.map((s) => s * 1000)) as readonly number[],
});

/** RocketMQ's MixAll.DEFAULT_CONSUMER_GROUP, refused as a group name. */
const DEFAULT_CONSUMER_GROUP = 'DEFAULT_CONSUMER';

const D = DEFAULT_PUSH_CONSUMER_OPTIONS;
const intIn = (min: number, max: number) => z.int().min(min).max(max);
const offOr = (min: number, max: number) =>
  z.int().refine((v) => v === -1 || (v >= min && v <= max), { message: `must be -1 or within [${min}, ${max}]` });

const strategySchema = z.custom<AllocateMessageQueueStrategy>(
  (v) =>
    v !== null &&
    typeof v === 'object' &&
    typeof (v as Record<string, unknown>).allocate === 'function' &&
    typeof (v as Record<string, unknown>).getName === 'function',
  { message: 'must be an object with allocate() and getName()' },
);

const schema = z.object({
  ...clientOptionsShape,
  ...traceOptionsShape,
  consumerGroup: z.string().superRefine((g, ctx) => {
    const problem = groupNameProblem(g);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else if (g === DEFAULT_CONSUMER_GROUP)
      ctx.addIssue({ code: 'custom', message: `can not equal ${DEFAULT_CONSUMER_GROUP}` });
  }),
  messageModel: z.enum([MessageModel.CLUSTERING, MessageModel.BROADCASTING]).default(D.messageModel),
  consumeFromWhere: z
    .enum(Object.values(ConsumeFromWhere) as [ConsumeFromWhere, ...ConsumeFromWhere[]])
    .default(D.consumeFromWhere),
  consumeTimestamp: z
    .string()
    .regex(/^\d{14}$/, { message: 'must be yyyyMMddHHmmss' })
    .optional(),
  allocateMessageQueueStrategy: strategySchema.optional(),
  consumeThreadMax: intIn(1, 1000).default(D.consumeThreadMax),
  consumeConcurrentlyMaxSpan: intIn(1, 65535).default(D.consumeConcurrentlyMaxSpan),
  pullThresholdForQueue: intIn(1, 65535).default(D.pullThresholdForQueue),
  pullThresholdSizeForQueueMiB: intIn(1, 1024).default(D.pullThresholdSizeForQueueMiB),
  pullThresholdForTopic: offOr(1, 6_553_500).default(D.pullThresholdForTopic),
  pullThresholdSizeForTopicMiB: offOr(1, 102_400).default(D.pullThresholdSizeForTopicMiB),
  pullIntervalMs: intIn(0, 65535).default(D.pullIntervalMs),
  consumeMessageBatchMaxSize: intIn(1, 1024).default(D.consumeMessageBatchMaxSize),
  pullBatchSize: intIn(1, 1024).default(D.pullBatchSize),
  maxReconsumeTimes: z.int().min(-1).max(65535).default(D.maxReconsumeTimes),
  suspendCurrentQueueTimeMillis: intIn(10, 30_000).default(D.suspendCurrentQueueTimeMillis),
  consumeTimeoutMinutes: z.number().positive().max(1440).default(D.consumeTimeoutMinutes),
  pullTimeDelayMsWhenException: intIn(0, 600_000).default(D.pullTimeDelayMsWhenException),
  postSubscriptionWhenPull: z.boolean().default(D.postSubscriptionWhenPull),
  brokerSuspendMaxTimeMs: intIn(0, 600_000).default(D.brokerSuspendMaxTimeMs),
  consumerTimeoutMsWhenSuspend: intIn(1, 900_000).default(D.consumerTimeoutMsWhenSuspend),
  offsetStoreDir: z.string().min(1).optional(),
  stallTimeoutMs: intIn(0, 86_400_000).default(D.stallTimeoutMs),
  shutdownTimeoutMs: intIn(0, 3_600_000).default(D.shutdownTimeoutMs),
  startTimeoutMs: intIn(1, 3_600_000).default(D.startTimeoutMs),
  rebalanceLockIntervalMs: intIn(100, 3_600_000).default(D.rebalanceLockIntervalMs),
  rebalanceLockMaxLiveTimeMs: intIn(200, 3_600_000).default(D.rebalanceLockMaxLiveTimeMs),
  startSettleMs: intIn(0, 10_000).default(D.startSettleMs),
  startSettleMaxMs: intIn(0, 60_000).default(D.startSettleMaxMs),
  signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, { message: 'must be an AbortSignal' }).optional(),
  consumeMode: z.enum(['PULL', 'POP']).default(D.consumeMode),
  popInvisibleTimeMs: intIn(POP_MIN_INVISIBLE_TIME_MS, POP_MAX_INVISIBLE_TIME_MS).default(D.popInvisibleTimeMs),
  popBatchNums: intIn(1, 32).default(D.popBatchNums),
  popThresholdForQueue: intIn(1, 65535).default(D.popThresholdForQueue),
  popRetryDelaysMs: z
    .array(intIn(1, POP_MAX_INVISIBLE_TIME_MS))
    .min(1)
    .max(64)
    .default([...D.popRetryDelaysMs]),
});

export interface ResolvedPushConsumerOptions extends ResolvedClientOptions, ResolvedTraceOptions {
  consumerGroup: string;
  messageModel: MessageModel;
  consumeFromWhere: ConsumeFromWhere;
  consumeTimestamp: string;
  allocateMessageQueueStrategy: AllocateMessageQueueStrategy;
  consumeThreadMax: number;
  consumeConcurrentlyMaxSpan: number;
  pullThresholdForQueue: number;
  pullThresholdSizeForQueueMiB: number;
  pullThresholdForTopic: number;
  pullThresholdSizeForTopicMiB: number;
  pullIntervalMs: number;
  consumeMessageBatchMaxSize: number;
  pullBatchSize: number;
  /** Resolved: -1 became 16. */
  maxReconsumeTimes: number;
  /** Resolved for orderly consumption: -1 became 2147483647 (RocketMQ's Integer.MAX_VALUE). */
  maxReconsumeTimesOrderly: number;
  suspendCurrentQueueTimeMillis: number;
  consumeTimeoutMinutes: number;
  pullTimeDelayMsWhenException: number;
  postSubscriptionWhenPull: boolean;
  brokerSuspendMaxTimeMs: number;
  consumerTimeoutMsWhenSuspend: number;
  offsetStoreDir: string;
  stallTimeoutMs: number;
  shutdownTimeoutMs: number;
  startTimeoutMs: number;
  rebalanceLockIntervalMs: number;
  rebalanceLockMaxLiveTimeMs: number;
  startSettleMs: number;
  startSettleMaxMs: number;
  signal: AbortSignal | undefined;
  consumeMode: PushConsumeMode;
  popInvisibleTimeMs: number;
  popBatchNums: number;
  popThresholdForQueue: number;
  popRetryDelaysMs: readonly number[];
}

/** Validates and defaults PushConsumer options; a bad option throws an InvalidArgumentError naming it. */
export function resolvePushConsumerOptions(input: PushConsumerOptions): ResolvedPushConsumerOptions {
  const o = finishClientOptions(parseOptions(schema, input, 'PushConsumer'));
  if (o.consumerTimeoutMsWhenSuspend <= o.brokerSuspendMaxTimeMs) {
    throw new InvalidArgumentError(
      'consumerTimeoutMsWhenSuspend',
      `must exceed brokerSuspendMaxTimeMs (${o.brokerSuspendMaxTimeMs}) so a held pull is not cut off by the client`,
    );
  }
  if (o.rebalanceLockMaxLiveTimeMs <= o.rebalanceLockIntervalMs) {
    throw new InvalidArgumentError(
      'rebalanceLockMaxLiveTimeMs',
      `must exceed rebalanceLockIntervalMs (${o.rebalanceLockIntervalMs}) so a held lock is renewed before it lapses`,
    );
  }
  if (o.consumeMode === 'POP' && o.messageModel !== MessageModel.CLUSTERING) {
    throw new InvalidArgumentError(
      'consumeMode',
      'POP delivers each message to one member of the group: it can not be combined with BROADCASTING',
    );
  }
  return {
    ...o,
    popRetryDelaysMs: Object.freeze([...o.popRetryDelaysMs]),
    consumeTimestamp: o.consumeTimestamp ?? defaultConsumeTimestamp(o.clock.now()),
    allocateMessageQueueStrategy: o.allocateMessageQueueStrategy ?? new AllocateMessageQueueAveragely(),
    // RocketMQ: -1 means 16 for concurrent consumption.
    maxReconsumeTimes: o.maxReconsumeTimes === -1 ? 16 : o.maxReconsumeTimes,
    // RocketMQ: -1 means Integer.MAX_VALUE for orderly consumption.
    maxReconsumeTimesOrderly: o.maxReconsumeTimes === -1 ? 2147483647 : o.maxReconsumeTimes,
    offsetStoreDir: o.offsetStoreDir ?? path.join(tmpdir(), 'rocketmq-ts-offsets'),
    signal: o.signal,
    accessToken: o.accessToken,
  };
}
