/**
 * RemoteBrokerOffsetStore (CLUSTERING; RocketMQ's RemoteBrokerOffsetStore): offsets live
 * in memory and on the broker. Updates only move forward (`increaseOnly` from the consume path); the
 * broker copy is written every 5 s (persistAll) and on queue removal (persist), and also rides on each
 * pull (commit-offset flag). Those writes are oneway, as RocketMQ's updateConsumerOffsetOneway: a
 * rebalance that drops a hundred queues, or the periodic write of a thousand, waits for no answer, and
 * a write that fails is simply sent again by the next persist. The periodic write leaves out offsets
 * that have not moved since they were sent (each is sent again after `UNCHANGED_OFFSET_RESEND_MS`). Where the caller must know the broker
 * has the offsets (shutdown, a lite pull `commit()`, releasing an orderly queue's lock) `flushAll` and
 * `flush` await the answers, a bounded number at a time.
 *
 * Offset reads (QUERY_CONSUMER_OFFSET, at a rebalance) are bounded too: at most
 * `OFFSET_CALL_CONCURRENCY` per store at once, so a consumer that gets a thousand queues does not
 * send a thousand queries in one burst.
 */
import type { Logger } from '../../common/logger.js';
import type { MessageQueue } from '../../common/message.js';
import { messageQueueKey } from '../../common/message.js';
import PQueue from 'p-queue';
import { OFFSET_NOT_FOUND, OFFSET_READ_ERROR, OffsetTableStore, type OffsetPersistedEvent } from './offset-store.js';

/** The broker calls the store needs; the push consumer adapts MQClientAPI/MQClientInstance to it. */
export interface RemoteOffsetBackend {
  /** QUERY_CONSUMER_OFFSET to the queue's master: the offset, or -1 on QUERY_NOT_FOUND; throws otherwise. */
  queryConsumerOffset(mq: MessageQueue): Promise<number>;
  /**
   * UPDATE_CONSUMER_OFFSET to the queue's master. `oneway`: sent without waiting for an answer (resolves
   * once the transport is done with it: written on TCP, answered over HTTP, never rejecting on a failure
   * of the call itself); otherwise resolves when the broker accepted it.
   */
  updateConsumerOffset(mq: MessageQueue, offset: number, oneway: boolean): Promise<void>;
}

/** Awaited offset calls (reads, flushed writes) one store has in flight at most. */
export const OFFSET_CALL_CONCURRENCY = 32;

/**
 * The periodic persistAll skips a queue whose offset has not moved since it was last sent, unless that
 * was this long ago, ms: a consumer holding a thousand mostly idle queues does not send a thousand
 * unchanged offsets every 5 s, and a broker that lost one (restarted from an older file) still gets it.
 */
export const UNCHANGED_OFFSET_RESEND_MS = 60_000;

