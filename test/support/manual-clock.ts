/**
 * A clock the test moves by hand (STYLE habit 7): timers fire, in time order, only inside `advance`
 * or `advanceAsync`. One implementation for every unit test that drives time.
 */
import type { Clock, TimerHandle } from '../../src/common/clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
  /** The period of an interval; undefined for a one-shot timeout. */
  every: number | undefined;
}

export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, Timer>();

  constructor(start = 1_000_000) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, undefined);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    return this.add(fn, ms, ms);
  }

  clearTimeout(h: TimerHandle): void {
    this.timers.delete(h as unknown as number);
  }

  clearInterval(h: TimerHandle): void {
    this.timers.delete(h as unknown as number);
  }

  /** Timers (timeouts and intervals) not yet fired or cleared. */
  get pendingTimers(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers in order, synchronously. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (let next = this.nextDue(end); next; next = this.nextDue(end)) this.fire(next);
    this.t = end;
  }

  /** Like `advance`, but lets queued promise callbacks run after each timer and at the end. */
  async advanceAsync(ms: number): Promise<void> {
    const end = this.t + ms;
    for (let next = this.nextDue(end); next; next = this.nextDue(end)) {
      this.fire(next);
      await flush();
    }
    this.t = end;
    await flush();
  }

  private nextDue(end: number): Timer | undefined {
    let next: Timer | undefined;
    for (const timer of this.timers.values()) if (timer.at <= end && (!next || timer.at < next.at)) next = timer;
    return next;
  }

  private fire(timer: Timer): void {
    this.t = Math.max(this.t, timer.at);
    if (timer.every === undefined) this.timers.delete(timer.id);
    else timer.at += Math.max(1, timer.every);
    timer.fn();
  }

  private add(fn: () => void, ms: number, every: number | undefined): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { id, at: this.t + Math.max(0, ms), fn, every });
    return id as unknown as TimerHandle;
  }
}

/** Lets queued promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
