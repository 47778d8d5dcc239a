/**
 * LitePullConsumer options: RocketMQ's DefaultLitePullConsumer fields and defaults (pullBatchSize 10,
 * autoCommit every 5 s, pullThresholdForAll 10000, ...) with units in the names, plus the shared client
 * options. One zod schema, frozen defaults, one resolve function that throws an error naming the option.
 */
import { tmpdir } from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { InvalidArgumentError } from '../../../common/errors.js';
import { groupNameProblem } from '../../../common/names.js';
import { AllocateMessageQueueAveragely, type AllocateMessageQueueStrategy } from '../allocate-message-queue.js';
import {
  clientOptionsShape,
  finishClientOptions,
  instanceNameForClient,
  parseOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from '../../instance/client-options.js';
import { traceOptionsShape, type ResolvedTraceOptions, type TraceOptions } from '../../trace/trace-options.js';
import { defaultConsumeTimestamp } from '../compute-pull-from-where.js';
import { ConsumeFromWhere, MessageModel } from '../consumer-constants.js';

export interface LitePullConsumerOptions extends ClientOptions, TraceOptions {
  /** The consumer group (offsets, and the queue split in `subscribe` mode). Required; not `DEFAULT_CONSUMER`. */
  consumerGroup: string;
  /** CLUSTERING (default: the group shares the queues, offsets on the broker) or BROADCASTING (local offsets). */
  messageModel?: MessageModel;
  /** Where a queue with no committed offset starts. Default CONSUME_FROM_LAST_OFFSET. */
  consumeFromWhere?: ConsumeFromWhere;
  /** For CONSUME_FROM_TIMESTAMP: `yyyyMMddHHmmss`, local time. Default: 30 minutes before construction. */
  consumeTimestamp?: string;
  /** Queue allocation among the group's members (`subscribe` mode). Default `new AllocateMessageQueueAveragely()`. */
  allocateMessageQueueStrategy?: AllocateMessageQueueStrategy;
  /**
   * Commit automatically what `poll` (or the async iterator) handed out, at most every
   * `autoCommitIntervalMs`. Default true. When false, offsets move only through `commit()`.
   */
  autoCommit?: boolean;
  /** Auto-commit period, ms. Default 5000, at least 1000. */
  autoCommitIntervalMs?: number;
  /** Most messages one pull asks for, and so most messages one `poll` returns. Default 10, [1, 1024]. */
  pullBatchSize?: number;
  /** Stop pulling while this many messages wait in the consumer's buffer, all queues together. Default 10000. */
  pullThresholdForAll?: number;
  /** Stop pulling a queue while it holds more messages than this (buffered and handed out). Default 1000, [1, 65535]. */
  pullThresholdForQueue?: number;
  /** Stop pulling a queue while its held bodies exceed this many MiB. Default 100, [1, 1024]. */
  pullThresholdSizeForQueueMiB?: number;
  /** Stop pulling a queue while its held messages span more offsets than this. Default 2000, [1, 65535]. */
  consumeMaxSpan?: number;
  /** Default timeout of `poll()`, ms. Default 5000. */
  pollTimeoutMs?: number;
  /** Retry delay after a failed pull, ms. Default 1000. */
  pullTimeDelayMsWhenException?: number;
  /** How long the broker may hold an empty pull (long polling), ms. Default 20000. */
  brokerSuspendMaxTimeMs?: number;
  /** Client deadline of a held pull, ms; must exceed brokerSuspendMaxTimeMs. Default 30000. */
  consumerTimeoutMsWhenSuspend?: number;
  /** BROADCASTING only: the directory of the local offset files. Default `<os.tmpdir()>/rocketmq-ts-offsets`. */
  offsetStoreDir?: string;
  /**
   * CLUSTERING, `subscribe` mode: after `start()`, unless the brokers list this member alone, the first
   * division of the queues waits until the group's membership has not changed for this long, ms, so
   * that members starting together never pull the same queue. Default 500; 0 turns the settle off.
   */
  startSettleMs?: number;
  /** The longest a start-up settle waits while the membership keeps changing, ms. Default 3000. */
  startSettleMaxMs?: number;
  /**
   * How long `start()` keeps trying to reach the broker(s) before it rejects with a
   * `StartTimeoutError`, ms. Default 10000.
   */
  startTimeoutMs?: number;
  /** Aborting this signal shuts the consumer down (as `shutdown()`). */
  signal?: AbortSignal;
}

export const DEFAULT_LITE_PULL_CONSUMER_OPTIONS = Object.freeze({
  messageModel: MessageModel.CLUSTERING,
  consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
  autoCommit: true,
  autoCommitIntervalMs: 5000,
  pullBatchSize: 10,
  pullThresholdForAll: 10_000,
  pullThresholdForQueue: 1000,
  pullThresholdSizeForQueueMiB: 100,
  consumeMaxSpan: 2000,
  pollTimeoutMs: 5000,
  pullTimeDelayMsWhenException: 1000,
  brokerSuspendMaxTimeMs: 20_000,
  consumerTimeoutMsWhenSuspend: 30_000,
  startSettleMs: 500,
  startSettleMaxMs: 3000,
  startTimeoutMs: 10_000,
});

const D = DEFAULT_LITE_PULL_CONSUMER_OPTIONS;
const intIn = (min: number, max: number) => z.int().min(min).max(max);

const schema = z.object({
  ...clientOptionsShape,
  ...traceOptionsShape,
  consumerGroup: z.string().superRefine((g, ctx) => {
    const problem = groupNameProblem(g);
    if (problem) ctx.addIssue({ code: 'custom', message: problem });
    else if (g === 'DEFAULT_CONSUMER') ctx.addIssue({ code: 'custom', message: 'can not equal DEFAULT_CONSUMER' });
  }),
  messageModel: z.enum([MessageModel.CLUSTERING, MessageModel.BROADCASTING]).default(D.messageModel),
  consumeFromWhere: z
    .enum(Object.values(ConsumeFromWhere) as [ConsumeFromWhere, ...ConsumeFromWhere[]])
    .default(D.consumeFromWhere),
  consumeTimestamp: z
    .string()
    .regex(/^\d{14}$/, { message: 'must be yyyyMMddHHmmss' })
    .optional(),
  allocateMessageQueueStrategy: z
    .custom<AllocateMessageQueueStrategy>(
      (v) =>
        v !== null &&
        typeof v === 'object' &&
        typeof (v as Record<string, unknown>).allocate === 'function' &&
        typeof (v as Record<string, unknown>).getName === 'function',
      { message: 'must be an object with allocate() and getName()' },
    )
    .optional(),
  autoCommit: z.boolean().default(D.autoCommit),
  autoCommitIntervalMs: intIn(1000, 86_400_000).default(D.autoCommitIntervalMs),
  pullBatchSize: intIn(1, 1024).default(D.pullBatchSize),
  pullThresholdForAll: intIn(1, 10_000_000).default(D.pullThresholdForAll),
  pullThresholdForQueue: intIn(1, 65535).default(D.pullThresholdForQueue),
  pullThresholdSizeForQueueMiB: intIn(1, 1024).default(D.pullThresholdSizeForQueueMiB),
  consumeMaxSpan: intIn(1, 65535).default(D.consumeMaxSpan),
  pollTimeoutMs: intIn(0, 3_600_000).default(D.pollTimeoutMs),
  pullTimeDelayMsWhenException: intIn(0, 600_000).default(D.pullTimeDelayMsWhenException),
  brokerSuspendMaxTimeMs: intIn(0, 600_000).default(D.brokerSuspendMaxTimeMs),
  consumerTimeoutMsWhenSuspend: intIn(1, 900_000).default(D.consumerTimeoutMsWhenSuspend),
  offsetStoreDir: z.string().min(1).optional(),
  startSettleMs: intIn(0, 10_000).default(D.startSettleMs),
  startSettleMaxMs: intIn(0, 60_000).default(D.startSettleMaxMs),
  startTimeoutMs: intIn(1, 3_600_000).default(D.startTimeoutMs),
  signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, { message: 'must be an AbortSignal' }).optional(),
});

