/**
 * RebalanceService (RocketMQ's RebalanceService.java): one per MQClientInstance. It wakes every
 * `rebalanceIntervalMs` (20 s), and calls `doRebalance()` of every registered consumer. After an
 * unbalanced pass (a consumer resolved `false`) the next one comes after `minIntervalMs` (1 s, as in
 * RocketMQ 5).
 *
 * `wakeup()` (RocketMQ's rebalanceImmediately: a member joined or left) runs a pass at once, but never
 * less than `newsIntervalMs` after the previous one, which damps a burst of membership news. RocketMQ 5
 * holds such news for its 1 s minimum interval; here a member that must give queues to one that has
 * just joined does so within the newcomer's start-up settle, before the newcomer reads them.
 * `wakeup(true)` (a consumer of this client has just started) runs a pass at once.
 *
 * Passes never overlap: a wake-up during a pass runs one more pass after it.
 */
import type { Clock, TimerHandle } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { MQConsumerInner } from './mq-consumer-inner.js';

export interface RebalanceServiceOptions {
  /** Period between passes, ms. RocketMQ: 20000 (`rocketmq.client.rebalance.waitInterval`). */
  rebalanceIntervalMs: number;
  /** Least time after an unbalanced pass, ms. RocketMQ 5: 1000. */
  minIntervalMs?: number;
  /** Least time between two passes asked for by membership news, ms. Default 100. */
  newsIntervalMs?: number;
  clock: Clock;
  logger: Logger;
}

export class RebalanceService {
  readonly #consumers: () => Iterable<MQConsumerInner>;
  readonly #intervalMs: number;
  readonly #minIntervalMs: number;
  readonly #newsIntervalMs: number;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #timer: TimerHandle | undefined;
  #timerDue = Infinity;
  #running: Promise<void> | undefined;
  #pendingWakeup = false;
  #pendingNow = false;
  #lastRunAt = -Infinity;
  #started = false;
  #stopped = false;

  constructor(consumers: () => Iterable<MQConsumerInner>, options: RebalanceServiceOptions) {
    this.#consumers = consumers;
    this.#intervalMs = options.rebalanceIntervalMs;
    this.#minIntervalMs = options.minIntervalMs ?? 1000;
    this.#newsIntervalMs = options.newsIntervalMs ?? 100;
    this.#clock = options.clock;
    this.#logger = options.logger;
  }

  start(): void {
    if (this.#started || this.#stopped) return;
    this.#started = true;
    this.#schedule(this.#intervalMs);
  }

  /**
   * Requests a pass as soon as `newsIntervalMs` allows (RocketMQ's rebalanceImmediately); with `now`,
   * at once (a consumer that has just started).
   */
  wakeup(now = false): void {
    if (!this.#started || this.#stopped) return;
    if (this.#running) {
      this.#pendingWakeup = true;
      if (now) this.#pendingNow = true;
      return;
    }
    this.#schedule(now ? 0 : Math.max(0, this.#lastRunAt + this.#newsIntervalMs - this.#clock.now()));
  }

  /** Stops the timer and waits for a pass in progress. Idempotent. */
  async shutdown(): Promise<void> {
    this.#stopped = true;
    this.#clearTimer();
    await this.#running;
  }

  /** Runs one pass now (also what the timer runs). */
  runOnce(): Promise<void> {
    if (this.#running) {
      this.#pendingWakeup = true;
      return this.#running;
    }
    this.#clearTimer();
    this.#running = this.#pass().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #pass(): Promise<void> {
    this.#lastRunAt = this.#clock.now();
    let balanced = true;
    for (const consumer of [...this.#consumers()]) {
      if (this.#stopped) return;
      try {
        if ((await consumer.doRebalance()) === false) balanced = false;
      } catch (err) {
        balanced = false;
        this.#logger.warn({ err, group: consumer.groupName() }, 'rebalance failed');
      }
    }
    if (this.#stopped) return;
    // News that came during the pass waits for newsIntervalMs from the pass's start, not its end.
    const next = this.#pendingNow
      ? 0
      : !balanced
        ? this.#minIntervalMs
        : this.#pendingWakeup
          ? Math.max(0, this.#lastRunAt + this.#newsIntervalMs - this.#clock.now())
          : this.#intervalMs;
    this.#pendingWakeup = false;
    this.#pendingNow = false;
    this.#schedule(next);
  }

  /** Arms the timer for `delayMs` unless it is already due sooner. */
  #schedule(delayMs: number): void {
    if (this.#stopped) return;
    const due = this.#clock.now() + delayMs;
    if (this.#timer !== undefined && this.#timerDue <= due) return;
    this.#clearTimer();
    this.#timerDue = due;
    this.#timer = this.#clock.setTimeout(() => {
      this.#timer = undefined;
      this.#timerDue = Infinity;
      void this.runOnce();
    }, delayMs);
    // This timer alone never keeps the process alive: a consumer's heartbeat task does that.
    (this.#timer as { unref?: () => unknown }).unref?.();
  }

  #clearTimer(): void {
    if (this.#timer !== undefined) this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#timerDue = Infinity;
  }
}
