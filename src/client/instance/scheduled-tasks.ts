/**
 * The periodic tasks of a client instance (RocketMQ's startScheduledTask): each runs first after a
 * delay, then every period, never overlapping its previous run. The object owns every timer it
 * creates: `cancel()` clears them all and `settled()` waits for the runs still in flight.
 */
import type { Clock, TimerHandle } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';

export interface ScheduledTasksDeps {
  clock: Clock;
  logger: Logger;
  /** Runs happen only while this is true (the instance is RUNNING). */
  isRunning(): boolean;
  /** Whether the timers should keep the process alive (see `refreshRefs`). */
  keepAlive(): boolean;
}

export class ScheduledTasks {
  readonly #d: ScheduledTasksDeps;
  readonly #timeouts: TimerHandle[] = [];
  readonly #intervals: TimerHandle[] = [];
  readonly #running = new Set<string>();
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(deps: ScheduledTasksDeps) {
    this.#d = deps;
  }

  /** Runs `task` after `firstMs`, then every `periodMs`; a run never overlaps the previous one. */
  every(name: string, firstMs: number, periodMs: number, task: () => Promise<unknown>): void {
    const { clock, logger } = this.#d;
    const run = (): void => {
      if (!this.#d.isRunning() || this.#running.has(name)) return;
      this.#running.add(name);
      const p = task()
        .catch((err: unknown) => logger.warn({ err, task: name }, 'scheduled task failed'))
        .finally(() => {
          this.#running.delete(name);
          this.#inFlight.delete(p);
        });
      this.#inFlight.add(p);
    };
    const first = clock.setTimeout(() => {
      run();
      if (this.#d.isRunning()) this.#intervals.push(this.#keepAliveAsNeeded(clock.setInterval(run, periodMs)));
    }, firstMs);
    this.#timeouts.push(this.#keepAliveAsNeeded(first));
  }

  /**
   * The timers keep the process alive only while `keepAlive()` says so (a registered consumer is
   * expected to keep running); a producer alone does not, so a script that forgets `shutdown()` still
   * exits, as Node users expect of a client. Call again when the answer may have changed.
   */
  refreshRefs(): void {
    for (const h of this.#timeouts) this.#keepAliveAsNeeded(h);
    for (const h of this.#intervals) this.#keepAliveAsNeeded(h);
  }

  #keepAliveAsNeeded(h: TimerHandle): TimerHandle {
    const t = h as { ref?: () => unknown; unref?: () => unknown };
    if (this.#d.keepAlive()) t.ref?.();
    else t.unref?.();
    return h;
  }

  /** Clears every timer: no run starts after this. */
  cancel(): void {
    for (const t of this.#timeouts.splice(0)) this.#d.clock.clearTimeout(t);
    for (const t of this.#intervals.splice(0)) this.#d.clock.clearInterval(t);
  }

  /** Resolves when the runs in flight have ended (whatever their outcome). */
  settled(): Promise<unknown> {
    return Promise.allSettled([...this.#inFlight]);
  }
}
