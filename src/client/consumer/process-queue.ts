/**
 * ProcessQueue: the messages of one queue that have been pulled and not yet consumed, ordered by
 * queue offset (RocketMQ's ProcessQueue over a TreeMap). The committed offset of a queue
 * is always derived from it: the smallest offset still in flight, or `queueOffsetMax + 1` when none
 * is — so a crash re-delivers, it never skips.
 *
 * Offsets arrive in increasing order (one pull in flight per queue), so the messages are kept in two
 * aligned arrays, ascending offsets and their messages, with removed entries left as holes and
 * skipped lazily at both ends; a lookup is a binary search from the head, and an out-of-order insert
 * (never expected) a sorted splice. Not a Map: at a drain's rate of inserts and deletes a Map is
 * rehashed over and over, and a replaced table that has reached the old generation keeps pointing at
 * its successor, so every later table and the messages in it survive young collections until the
 * next full GC (the mechanism SlotSet describes), which makes a drain's collections far heavier.
 *
 * A message may be held raw, as its pull answer (`putBatch`): it is decoded when it is first asked
 * for (`handOut`, `messagesAfter`, `firstMessage`), so a message waiting behind a slow listener costs
 * no object of its own, and the one handed out dies young.
 * @pure
 */
import { MessageConst, type MessageExt } from '../../common/message.js';
import { lowerBound, PulledBatch } from './pulled-batch.js';

/** RocketMQ: ProcessQueue.PULL_MAX_IDLE_TIME — a queue not pulled for this long is re-created. */
export const PULL_MAX_IDLE_TIME_MS = 120_000;

/**
 * RocketMQ: ProcessQueue.REBALANCE_LOCK_MAX_LIVE_TIME — an orderly queue whose broker lock was not
 * confirmed for this long is not consumed (the broker frees it 60 s after the last renewal).
 */
export const REBALANCE_LOCK_MAX_LIVE_TIME_MS = 30_000;

const noop = (): void => undefined;

/** RocketMQ: cleanExpiredMsg looks at most at this many head messages per run. */
const CLEAN_EXPIRED_MAX_PER_RUN = 16;

export class ProcessQueue {
  /** Ascending offsets; entries before `head` are stale. */
  private offsets: number[] = [];
  /** The message at the same index of `offsets`, or its pull answer while not decoded; undefined once removed. */
  private entries: (MessageExt | PulledBatch | undefined)[] = [];
  /** The body length counted in `msgSize` for the entry at the same index. */
  private sizes: number[] = [];
  private head = 0;

  /** Number of messages held. */
  msgCount = 0;
  /**
   * Sum of the body lengths of the messages held (RocketMQ counts bodies only). A message held raw
   * counts its body as stored (compressed, if it was sent so): the bytes it takes while it waits.
   */
  msgSize = 0;
  /** Largest queue offset ever put; 0 before the first put (Java's 0L default), when nothing reads it. */
  queueOffsetMax = 0;
  /** Backlog behind the last pulled message (MAX_OFFSET property − its offset). */
  msgAccCnt = 0;
  /** Set when the queue was taken away (rebalance, offset illegal, shutdown); never cleared. */
  dropped = false;
  /**
   * Concurrent consumption, a queue being handed over by a rebalance: dropped, but the listener calls
   * still running for it count (their offsets move) until its final offset is written.
   */
  handingOver = false;
  /** Concurrent consumption: listener calls running for this queue's messages. */
  listenerCalls = 0;
  #listenersIdle: (() => void)[] = [];
  consuming = false;
  /** Orderly consumption: this client holds the queue's broker lock (set at lock, renewed every 20 s). */
  locked = false;
  /** When the broker last confirmed the lock. */
  lastLockTimestamp = 0;
  lastPullTimestamp: number;
  lastConsumeTimestamp: number;
  /** The pull of this queue on its way to the broker, if any: aborted and awaited by `settlePull()`. */
  pullInFlight: { abort: AbortController; call: Promise<unknown> } | undefined;
  /**
   * The controller whose signal this queue's pulls carry, kept from pull to pull until it is aborted:
   * one per queue, not one (and a combined signal) per pull.
   */
  pullAbort: AbortController | undefined;

  constructor(now: number) {
    this.lastPullTimestamp = now;
    this.lastConsumeTimestamp = now;
  }

