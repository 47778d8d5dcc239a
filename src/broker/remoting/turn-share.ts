/**
 * Shares the event loop between connections that have more frames to read than one turn should take.
 * A turn's reading is counted from its first frame; once it has taken `budgetMs`, a connection with frames
 * left is deferred (its socket unread meanwhile) and run again on a later turn, in the order deferred, each
 * later turn also within the budget. Requests that come in the meantime (a well-behaved client's) are read
 * on the next turn instead of after everything a flood has already sent.
 *
 * Items deferred `later` (connections that have not sent a request yet) wait in a lane of their own,
 * run after the others on each later turn, and at least one of them each turn, so that neither lane can
 * starve the other: a flood of new connections then delays the clients already talking to the broker
 * by one share at most, not by the time it takes to answer the whole wave.
 */
import { performance } from 'node:perf_hooks';

export class TurnShare<T> {
  readonly #budgetMs: number;
  readonly #run: (item: T) => void;
  readonly #deferred = new Set<T>();
  readonly #later = new Set<T>();
  /** When this turn's reading began (performance.now()), 0 before its first frame. */
  #startedAt = 0;
  #endScheduled = false;

  constructor(budgetMs: number, run: (item: T) => void) {
    this.#budgetMs = budgetMs;
    this.#run = run;
  }

  /** Items waiting for a later turn. */
  get deferred(): number {
    return this.#deferred.size + this.#later.size;
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

  /** Runs `item` on a later turn, after the items deferred before it (in its lane: `later` or not). */
  defer(item: T, later = false): void {
    (later ? this.#later : this.#deferred).add(item);
    this.#scheduleEnd();
  }

  /** Drops `item` from the waiting ones (its connection closed). */
  forget(item: T): void {
    this.#deferred.delete(item);
    this.#later.delete(item);
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
    this.#runLane(this.#deferred);
    this.#runLane(this.#later);
    this.#startedAt = 0;
    if (this.deferred > 0) this.#scheduleEnd();
  };

  /** Runs the lane's items in order while the share lasts, and its first one in any case. */
  #runLane(lane: Set<T>): void {
    let first = true;
    for (const item of lane) {
      if (!first && this.spent()) break;
      first = false;
      lane.delete(item);
      this.#run(item);
    }
  }
}
