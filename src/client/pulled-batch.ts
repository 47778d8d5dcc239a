/**
 * One pull answer kept raw until its messages are handed out. At pull time the records are only
 * indexed (queue offset, position, stored body length; tags re-checked when the subscription names
 * some) and copied into pooled memory; each message is decoded when it is handed to the listener or
 * a poll. Decoded messages then live for the time of their consumption only and die young, where a
 * message decoded at pull time waits seconds behind a slow listener and is promoted to V8's old
 * generation, to be freed only by a full collection.
 *
 * A handed-out message is a copy of its own (body included): it may be kept forever. The answer's
 * memory goes back to the pool when its last message has been decoded. A record whose body cannot be
 * decoded (e.g. flagged compressed but not inflatable) is handed out as stored, its `DECODE_ERROR`
 * property saying why; a record whose header is corrupt fails the whole answer at indexing, as a
 * decode of the answer would.
 * @pure
 */
import { DecodeError } from '../common/errors.js';
import { MessageConst, type MessageExt, type MessageQueue } from '../common/message.js';
import { readInt64 } from '../common/codec/bytes.js';
import { checkRecordHeader, decodeMessage, decodeProperties, newLayout } from '../common/codec/index.js';
import { clientTagRecheck, type SubscriptionData } from '../filter/index.js';
import { pullBufferPool, type PullBufferPool } from './pull-buffer-pool.js';

/** The property (ours, not RocketMQ's) that flags a delivered message whose body could not be decoded, and says why. */
export const DECODE_ERROR_PROPERTY = 'DECODE_ERROR';

/** A stored message whose body could not be decoded (e.g. flagged compressed but not inflatable). */
export interface UndecodableMessage {
  /** The message as stored: its body is the stored bytes, not decompressed. */
  message: MessageExt;
  error: unknown;
}

const layout = newLayout();

/**
 * Decodes the record at `start`. When its body cannot be decoded, it is decoded again without
 * decompression and handed on flagged (its `DECODE_ERROR` property says why, its body is the stored
 * bytes), and `onUndecodable` is told; a corrupt header still throws DecodeError.
 */
export function decodeRecordTolerantly(
  raw: Buffer,
  start: number,
  onUndecodable: ((u: UndecodableMessage) => void) | undefined,
): { message: MessageExt; size: number } {
  try {
    return decodeMessage(raw, start);
  } catch (error) {
    const decoded = decodeMessage(raw, start, { decompressBody: false });
    const props = (decoded.message.properties ??= {});
    props[DECODE_ERROR_PROPERTY] = error instanceof Error ? error.message : String(error);
    onUndecodable?.({ message: decoded.message, error });
    return decoded;
  }
}

/**
 * Stamps a pulled message as RocketMQ's processPullResult does: MIN_OFFSET / MAX_OFFSET (creating the
 * properties when it has none), brokerName, queueId and, for `TRAN_MSG=true`, transactionId = UNIQ_KEY.
 */
export function stampPulledMessage(msg: MessageExt, mq: MessageQueue, minOffset: string, maxOffset: string): void {
  const props = (msg.properties ??= {});
  props[MessageConst.MIN_OFFSET] = minOffset;
  props[MessageConst.MAX_OFFSET] = maxOffset;
  msg.brokerName = mq.brokerName;
  msg.queueId = mq.queueId;
  if (props[MessageConst.TRAN_MSG] === 'true') {
    const uniq = props[MessageConst.UNIQ_KEY];
    if (uniq !== undefined) msg.transactionId = uniq;
  }
}

/** The first index at or after `from` of ascending `a` whose value is >= `value` (`a.length` when none is). */
export function lowerBound(a: readonly number[], value: number, from: number): number {
  let lo = from;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export class PulledBatch {
  /** Queue offsets of the kept records, ascending as the broker sent them. */
  readonly offsets: number[] = [];
  /** Stored body length of each kept record (flow control counts these bytes). */
  readonly bodySizes: number[] = [];
  /** Where each kept record starts in the answer; -1 once it was decoded. */
  readonly #starts: number[] = [];
  #left = 0;
  /** The pooled Buffer, and the answer's bytes in it (a view); both undefined once given back. */
  #pooled: Buffer | undefined;
  #raw: Buffer | undefined;
  readonly #minOffset: string;
  readonly #maxOffset: string;

  /**
   * Indexes a FOUND answer's `body` (PULL_MESSAGE's records) for `mq`, keeping the records whose tag
   * passes `subscription`'s exact re-check. Throws DecodeError when a record's header is corrupt.
   */
  constructor(
    readonly mq: MessageQueue,
    body: Buffer,
    minOffset: number,
    /** One past the queue's last offset when the broker answered. */
    readonly maxOffset: number,
    subscription: SubscriptionData,
    private readonly onUndecodable: ((u: UndecodableMessage) => void) | undefined,
    private readonly pool: PullBufferPool = pullBufferPool,
  ) {
    this.#minOffset = String(minOffset);
    this.#maxOffset = String(maxOffset);
    const recheck = subscription.tagsSet.length > 0 && !subscription.classFilterMode;
    let p = 0;
    while (p < body.length) {
      const reason = checkRecordHeader(body, p, layout);
      if (reason !== null) throw new DecodeError(`record at ${p}: ${reason}`, layout.errorPosition);
      if (!recheck || clientTagRecheck(subscription, decodeProperties(body, p)?.[MessageConst.TAGS])) {
        this.offsets.push(readInt64(body, p + 20));
        this.bodySizes.push(layout.bodyLength);
        this.#starts.push(p);
      }
      p += layout.totalSize;
    }
    this.#left = this.offsets.length;
    if (this.#left === 0) return;
    const pooled = pool.acquire(body.length);
    body.copy(pooled, 0, 0, body.length);
    this.#pooled = pooled;
    this.#raw = pooled.subarray(0, body.length);
  }

  /** Records kept. */
  get count(): number {
    return this.offsets.length;
  }

  /** Records not decoded yet. */
  get pending(): number {
    return this.#left;
  }

  /**
   * Decodes the kept record at `queueOffset` (each one once), stamped as RocketMQ's processPullResult
   * does: MIN_OFFSET / MAX_OFFSET, brokerName, queueId and, for `TRAN_MSG=true`, transactionId.
   */
  decode(queueOffset: number): MessageExt {
    const i = this.#indexOf(queueOffset);
    const raw = this.#raw;
    const start = i < 0 ? -1 : (this.#starts[i] as number);
    if (start < 0 || raw === undefined)
      throw new RangeError(`offset ${queueOffset} is not a pending record of this pull`);
    const msg = decodeRecordTolerantly(raw, start, this.onUndecodable).message;
    this.#starts[i] = -1;
    if (--this.#left === 0) {
      this.#raw = undefined;
      this.pool.release(this.#pooled as Buffer);
      this.#pooled = undefined;
    }
    stampPulledMessage(msg, this.mq, this.#minOffset, this.#maxOffset);
    return msg;
  }

  #indexOf(off: number): number {
    const a = this.offsets;
    const i = lowerBound(a, off, 0);
    return i < a.length && a[i] === off ? i : -1;
  }
}