export class RemoteBrokerOffsetStore extends OffsetTableStore {
  /** Bounds the awaited calls (offset reads, flushed writes); oneway writes do not wait for it. */
  readonly #gate = new PQueue({ concurrency: OFFSET_CALL_CONCURRENCY });
  /** Per queue key: the offset last sent and when. */
  readonly #sent = new Map<string, { offset: number; at: number }>();
  /**
   * Per queue key: the writes still on their way. A flushed (final) write waits for them, so an older
   * offset sent earlier cannot reach the broker after it (over HTTP writes travel on several connections).
   */
  readonly #writing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly backend: RemoteOffsetBackend,
    private readonly logger: Logger,
    private readonly onPersisted: (e: OffsetPersistedEvent) => void = () => {},
    private readonly onPersistError: (mq: MessageQueue, err: unknown) => void = () => {},
    private readonly now: () => number = Date.now,
  ) {
    super();
  }

  async load(): Promise<void> {
    // RocketMQ: nothing to load; offsets are read from the broker per queue.
  }

  protected async readOffsetFromStore(mq: MessageQueue): Promise<number> {
    try {
      const brokerOffset = await this.#gate.add(() => this.backend.queryConsumerOffset(mq));
      if (brokerOffset < 0) return OFFSET_NOT_FOUND;
      // RocketMQ: a successful store read also caches the value (overwrite).
      this.table.update(mq, brokerOffset, false);
      return brokerOffset;
    } catch (err) {
      this.logger.warn({ err, mq }, 'QUERY_CONSUMER_OFFSET failed');
      return OFFSET_READ_ERROR;
    }
  }

  /** RocketMQ: persistAll — every offset of `mqs` sent oneway; cached queues not in `mqs` are forgotten. */
  async persistAll(mqs: readonly MessageQueue[]): Promise<void> {
    const now = this.now();
    const changed = this.#select(mqs).filter((e) => {
      const last = this.#sent.get(messageQueueKey(e.mq));
      return !last || last.offset !== e.offset || now - last.at >= UNCHANGED_OFFSET_RESEND_MS;
    });
    await Promise.all(changed.map((e) => this.send(e.mq, e.offset, true)));
  }

  /** RocketMQ: persist — the queue's offset sent oneway. */
  async persist(mq: MessageQueue): Promise<void> {
    const c = this.table.get(mq);
    if (c) await this.send(mq, c.offset, true);
  }

  /**
   * persistAll, resolving once the broker answered each write (at most OFFSET_CALL_CONCURRENCY at once),
   * with the queues whose write failed.
   */
  async flushAll(mqs: readonly MessageQueue[]): Promise<MessageQueue[]> {
    const entries = this.#select(mqs);
    const stored = await Promise.all(entries.map((e) => this.#gate.add(() => this.send(e.mq, e.offset, false))));
    return entries.filter((_, i) => !stored[i]).map((e) => e.mq);
  }

  /** persist, resolving once the broker answered: `false` when the write failed (nothing cached: `true`). */
  async flush(mq: MessageQueue): Promise<boolean> {
    const c = this.table.get(mq);
    return c ? this.#gate.add(() => this.send(mq, c.offset, false)) : true;
  }

  removeOffset(mq: MessageQueue): void {
    this.table.remove(mq);
    this.#sent.delete(messageQueueKey(mq));
  }

  /** The cached offsets of `mqs`; cached queues not in `mqs` are forgotten (RocketMQ's persistAll). */
  #select(mqs: readonly MessageQueue[]): { mq: MessageQueue; offset: number }[] {
    const wanted = new Set(mqs.map(messageQueueKey));
    const out: { mq: MessageQueue; offset: number }[] = [];
    for (const [key, e] of [...this.table.entries]) {
      if (wanted.has(key)) out.push({ mq: e.mq, offset: e.offset.offset });
      else {
        this.table.deleteKey(key);
        this.#sent.delete(key);
      }
    }
    return out;
  }

  /**
   * Never rejects: resolves `false` when the update failed (logged and reported; the next persist sends
   * it again). A two-way (flushed) write is sent after the queue's earlier writes have settled.
   */
  private send(mq: MessageQueue, offset: number, oneway: boolean): Promise<boolean> {
    const key = messageQueueKey(mq);
    const earlier = this.#writing.get(key);
    const write =
      !oneway && earlier ? earlier.then(() => this.#write(mq, offset, oneway)) : this.#write(mq, offset, oneway);
    const all = earlier ? Promise.all([earlier, write]) : write;
    this.#writing.set(key, all);
    void all.then(() => {
      if (this.#writing.get(key) === all) this.#writing.delete(key);
    });
    return write;
  }

  async #write(mq: MessageQueue, offset: number, oneway: boolean): Promise<boolean> {
    try {
      await this.backend.updateConsumerOffset(mq, offset, oneway);
      this.#sent.set(messageQueueKey(mq), { offset, at: this.now() });
      this.onPersisted({ messageQueue: mq, offset });
      return true;
    } catch (err) {
      this.logger.warn({ err, mq, offset }, 'UPDATE_CONSUMER_OFFSET failed');
      this.onPersistError(mq, err);
      return false;
    }
  }
}
