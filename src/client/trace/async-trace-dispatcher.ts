/**
 * RocketMQ's AsyncTraceDispatcher: trace records are queued by the message path and sent later, in
 * batches, as messages of the trace topic. The message path only appends: a full queue drops the record
 * and counts it, so tracing never blocks or fails a send or a consume. Records are encoded and grouped
 * off the message path, a batch leaves when it holds `batchSize` records, when its text nears
 * `maxMsgSize`, or when its first record has waited `waitTimeThresholdMs`; a batch that cannot be sent
 * (no trace topic, a broker refusing writes, a send slower than `sendTimeoutMs`) is dropped and counted,
 * with one warning per dispatcher.
 */
import type { Clock, TimerHandle } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { encodeTraceContext, type TraceContext, type TraceTransfer } from './trace-codec.js';

/** Sends one trace message: its body and keys, within `timeoutMs`. */
export type TraceSend = (topic: string, body: Buffer, keys: readonly string[], timeoutMs: number) => Promise<void>;

/** What a dispatcher has done with the records given to it. */
export interface TraceStats {
  /** Records accepted into the queue. */
  appended: number;
  /** Records in trace messages the broker stored. */
  sent: number;
  /** Records dropped: the queue was full, the send failed or timed out, or the client shut down first. */
  dropped: number;
  /** Records accepted and neither sent nor dropped yet. */
  pending: number;
}

export interface AsyncTraceDispatcherOptions {
  traceTopic: string;
  send: TraceSend;
  logger: Logger;
  clock: Clock;
  /** Records waiting to be batched (RocketMQ: traceContextQueue, 1024). */
  queueSize?: number;
  /** Records per trace message at most (RocketMQ: batchSize, 100). */
  batchSize?: number;
  /** The trace message's size bound; a batch leaves 10 000 characters before it (RocketMQ: maxMsgSize). */
  maxMsgSize?: number;
  /** How long a batch's first record may wait (RocketMQ: waitTimeThresholdMil, 500 ms). */
  waitTimeThresholdMs?: number;
  /** How often queued records are batched (RocketMQ: pollingTimeMil, 100 ms). */
  pollingMs?: number;
  /** Trace messages in flight at once (RocketMQ's trace executor: 20 threads). */
  maxInFlight?: number;
  /** Batches waiting for a free send; more are dropped. */
  maxWaitingBatches?: number;
  /** A trace send's deadline (RocketMQ's trace producer: sendMsgTimeout 5000). */
  sendTimeoutMs?: number;
}

interface Batch {
  transfers: TraceTransfer[];
  records: number;
  /** Counted as sent or dropped: a send abandoned at close and ending later changes nothing. */
  settled?: boolean;
}

export class AsyncTraceDispatcher {
  readonly traceTopic: string;
  readonly #o: Required<Omit<AsyncTraceDispatcherOptions, 'traceTopic'>>;
  /** Contexts appended and not yet encoded. */
  #queue: TraceContext[] = [];
  /** The batch being filled, and when its first record came. */
  #segment: Batch = { transfers: [], records: 0 };
  #segmentSize = 0;
  #segmentFirstAt = 0;
  readonly #waiting: Batch[] = [];
  readonly #inFlight = new Map<Promise<void>, Batch>();
  #timer: TimerHandle | undefined;
  #closed = false;
  #warned = false;
  /** `rejected`: appends refused (full queue, closed); `lost`: accepted records dropped later. */
  readonly #stats = { appended: 0, sent: 0, rejected: 0, lost: 0 };

