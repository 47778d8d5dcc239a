/**
 * The start-up of a push consumer after `start()` resolved: the membership settle (start-settle.ts),
 * the first rebalance pass after it, and the `ready` signal.
 *
 * `ready` resolves once the consumer holds its queues and each queue's first pull is out: after the
 * settle, the first rebalance pass that balanced every subscribed topic fixes the queues; each of them
 * must have started its first pull; then, per broker of those queues, the pulls must have left the
 * client and one more call to that broker must have been answered. Over TCP that call follows the
 * pulls on the same connection, so the broker has read them all (and holds those it has no messages
 * for) when it answers. Over HTTP each held pull has a connection of its own: the pulls have been
 * written before the call, and the broker holds each one as soon as it has read it (a message stored
 * in between is found by the pull itself). Either way a message sent to one of the queues after
 * `ready` is delivered as soon as the broker stores it: no timer of the consumer stands in between.
 * @pure
 */
import { delay, type Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { MessageQueue } from '../../common/message.js';
import { settleMembership, type SettleResult, type StartSettleOptions } from './start-settle.js';
import type { MQClientInstance } from '../instance/mq-client-instance.js';
import type { ProcessQueue } from './process-queue.js';

/** What the `ready` event reports. */
export interface ReadyEvent {
  /** The queues held when the consumer became ready (the retry topic's included). */
  assigned: MessageQueue[];
  /** From the end of `start()` to ready, ms. */
  elapsedMs: number;
  /** How long the membership settle took, ms (0 when there was none). */
  settleMs: number;
  /** How many membership changes the settle saw (other members starting at the same time). */
  membershipChanges: number;
}

export interface ConsumerStartupOptions {
  settle: Omit<StartSettleOptions, 'signal'> | undefined;
  /** Makes one answered call to each broker serving `queues` (errors are only logged); ends on `signal`. */
  probe(queues: readonly MessageQueue[], signal: AbortSignal): Promise<void>;
  now(): number;
  logger: Logger;
  onReady(event: ReadyEvent): void;
}

/**
 * The `ready` probe: per broker serving `queues`, waits until the transport has written every held call
 * (HTTP queues a call until it has a connection), then makes one answered call to that broker.
 */
export async function probeHeldPulls(
  instance: MQClientInstance,
  group: string,
  queues: readonly MessageQueue[],
  signal: AbortSignal,
  clock: Clock,
): Promise<void> {
  const addrs = new Set<string>();
  for (const mq of queues) addrs.add((await instance.findBrokerAddressForQueue(mq)).brokerAddr);
  await Promise.all(
    [...addrs].map(async (addr) => {
      while ((instance.remoting.unsentHeldCalls?.(addr) ?? 0) > 0) await delay(5, signal, clock);
      await instance.api.getConsumerIdListByGroup(addr, group);
    }),
  );
}

/** What `createConsumerStartup` needs of a consumer. */
export interface ConsumerStartupSetup {
  instance: MQClientInstance;
  group: string;
  /** Settle only when true (CLUSTERING, subscribe mode); `quietMs` 0 turns it off too. */
  settle: boolean;
  quietMs: number;
  maxMs: number;
  clock: Clock;
  logger: Logger;
  ready: Deferred<void>;
  onReady(event: ReadyEvent): void;
}

/**
 * The start-up of a consumer whose heartbeat the brokers have accepted: the settle asks every master
 * broker for the group's members (and looks again at once on the broker's membership news), and the
 * `ready` probe follows the first pulls.
 */
export function createConsumerStartup(s: ConsumerStartupSetup): ConsumerStartup {
  const { instance, group, clock, logger } = s;
  const settle =
    s.settle && s.quietMs > 0
      ? {
          members: () =>
            Promise.all(instance.masterBrokerAddrs().map((addr) => instance.api.getConsumerIdListByGroup(addr, group))),
          self: instance.clientId,
          quietMs: s.quietMs,
          maxMs: Math.max(s.quietMs, s.maxMs),
          pollMs: Math.max(20, Math.floor(s.quietMs / 4)),
          clock,
          logger,
        }
      : undefined;
  const startup = new ConsumerStartup(
    {
      settle,
      probe: (queues, signal) => probeHeldPulls(instance, group, queues, signal, clock),
      now: () => clock.now(),
      logger,
      onReady: s.onReady,
    },
    s.ready,
  );
  if (settle) {
    const onNews = (g: string): void => {
      if (g === group) startup.membershipNews();
    };
    instance.events.on('consumerIdsChanged', onNews);
    void startup.settled.then(() => instance.events.off('consumerIdsChanged', onNews));
  }
  return startup;
}

/** A promise with its resolve and reject; rejections nobody awaits are not reported as unhandled. */
export class Deferred<T> {
  readonly promise: Promise<T>;
  resolve!: (value: T) => void;
  reject!: (reason: unknown) => void;
  constructor() {
    this.promise = new Promise<T>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    this.promise.catch(() => undefined);
  }
}

export class ConsumerStartup {
  /** Resolves when the settle is over (never rejects). */
  readonly settled: Promise<SettleResult>;
  readonly #o: ConsumerStartupOptions;
  readonly #ready: Deferred<void>;
  readonly #abort = new AbortController();
  readonly #wake: () => void;
  readonly #startedAt: number;
  readonly #pulled = new WeakSet<ProcessQueue>();
  #settle: SettleResult = { elapsedMs: 0, changes: 0, timedOut: false };
  #firstPassDone = false;
  /** Topics whose first division took the settle's member list. */
  readonly #membersGiven = new Set<string>();
  #target: { mq: MessageQueue; pq: ProcessQueue }[] | undefined;
  #probing = false;
  #finished = false;

  constructor(o: ConsumerStartupOptions, ready: Deferred<void>) {
    this.#o = o;
    this.#ready = ready;
    this.#startedAt = o.now();
    if (o.settle) {
      const s = settleMembership({ ...o.settle, signal: this.#abort.signal });
      this.#wake = s.wake;
      this.settled = s.done.then((r) => (this.#settle = r));
    } else {
      this.#wake = () => undefined;
      this.settled = Promise.resolve(this.#settle);
    }
  }

  /** Membership news arrived (the broker pushed it): a settle in progress looks again at once. */
  membershipNews(): void {
    this.#wake();
  }

  /**
   * The delay of first pulls dispatched by a rebalance: none in the first pass after a settle (the
   * settle already waited longer than RocketMQ's first-pull delay, for a better reason), else `delayMs`.
   */
  firstPullDelay(delayMs: number): number {
    return this.#o.settle && !this.#firstPassDone ? 0 : delayMs;
  }

  /**
   * The group's members as the settle saw them last, for the first division of `topic`'s queues: once
   * per topic, in the first rebalance pass only (a pass run again within it asks the brokers), and
   * only when the settle ended quiet with the brokers agreeing. Undefined otherwise: ask the broker.
   */
  settledMembers(topic: string): string[] | undefined {
    const members = this.#settle.members;
    if (members === undefined || this.#firstPassDone || this.#membersGiven.has(topic)) return undefined;
    this.#membersGiven.add(topic);
    return [...members];
  }

  /** A rebalance pass ended; `held` is every queue held now. The first balanced pass fixes the ready set. */
  afterPass(balanced: boolean, held: Iterable<{ mq: MessageQueue; pq: ProcessQueue }>): void {
    this.#firstPassDone = true;
    if (this.#finished || this.#target || !balanced) return;
    this.#target = [...held].filter((e) => !e.pq.dropped);
    this.#check();
  }

  /** A pull of `pq` is starting (called on every pull until ready). */
  pullStarted(pq: ProcessQueue): void {
    this.#pulled.add(pq);
    if (this.#target) this.#check();
  }

  /** True until ready resolved or the start-up ended otherwise. */
  get pending(): boolean {
    return !this.#finished;
  }

  /** Shutdown (or a failed start): the settle ends at once and `ready` rejects if still pending. */
  end(reason: unknown): void {
    this.#abort.abort(reason);
    if (this.#finished) return;
    this.#finished = true;
    this.#ready.reject(reason);
  }

  #check(): void {
    const target = this.#target;
    if (!target || this.#probing || this.#finished) return;
    if (!target.every((e) => e.pq.dropped || this.#pulled.has(e.pq))) return;
    this.#probing = true;
    // The pulls just started reach their transport within a few microtasks: probe after them.
    setImmediate(() => {
      const queues = target.filter((e) => !e.pq.dropped).map((e) => e.mq);
      this.#o
        .probe(queues, this.#abort.signal)
        .catch((err: unknown) => this.#o.logger.debug({ err }, 'ready probe failed'))
        .finally(() => {
          if (this.#finished) return;
          this.#finished = true;
          this.#ready.resolve();
          this.#o.onReady({
            assigned: queues.map((mq) => ({ ...mq })),
            elapsedMs: this.#o.now() - this.#startedAt,
            settleMs: this.#settle.elapsedMs,
            membershipChanges: this.#settle.changes,
          });
        });
    });
  }
}