  /** A listener call for this queue's messages ended (concurrent consumption). */
  listenerCallEnded(): void {
    if (--this.listenerCalls > 0 || this.#listenersIdle.length === 0) return;
    const waiters = this.#listenersIdle;
    this.#listenersIdle = [];
    for (const resolve of waiters) resolve();
  }

  /** Resolves when no listener call is running for this queue's messages (concurrent consumption). */
  whenListenersIdle(): Promise<void> {
    if (this.listenerCalls === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#listenersIdle.push(resolve));
  }

  /** RocketMQ: isLockExpired — the lock was not confirmed for more than `maxLiveMs` (default 30 s). */
  isLockExpired(now: number, maxLiveMs = REBALANCE_LOCK_MAX_LIVE_TIME_MS): boolean {
    return now - this.lastLockTimestamp > maxLiveMs;
  }

  /**
   * Aborts the pull on its way, if any, and resolves once it has settled. An orderly queue being given up
   * calls it before its final offset is persisted: an older pull carries an older offset to commit, and
   * must not reach the broker after the final one.
   */
  async settlePull(): Promise<void> {
    const p = this.pullInFlight;
    if (!p) return;
    p.abort.abort();
    await p.call.then(noop, noop);
  }

  /** RocketMQ: isPullExpired — no pull for more than 120 s. */
  isPullExpired(now: number): boolean {
    return now - this.lastPullTimestamp > PULL_MAX_IDLE_TIME_MS;
  }

  /**
   * RocketMQ: putMessage — inserts by queue offset; a new offset counts once (count, body size,
   * queueOffsetMax). Returns `dispatchToConsume` (only the orderly service uses it).
   */
  putMessage(list: readonly MessageExt[]): boolean {
    let validMsgCnt = 0;
    for (const msg of list) {
      const size = msg.body?.length ?? 0;
      if (!this.insert(msg.queueOffset, msg, size)) continue;
      validMsgCnt++;
      this.queueOffsetMax = msg.queueOffset;
      this.msgSize += size;
    }
    const last = list[list.length - 1];
    const max = last?.properties?.[MessageConst.MAX_OFFSET];
    return this.afterPut(validMsgCnt, max === undefined ? undefined : Number(max) - (last as MessageExt).queueOffset);
  }

  /**
   * `putMessage` for the messages of a pull answer kept raw: they count (offsets, stored body bytes)
   * as decoded ones would, and are decoded when first asked for.
   */
  putBatch(batch: PulledBatch): boolean {
    let validMsgCnt = 0;
    const n = batch.count;
    for (let i = 0; i < n; i++) {
      const off = batch.offsetAt(i);
      const size = batch.bodySizeAt(i);
      if (!this.insert(off, batch, size)) continue;
      validMsgCnt++;
      this.queueOffsetMax = off;
      this.msgSize += size;
    }
    return this.afterPut(validMsgCnt, n === 0 ? undefined : batch.maxOffset - batch.offsetAt(n - 1));
  }

  private afterPut(validMsgCnt: number, accTotal: number | undefined): boolean {
    this.msgCount += validMsgCnt;
    let dispatchToConsume = false;
    if (this.msgCount > 0 && !this.consuming) {
      dispatchToConsume = true;
      this.consuming = true;
    }
    if (accTotal !== undefined && accTotal > 0) this.msgAccCnt = accTotal;
    return dispatchToConsume;
  }

  /**
   * The held message at `offset`, decoded now if it was held raw; undefined when it is not held
   * (removed, or its queue cleared).
   */
  handOut(offset: number): MessageExt | undefined {
    const i = this.indexOf(offset);
    return i < 0 ? undefined : this.materialize(i);
  }

  /** The message at index `i`, decoding it (once) if it is held raw. */
  private materialize(i: number): MessageExt | undefined {
    const e = this.entries[i];
    if (!(e instanceof PulledBatch)) return e;
    const msg = e.decode(this.offsets[i] as number);
    this.entries[i] = msg;
    return msg;
  }

  /**
   * RocketMQ: removeMessage — the offset to commit after `list` is done: -1 when the queue held
   * nothing, else the smallest offset still held, or `queueOffsetMax + 1` when none is left.
   */
  removeMessage(list: readonly MessageExt[], now: number): number {
    let result = -1;
    this.lastConsumeTimestamp = now;
    if (this.msgCount === 0) return result;
    result = this.queueOffsetMax + 1;
    let removed = 0;
    for (const msg of list) {
      const i = this.indexOf(msg.queueOffset);
      if (i < 0 || this.entries[i] === undefined) continue;
      this.entries[i] = undefined;
      removed++;
      this.msgSize -= this.sizes[i] as number;
    }
    this.msgCount -= removed;
    if (this.msgCount === 0) this.msgSize = 0;
    const first = this.firstKey();
    if (first !== undefined) result = first;
    return result;
  }

  /** RocketMQ: getMaxSpan — lastKey − firstKey of the held messages, 0 when empty. */
  getMaxSpan(): number {
    const first = this.firstKey();
    const last = this.lastKey();
    return first === undefined || last === undefined ? 0 : last - first;
  }

  containsMessage(msg: MessageExt): boolean {
    const i = this.indexOf(msg.queueOffset);
    return i >= 0 && this.entries[i] !== undefined;
  }

  /** Smallest held offset, or undefined when empty. */
  firstKey(): number | undefined {
    return this.skipHead() ? this.offsets[this.head] : undefined;
  }

  /** Largest held offset, or undefined when empty. */
  lastKey(): number | undefined {
    while (this.offsets.length > this.head) {
      if (this.entries[this.entries.length - 1] !== undefined) return this.offsets[this.offsets.length - 1];
      this.offsets.pop();
      this.entries.pop();
      this.sizes.pop();
    }
    return undefined;
  }

  /** The message with the smallest offset, or undefined. */
  firstMessage(): MessageExt | undefined {
    return this.skipHead() ? this.materialize(this.head) : undefined;
  }

  /**
   * Up to `max` held messages whose offset is above `offset`, in offset order (orderly consumption
   * takes its next batch after the messages it has taken and not yet committed).
   */
  messagesAfter(offset: number, max: number): MessageExt[] {
    const out: MessageExt[] = [];
    for (let i = this.lowerBound(offset + 1); i < this.offsets.length && out.length < max; i++) {
      const m = this.materialize(i);
      if (m !== undefined) out.push(m);
    }
    return out;
  }

  /** Empties the queue (RocketMQ: clear, used when a queue is dropped for good). */
  clear(): void {
    this.offsets = [];
    this.entries = [];
    this.sizes = [];
    this.head = 0;
    this.msgCount = 0;
    this.msgSize = 0;
    this.queueOffsetMax = 0;
  }

  /**
   * RocketMQ: cleanExpiredMsg (concurrent consumption only) — looks at up to 16 head messages; a head
   * whose CONSUME_START_TIME is older than `consumeTimeoutMs` is sent back (delay level 3 by the
   * caller's `sendBack`) and then removed if it is still the head. A head not yet being consumed (no
   * start time) or not expired ends the run. `sendBack` failures end the run too (RocketMQ logs them).
   * Returns the messages removed.
   */
  async cleanExpiredMsg(
    consumeTimeoutMs: number,
    now: () => number,
    sendBack: (msg: MessageExt) => Promise<void>,
  ): Promise<MessageExt[]> {
    const removed: MessageExt[] = [];
    const loop = Math.min(this.msgCount, CLEAN_EXPIRED_MAX_PER_RUN);
    for (let i = 0; i < loop && !this.dropped; i++) {
      // A head still held raw has not been handed out, so it has no start time: it ends the run.
      if (!this.skipHead() || this.entries[this.head] instanceof PulledBatch) break;
      const msg = this.firstMessage();
      if (!msg) break;
      const start = msg.properties?.[MessageConst.CONSUME_START_TIME];
      if (!start || !(now() - Number(start) > consumeTimeoutMs)) break;
      try {
        await sendBack(msg);
      } catch {
        break;
      }
      if (this.firstKey() === msg.queueOffset) {
        this.removeMessage([msg], now());
        removed.push(msg);
      }
    }
    return removed;
  }

  /** Moves `head` past removed entries; false (and the arrays reset) when nothing is held. */
  private skipHead(): boolean {
    while (this.head < this.offsets.length) {
      if (this.entries[this.head] !== undefined) return true;
      this.head++;
    }
    this.offsets = [];
    this.entries = [];
    this.sizes = [];
    this.head = 0;
    return false;
  }

  /** Index of `off` in `offsets` at or after `head`, or -1. */
  private indexOf(off: number): number {
    const i = this.lowerBound(off);
    return i < this.offsets.length && this.offsets[i] === off ? i : -1;
  }

  /** First index at or after `head` whose offset is >= `off`. */
  private lowerBound(off: number): number {
    return lowerBound(this.offsets, off, this.head);
  }

  /**
   * Puts `entry` at `off`; true when the offset was not held (a held one is replaced, and keeps the
   * body size it was counted with).
   */
  private insert(off: number, entry: MessageExt | PulledBatch, size: number): boolean {
    const n = this.offsets.length;
    if (n === this.head || (this.offsets[n - 1] as number) < off) {
      this.offsets.push(off);
      this.entries.push(entry);
      this.sizes.push(size);
    } else {
      const i = this.lowerBound(off);
      if (this.offsets[i] === off) {
        const had = this.entries[i] !== undefined;
        this.entries[i] = entry;
        if (!had) this.sizes[i] = size;
        return !had;
      }
      this.offsets.splice(i, 0, off);
      this.entries.splice(i, 0, entry);
      this.sizes.splice(i, 0, size);
    }
    // Drop the consumed prefix now and then so the arrays do not grow without bound. In place: new
    // arrays would be promoted with the queue, and each copy left behind would wait for a full GC.
    if (this.head > 1024 && this.head * 2 > this.offsets.length) {
      this.offsets.splice(0, this.head);
      this.entries.splice(0, this.head);
      this.sizes.splice(0, this.head);
      this.head = 0;
    }
    return true;
  }
}