  constructor(o: AsyncTraceDispatcherOptions) {
    this.traceTopic = o.traceTopic;
    this.#o = {
      send: o.send,
      logger: o.logger,
      clock: o.clock,
      queueSize: o.queueSize ?? 1024,
      batchSize: o.batchSize ?? 100,
      maxMsgSize: o.maxMsgSize ?? 128_000,
      waitTimeThresholdMs: o.waitTimeThresholdMs ?? 500,
      pollingMs: o.pollingMs ?? 100,
      maxInFlight: o.maxInFlight ?? 20,
      maxWaitingBatches: o.maxWaitingBatches ?? 64,
      sendTimeoutMs: o.sendTimeoutMs ?? 5000,
    };
  }

  /** Queues a record; false (and counted as dropped) when the queue is full or the dispatcher closed. */
  append(ctx: TraceContext): boolean {
    if (ctx.traceBeans.length === 0) return true;
    if (this.#closed || this.#queue.length >= this.#o.queueSize) {
      this.#stats.rejected++;
      this.#warn(this.#closed ? 'the client is shutting down' : 'the trace queue is full', undefined);
      return false;
    }
    this.#queue.push(ctx);
    this.#stats.appended++;
    this.#arm();
    return true;
  }

  stats(): TraceStats {
    const { appended, sent, rejected, lost } = this.#stats;
    return { appended, sent, dropped: rejected + lost, pending: appended - sent - lost };
  }

  /**
   * Sends what is queued and waits for the sends in flight, at most `timeoutMs`; records still unsent
   * then are dropped and counted. Appends after close are dropped.
   */
  async close(timeoutMs = 3000): Promise<void> {
    this.#closed = true;
    if (this.#timer !== undefined) this.#o.clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#batchQueued();
    this.#ship();
    const { clock } = this.#o;
    const deadline = clock.now() + timeoutMs;
    while (this.#inFlight.size > 0 || this.#waiting.length > 0) {
      const left = deadline - clock.now();
      if (left <= 0) break;
      let timer: TimerHandle | undefined;
      const timedOut = new Promise<void>((resolve) => {
        timer = clock.setTimeout(resolve, left);
      });
      await Promise.race([Promise.race(this.#inFlight.keys()), timedOut]);
      if (timer !== undefined) clock.clearTimeout(timer);
    }
    // What could not leave in time is counted as dropped, so that once closed nothing is pending.
    const late = [...this.#waiting.splice(0), ...this.#inFlight.values()];
    for (const b of late) this.#settle(b, false);
    if (late.length > 0) this.#warn('the client shut down before every trace record was sent', undefined);
  }

  #settle(batch: Batch, sent: boolean): void {
    if (batch.settled) return;
    batch.settled = true;
    if (sent) this.#stats.sent += batch.records;
    else this.#stats.lost += batch.records;
  }

  #arm(): void {
    if (this.#timer !== undefined || this.#closed) return;
    this.#timer = this.#o.clock.setTimeout(() => {
      this.#timer = undefined;
      this.#tick();
    }, this.#o.pollingMs);
  }

  /** RocketMQ: AsyncRunnable.run — batch what is queued, ship batches that are full or old enough. */
  #tick(): void {
    this.#batchQueued();
    if (this.#segment.records > 0 && this.#o.clock.now() - this.#segmentFirstAt >= this.#o.waitTimeThresholdMs)
      this.#cut();
    this.#ship();
    if (this.#segment.records > 0 || this.#queue.length > 0) this.#arm();
  }

  #batchQueued(): void {
    const queue = this.#queue;
    this.#queue = [];
    for (const ctx of queue) {
      const t = encodeTraceContext(ctx);
      if (this.#segment.records === 0) this.#segmentFirstAt = this.#o.clock.now();
      this.#segment.transfers.push(t);
      this.#segment.records++;
      this.#segmentSize += t.data.length;
      if (this.#segment.records >= this.#o.batchSize || this.#segmentSize >= this.#o.maxMsgSize - 10_000) this.#cut();
    }
    if (this.#closed && this.#segment.records > 0) this.#cut();
  }

  #cut(): void {
    const batch = this.#segment;
    this.#segment = { transfers: [], records: 0 };
    this.#segmentSize = 0;
    if (this.#waiting.length >= this.#o.maxWaitingBatches) {
      this.#settle(batch, false);
      this.#warn('too many trace messages wait for the broker', undefined);
      return;
    }
    this.#waiting.push(batch);
    this.#ship();
  }

  #ship(): void {
    while (this.#inFlight.size < this.#o.maxInFlight) {
      const batch = this.#waiting.shift();
      if (!batch) return;
      const p = this.#sendBatch(batch);
      this.#inFlight.set(p, batch);
      void p.then(() => {
        this.#inFlight.delete(p);
        this.#ship();
      });
    }
  }

  /** RocketMQ: AsyncDataSendTask — one trace message; never rejects. */
  async #sendBatch(batch: Batch): Promise<void> {
    const keys = new Set<string>();
    let data = '';
    for (const t of batch.transfers) {
      for (const k of t.keys) keys.add(k);
      data += t.data;
    }
    const { clock, sendTimeoutMs } = this.#o;
    let timer: TimerHandle | undefined;
    try {
      // A sender that never settles must not hold its slot: the deadline frees it.
      const late = new Promise<never>((_, reject) => {
        timer = clock.setTimeout(
          () => reject(new Error(`trace send timed out after ${sendTimeoutMs} ms`)),
          sendTimeoutMs + 1000,
        );
      });
      await Promise.race([
        (async () => this.#o.send(this.traceTopic, Buffer.from(data, 'utf8'), [...keys], sendTimeoutMs))(),
        late,
      ]);
      this.#settle(batch, true);
    } catch (err) {
      if (!batch.settled) this.#warn(`sending trace records to ${this.traceTopic} failed`, err);
      this.#settle(batch, false);
    } finally {
      if (timer !== undefined) clock.clearTimeout(timer);
    }
  }

  /** The first problem is a warning; the rest are debug lines (the counts are in `stats()`). */
  #warn(what: string, err: unknown): void {
    const fields = { err, traceTopic: this.traceTopic, dropped: this.stats().dropped };
    if (this.#warned) {
      this.#o.logger.debug(fields, `${what}: trace records dropped`);
      return;
    }
    this.#warned = true;
    this.#o.logger.warn(fields, `${what}: trace records dropped (warned once; see traceStats())`);
  }
}
