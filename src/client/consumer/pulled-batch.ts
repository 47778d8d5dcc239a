/**
 * One pull answer kept raw until its messages are handed out. At pull time the records are only
 * indexed (queue offset, position, and the body, topic and properties lengths; tags re-checked when
 * the subscription names some) and copied into pooled memory; each message is decoded when it is
 * handed to the listener or a poll, from that index, without walking its header again. Decoded
 * messages then live for the time of their consumption only and die young, where a message decoded
 * at pull time waits seconds behind a slow listener and is promoted to V8's old generation, to be
 * freed only by a full collection.
 *
 * A handed-out message is a copy of its own (body included): it may be kept forever. The answer's
 * memory goes back to the pool when its last message has been decoded. A record whose body cannot be
 * decoded (e.g. flagged compressed but not inflatable) is handed out as stored, its `DECODE_ERROR`
 * property saying why; a record whose header is corrupt fails the whole answer at indexing, as a
 * decode of the answer would.
 * @pure
 */
import { DecodeError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { MessageConst, type MessageExt, type MessageQueue } from '../../common/message.js';
import { readInt64 } from '../../common/codec/bytes.js';
import { checkRecordHeader, decodeLaidOut, decodeMessage } from '../../common/codec/decode.js';
import { layoutFromLengths, newLayout, type RecordLayout } from '../../common/codec/record-scan.js';
import { clientTagRecheck, type SubscriptionData } from '../../filter/index.js';
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

/** What `decodeRecordTolerantly` and `decodeLaidOutTolerantly` do when a body cannot be decoded. */
function flagUndecodable(
  message: MessageExt,
  error: unknown,
  mq: MessageQueue,
  onUndecodable: UndecodableListener | undefined,
): void {
  const props = (message.properties ??= {});
  props[DECODE_ERROR_PROPERTY] = error instanceof Error ? error.message : String(error);
  onUndecodable?.({ message, error }, mq);
}

/**
 * Decodes the record at `start`. When its body cannot be decoded, it is decoded again without
 * decompression and handed on flagged (its `DECODE_ERROR` property says why, its body is the stored
 * bytes), and `onUndecodable` is told; a corrupt header still throws DecodeError.
 */
export function decodeRecordTolerantly(
  raw: Buffer,
  start: number,
  mq: MessageQueue,
  onUndecodable: UndecodableListener | undefined,
): { message: MessageExt; size: number } {
  try {
    return decodeMessage(raw, start);
  } catch (error) {
    const decoded = decodeMessage(raw, start, { decompressBody: false });
    flagUndecodable(decoded.message, error, mq, onUndecodable);
    return decoded;
  }
}

const NO_DECOMPRESSION = Object.freeze({ decompressBody: false });

/** `decodeRecordTolerantly` for a record whose header was checked and laid out in `l`: no second scan. */
function decodeLaidOutTolerantly(
  raw: Buffer,
  start: number,
  l: RecordLayout,
  mq: MessageQueue,
  onUndecodable: UndecodableListener | undefined,
): MessageExt {
  try {
    return decodeLaidOut(raw, start, l);
  } catch (error) {
    const message = decodeLaidOut(raw, start, l, NO_DECOMPRESSION);
    flagUndecodable(message, error, mq, onUndecodable);
    return message;
  }
}

const reporters = new WeakMap<object, UndecodableListener>();

/**
 * What consumer `host` does with a message whose body cannot be decoded (it is delivered flagged): a
 * warning, then `also` (e.g. an event). One function per consumer, made on first use, not one per pull:
 * a raw answer keeps it for as long as it waits.
 */
export function undecodableReporter<H extends { readonly logger: Logger }>(
  host: H,
  also?: (host: H, u: UndecodableMessage, mq: MessageQueue) => void,
): UndecodableListener {
  let f = reporters.get(host);
  if (f === undefined) {
    f = (u, mq) => {
      host.logger.warn(
        { err: u.error, mq, queueOffset: u.message.queueOffset, msgId: u.message.msgId },
        'a stored message could not be decoded: delivered flagged with DECODE_ERROR',
      );
      also?.(host, u, mq);
    };
    reporters.set(host, f);
  }
  return f;
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

/**
 * The first index at or after `from` whose value is >= `value`, in ascending values laid out every
 * `stride` entries of `a` (entry `stride * i` is the value of index `i`); the number of indexes when
 * none is.
 */
export function lowerBound(a: readonly number[], value: number, from: number, stride = 1): number {
  let lo = from;
  let hi = Math.floor(a.length / stride);
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if ((a[stride * mid] as number) < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Filled while an answer is indexed, then copied to its exact size (no growth left behind). */
const scratch: number[] = [];

/** Told of a record whose body could not be decoded, with the queue it came from. */
export type UndecodableListener = (u: UndecodableMessage, mq: MessageQueue) => void;

/** Numbers kept per record in a PulledBatch's index (see `#meta`). */
const STRIDE = 5;

export class PulledBatch {
  /**
   * Five numbers per kept record, in the broker's (ascending offset) order: queue offset, start in the
   * answer (-1 once decoded), stored body length (flow control counts these bytes), topic length and
   * properties length: with the fixed-position fields they give the decoder the record's layout, so a
   * header is walked once, here. One array, not one per field or record: a batch waits long enough to
   * be promoted, and every object it holds with it.
   */
  readonly #meta: number[];
  #left: number;
  /** The pooled Buffer holding the answer's bytes from 0; undefined once given back. */
  #pooled: Buffer | undefined;
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
    private readonly onUndecodable: UndecodableListener | undefined,
    private readonly pool: PullBufferPool = pullBufferPool,
  ) {
    this.#minOffset = String(minOffset);
    this.#maxOffset = String(maxOffset);
    const recheck = subscription.tagsSet.length > 0 && !subscription.classFilterMode;
    const l = layout;
    scratch.length = 0;
    let p = 0;
    while (p < body.length) {
      const reason = checkRecordHeader(body, p, l);
      if (reason !== null) throw new DecodeError(`record at ${p}: ${reason}`, l.errorPosition);
      if (!recheck || clientTagRecheck(subscription, tagsOf(body, l)))
        scratch.push(readInt64(body, p + 20), p, l.bodyLength, l.topicLength, l.propsLength);
      p += l.totalSize;
    }
    this.#meta = scratch.slice();
    this.#left = this.#meta.length / STRIDE;
    if (this.#left === 0) return;
    // Decoding reads each (checked) record within its own length, so the Buffer may be longer.
    const pooled = pool.acquire(body.length);
    body.copy(pooled, 0, 0, body.length);
    this.#pooled = pooled;
  }

  /** Records kept. */
  get count(): number {
    return this.#meta.length / STRIDE;
  }

  /** The queue offset of the `i`-th kept record. */
  offsetAt(i: number): number {
    return this.#meta[STRIDE * i] as number;
  }

  /** The stored body length of the `i`-th kept record. */
  bodySizeAt(i: number): number {
    return this.#meta[STRIDE * i + 2] as number;
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
    const m = this.#meta;
    const i = this.#indexOf(queueOffset);
    const raw = this.#pooled;
    const k = STRIDE * i;
    const start = i < 0 ? -1 : (m[k + 1] as number);
    if (start < 0 || raw === undefined)
      throw new RangeError(`offset ${queueOffset} is not a pending record of this pull`);
    layoutFromLengths(raw, start, m[k + 2] as number, m[k + 3] as number, m[k + 4] as number, layout);
    const msg = decodeLaidOutTolerantly(raw, start, layout, this.mq, this.onUndecodable);
    m[k + 1] = -1;
    if (--this.#left === 0) {
      this.#pooled = undefined;
      this.pool.release(raw);
    }
    stampPulledMessage(msg, this.mq, this.#minOffset, this.#maxOffset);
    return msg;
  }

  /** The index of the kept record at queue offset `off`, or -1. */
  #indexOf(off: number): number {
    const i = lowerBound(this.#meta, off, 0, STRIDE);
    return this.#meta[STRIDE * i] === off ? i : -1;
  }
}

const T = 0x54;
const A = 0x41;
const G = 0x47;
const S = 0x53;

/**
 * The TAGS property of the record laid out in `l`, or undefined: what
 * `string2messageProperties(properties).TAGS` gives (entries split on 0x02, the key up to the entry's
 * first 0x01, an empty value ignored, a later duplicate winning), read from the bytes without building
 * the properties map. UTF-8 never uses the bytes 0x01 and 0x02 inside a character, so byte and
 * character boundaries agree on the separators.
 */
export function tagsOf(b: Buffer, l: RecordLayout): string | undefined {
  const end = l.propsStart + l.propsLength;
  let tags: string | undefined;
  let i = l.propsStart;
  while (i < end) {
    let e = i;
    while (e < end && b[e] !== 2) e++;
    if (e - i > 5 && b[i] === T && b[i + 1] === A && b[i + 2] === G && b[i + 3] === S && b[i + 4] === 1) {
      tags = b.toString('utf8', i + 5, e);
    }
    i = e + 1;
  }
  return tags;
}