export interface ResolvedLitePullConsumerOptions extends ResolvedClientOptions, ResolvedTraceOptions {
  consumerGroup: string;
  messageModel: MessageModel;
  consumeFromWhere: ConsumeFromWhere;
  consumeTimestamp: string;
  allocateMessageQueueStrategy: AllocateMessageQueueStrategy;
  autoCommit: boolean;
  autoCommitIntervalMs: number;
  pullBatchSize: number;
  pullThresholdForAll: number;
  pullThresholdForQueue: number;
  pullThresholdSizeForQueueMiB: number;
  consumeMaxSpan: number;
  pollTimeoutMs: number;
  pullTimeDelayMsWhenException: number;
  brokerSuspendMaxTimeMs: number;
  consumerTimeoutMsWhenSuspend: number;
  offsetStoreDir: string;
  startSettleMs: number;
  startSettleMaxMs: number;
  startTimeoutMs: number;
  signal: AbortSignal | undefined;
}

/** Validates and defaults LitePullConsumer options; a bad option throws an InvalidArgumentError naming it. */
export function resolveLitePullConsumerOptions(input: LitePullConsumerOptions): ResolvedLitePullConsumerOptions {
  const o = finishClientOptions(parseOptions(schema, input, 'LitePullConsumer'));
  if (o.consumerTimeoutMsWhenSuspend <= o.brokerSuspendMaxTimeMs) {
    throw new InvalidArgumentError(
      'consumerTimeoutMsWhenSuspend',
      `must exceed brokerSuspendMaxTimeMs (${o.brokerSuspendMaxTimeMs}) so a held pull is not cut off by the client`,
    );
  }
  return {
    ...o,
    // RocketMQ: changeInstanceNameToPID only in CLUSTERING mode.
    instanceName: o.messageModel === MessageModel.CLUSTERING ? instanceNameForClient(o.instanceName) : o.instanceName,
    consumeTimestamp: o.consumeTimestamp ?? defaultConsumeTimestamp(o.clock.now()),
    allocateMessageQueueStrategy: o.allocateMessageQueueStrategy ?? new AllocateMessageQueueAveragely(),
    offsetStoreDir: o.offsetStoreDir ?? path.join(tmpdir(), 'rocketmq-ts-offsets'),
    signal: o.signal,
    accessToken: o.accessToken,
  };
}
