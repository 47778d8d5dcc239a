/** A clock tests drive by hand: timers fire, in time order, only inside `advance`. */
import type { Clock, TimerHandle } from '../../../src/common/clock.js';

interface Timer {
  id: number;
  at: number;
  fn: () => void;
  every: number | undefined;
}

export class FakeClock implements Clock {
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

  get pending(): number {
    return this.timers.size;
  }

  /** Moves time forward by `ms`, firing due timers in order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: Timer | undefined;
      for (const timer of this.timers.values()) if (timer.at <= end && (!next || timer.at < next.at)) next = timer;
      if (!next) break;
      this.t = Math.max(this.t, next.at);
      if (next.every === undefined) this.timers.delete(next.id);
      else next.at += Math.max(1, next.every);
      next.fn();
    }
    this.t = end;
  }

  private add(fn: () => void, ms: number, every: number | undefined): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { id, at: this.t + Math.max(0, ms), fn, every });
    return id as unknown as TimerHandle;
  }
}
