/**
 * Shares the event loop between connections that have more frames to read than one turn should take.
 * A turn's reading is counted from its first frame; once it has taken `budgetMs`, a connection with frames
 * left is deferred (its socket unread meanwhile) and run again on a later turn, in the order deferred, each
 * later turn also within the budget. Requests that come in the meantime (a well-behaved client's) are read
 * on the next turn instead of after everything a flood has already sent.
 */
import { performance } from 'node:perf_hooks';

export class TurnShare<T> {
  readonly #budgetMs: number;
  readonly #run: (item: T) => void;
  readonly #deferred = new Set<T>();
  /** When this turn's reading began (performance.now()), 0 before its first frame. */
  #startedAt = 0;
  #endScheduled = false;

  constructor(budgetMs: number, run: (item: T) => void) {
    this.#budgetMs = budgetMs;
    this.#run = run;
  }

  /** Items waiting for a later turn. */
  get deferred(): number {
    return this.#deferred.size;
  }

  /** Whether this turn's share is taken (the first call of a turn starts counting it). */
  spent(): boolean {
    const now = performance.now();
    if (this.#startedAt === 0) {
      this.#startedAt = now;
      this.#scheduleEnd();
      return false;
    }
    return now - this.#startedAt >= this.#budgetMs;
  }

  /** Runs `item` on a later turn, after the items deferred before it. */
  defer(item: T): void {
    this.#deferred.add(item);
    this.#scheduleEnd();
  }

  /** Drops `item` from the waiting ones (its connection closed). */
  forget(item: T): void {
    this.#deferred.delete(item);
  }

  #scheduleEnd(): void {
    if (this.#endScheduled) return;
    this.#endScheduled = true;
    setImmediate(this.#endTurn);
  }

  /** After the turn's I/O: the deferred items run, first come first, within a budget of their own. */
  readonly #endTurn = (): void => {
    this.#endScheduled = false;
    this.#startedAt = performance.now();
    let first = true;
    for (const item of this.#deferred) {
      if (!first && this.spent()) break;
      first = false;
      this.#deferred.delete(item);
      this.#run(item);
    }
    this.#startedAt = 0;
    if (this.#deferred.size > 0) this.#scheduleEnd();
  };
}
