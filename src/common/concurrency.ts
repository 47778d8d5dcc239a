/**
 * Bounded fan-out for per-queue work against a broker (start offsets at a rebalance, offset reads,
 * awaited offset writes): a thousand queues make a thousand calls, but never a thousand at once, so
 * they do not crowd out the calls that keep a client a member of its group.
 * @pure
 */

/** A counting gate: at most `limit` tasks run at once; the others wait their turn in order. */
export class ConcurrencyGate {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    this.#free = limit;
  }

  /** Runs `fn` once a place is free; resolves or rejects as `fn` does. */
  async run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--;
    else await new Promise<void>((resolve) => this.#waiting.push(resolve));
    try {
      return await fn();
    } finally {
      const next = this.#waiting.shift();
      if (next) next();
      else this.#free++;
    }
  }
}
