/** A clock the test moves by hand: timers fire only in `advance`. */
import type { Clock, TimerHandle } from '../../../src/common/clock.js';

interface Timer {
  id: number;
  at: number;
  every: number | undefined;
  fn: () => void;
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
    const id = ++this.seq;
    this.timers.set(id, { id, at: this.t + ms, every: undefined, fn });
    return id as unknown as TimerHandle;
  }

  clearTimeout(h: TimerHandle): void {
    this.timers.delete(h as unknown as number);
  }

  setInterval(fn: () => void, ms: number): TimerHandle {
    const id = ++this.seq;
    this.timers.set(id, { id, at: this.t + ms, every: ms, fn });
    return id as unknown as TimerHandle;
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
      this.t = next.at;
      if (next.every !== undefined) next.at += next.every;
      else this.timers.delete(next.id);
      next.fn();
    }
    this.t = end;
  }
}
