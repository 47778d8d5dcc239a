/**
 * Where a newly assigned queue starts (RocketMQ: RebalancePushImpl.computePullFromWhereWithException).
 * The stored offset wins when there is one; otherwise ConsumeFromWhere decides, with
 * RocketMQ's special cases for the retry topic. A read error (-2) or a negative result throws, and
 * the queue is skipped this round (RocketMQ does the same).
 * @pure
 */
import { RocketMQError } from '../../common/errors.js';
import type { MessageQueue } from '../../common/message.js';
import { RETRY_GROUP_TOPIC_PREFIX } from '../../common/message.js';
import { ConsumeFromWhere } from './consumer-constants.js';

export interface PullFromWhereContext {
  consumeFromWhere: ConsumeFromWhere;
  /** `yyyyMMddHHmmss`, local time. */
  consumeTimestamp: string;
  /** The offset store read with READ_FROM_STORE: ≥ 0, -1 (none), or -2 (error). */
  readOffsetFromStore(mq: MessageQueue): Promise<number>;
  /** GET_MAX_OFFSET */
  maxOffset(mq: MessageQueue): Promise<number>;
  /** SEARCH_OFFSET_BY_TIMESTAMP */
  searchOffset(mq: MessageQueue, timestampMs: number): Promise<number>;
}

export class ComputePullFromWhereError extends RocketMQError {
  constructor(message: string, cause?: unknown) {
    super('ERR_COMPUTE_PULL_FROM_WHERE', message, { retriable: true, cause });
  }
}

/** Parses RocketMQ's `yyyyMMddHHmmss` in local time (lenient like SimpleDateFormat: 13th month rolls over). */
export function parseConsumeTimestamp(s: string): number {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})$/.exec(s);
  if (!m) throw new ComputePullFromWhereError(`consumeTimestamp '${s}' is not yyyyMMddHHmmss`);
  const [, y, mo, d, h, mi, se] = m.map(Number) as [number, number, number, number, number, number, number];
  return new Date(y, mo - 1, d, h, mi, se).getTime();
}

/** RocketMQ's default consumeTimestamp: now minus 30 minutes, formatted `yyyyMMddHHmmss` in local time. */
export function defaultConsumeTimestamp(now: number): string {
  const d = new Date(now - 30 * 60 * 1000);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${p(d.getFullYear(), 4)}${p(d.getMonth() + 1)}${p(d.getDate())}${p(d.getHours())}${p(d.getMinutes())}${p(d.getSeconds())}`;
}

export async function computePullFromWhere(mq: MessageQueue, ctx: PullFromWhereContext): Promise<number> {
  const lastOffset = await ctx.readOffsetFromStore(mq);
  const isRetry = mq.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX);
  let result: number;
  if (lastOffset >= 0) {
    result = lastOffset;
  } else if (lastOffset !== -1) {
    throw new ComputePullFromWhereError(`reading the stored offset of ${mq.topic}/${mq.queueId} failed`);
  } else {
    switch (ctx.consumeFromWhere) {
      case ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET:
        result = 0;
        break;
      case ConsumeFromWhere.CONSUME_FROM_TIMESTAMP:
        // RocketMQ: the retry topic starts at its end under TIMESTAMP.
        result = isRetry
          ? await ctx.maxOffset(mq)
          : await ctx.searchOffset(mq, parseConsumeTimestamp(ctx.consumeTimestamp));
        break;
      default:
        // LAST_OFFSET and its deprecated aliases. RocketMQ: the retry topic starts at 0.
        result = isRetry ? 0 : await ctx.maxOffset(mq);
        break;
    }
  }
  if (result < 0) throw new ComputePullFromWhereError(`Found unexpected result ${result}`);
  return result;
}
