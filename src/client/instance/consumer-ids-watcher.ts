/**
 * Membership news over HTTP. RocketMQ's broker pushes NOTIFY_CONSUMER_IDS_CHANGED down the client's TCP
 * connection when a member of a group joins or leaves; over HTTP the client asks instead: for every
 * CLUSTERING consumer group with subscriptions, and every master broker it knows, it holds one
 * WATCH_CONSUMER_IDS call (answered by the broker as soon as the group's membership version changes,
 * or after the hold). A changed version calls `onChange` (the instance's rebalanceImmediately), so
 * members learn of joins and leaves within a second instead of on the 20 s rebalance timer.
 *
 * One loop per (group, broker): bounded by the hold, aborted at shutdown or when the group or broker
 * goes away. The next watch follows an answer at once: the broker evicts a member whose watch is not
 * renewed within its grace time (3 s by default). On errors the loop backs off, doubling from 200 ms to
 * 10 s. After an error the known version is forgotten and the next answer counts as a change (members
 * may have come or gone meanwhile). An answer whose list lacks this client calls `onNotMember`.
 */
import { delay, type Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { MQClientAPI } from './mq-client-api.js';

export interface ConsumerIdsWatcherOptions {
  api: MQClientAPI;
  clientId: string;
  /** How long the broker may hold one watch, ms. */
  holdMs: number;
  clock: Clock;
  logger: Logger;
  /** The membership of `group` changed (seen on broker `addr`). */
  onChange(group: string, addr: string, consumerIdList: string[]): void;
  /**
   * The broker's member list does not hold this client (it was evicted, or has not heartbeated yet):
   * the owner should send a heartbeat at once (docs/protocol.md, "Membership news").
   */
  onNotMember?(group: string, addr: string): void;
  /** A watch failed (reported, then retried after a back-off). */
  onError?(group: string, addr: string, err: unknown): void;
}

const MIN_BACKOFF_MS = 200;
const MAX_BACKOFF_MS = 10_000;
/** Pause after an answer that the broker should have held (kept below the broker's renew grace). */
const FAST_ANSWER_PAUSE_MS = 200;
/** An answer faster than this with an unchanged version means the broker is not holding: slow down. */
const FAST_ANSWER_MS = 50;

interface Watch {
  controller: AbortController;
  done: Promise<void>;
}

export class ConsumerIdsWatcher {
  readonly #o: ConsumerIdsWatcherOptions;
  readonly #watches = new Map<string, Watch>();
  #stopped = false;

  constructor(options: ConsumerIdsWatcherOptions) {
    this.#o = options;
  }

  /** Number of watch loops running (for tests and diagnostics). */
  get size(): number {
    return this.#watches.size;
  }

  /** Makes the running loops exactly one per (group, broker address) of the arguments. */
  sync(groups: Iterable<string>, brokerAddrs: Iterable<string>): void {
    if (this.#stopped) return;
    const addrs = [...new Set(brokerAddrs)];
    const wanted = new Map<string, [string, string]>();
    for (const g of new Set(groups)) for (const a of addrs) wanted.set(`${g}\u0000${a}`, [g, a]);
    for (const [key, w] of this.#watches) {
      if (!wanted.has(key)) {
        w.controller.abort();
        this.#watches.delete(key);
      }
    }
    for (const [key, [group, addr]] of wanted) {
      if (this.#watches.has(key)) continue;
      const controller = new AbortController();
      const done = this.#loop(group, addr, controller.signal);
      this.#watches.set(key, { controller, done });
    }
  }

  /** Aborts every held watch and waits for the loops to end. Idempotent. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    const all = [...this.#watches.values()];
    this.#watches.clear();
    for (const w of all) w.controller.abort();
    await Promise.allSettled(all.map((w) => w.done));
  }

  async #loop(group: string, addr: string, signal: AbortSignal): Promise<void> {
    const { api, clientId, holdMs, clock, logger } = this.#o;
    let version = -1;
    let changedSinceError = false;
    let backoff = MIN_BACKOFF_MS;
    while (!signal.aborted) {
      const startedAt = clock.now();
      try {
        const r = await api.watchConsumerIds(addr, group, clientId, version, holdMs, signal);
        if (signal.aborted) return;
        const changed = (version !== -1 && r.version !== version) || changedSinceError;
        const fastSame = version !== -1 && r.version === version && clock.now() - startedAt < FAST_ANSWER_MS;
        version = r.version;
        changedSinceError = false;
        backoff = MIN_BACKOFF_MS;
        if (!r.consumerIdList.includes(clientId)) this.#o.onNotMember?.(group, addr);
        if (changed) this.#o.onChange(group, addr, r.consumerIdList);
        if (fastSame) await delay(FAST_ANSWER_PAUSE_MS, signal, clock);
      } catch (err) {
        if (signal.aborted) return;
        logger.debug({ err, group, addr }, 'membership watch failed');
        try {
          this.#o.onError?.(group, addr, err);
        } catch {
          // A failing error report must not end the loop.
        }
        version = -1;
        changedSinceError = true;
        try {
          await delay(backoff, signal, clock);
        } catch {
          return;
        }
        backoff = Math.min(backoff * 2, MAX_BACKOFF_MS);
      }
    }
  }
}
