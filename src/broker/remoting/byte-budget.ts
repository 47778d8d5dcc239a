/**
 * Bytes the listeners hold for their clients, counted against a broker-wide bound: frames still
 * arriving (reserved in full when their length arrives), requests read but not yet answered, and
 * answers queued but not yet handed to the OS. Each connection also has a bound of its own
 * (ConnectionBudget); a connection past either stops being read until what it holds drains.
 */

export class ByteBudget {
  readonly limit: number;
  #used = 0;
  #peak = 0;
  readonly #waiters = new Set<() => void>();

  constructor(limit: number) {
    this.limit = limit;
  }

  get used(): number {
    return this.#used;
  }

  /** Highest `used` since start or since `resetPeak`. */
  get peak(): number {
    return this.#peak;
  }

  resetPeak(): void {
    this.#peak = this.#used;
  }

  get exhausted(): boolean {
    return this.#used >= this.limit;
  }

  fits(bytes: number): boolean {
    return this.#used + bytes <= this.limit;
  }

  take(bytes: number): void {
    this.#used += bytes;
    if (this.#used > this.#peak) this.#peak = this.#used;
  }

  /** Gives `bytes` back; while there is room again, every waiter runs (each may take some back). */
  release(bytes: number): void {
    this.#used -= bytes;
    if (this.#waiters.size === 0 || this.#used >= this.limit) return;
    for (const w of [...this.#waiters]) {
      if (this.#used >= this.limit) break;
      w();
    }
  }

  /** Runs `waiter` whenever bytes are given back below the limit, until the returned function is called. */
  whenFree(waiter: () => void): () => void {
    this.#waiters.add(waiter);
    return () => {
      this.#waiters.delete(waiter);
    };
  }
}

/** What one connection holds, within its own limit and the broker-wide budget. */
export class ConnectionBudget {
  readonly limit: number;
  readonly shared: ByteBudget;
  #used = 0;
  #peak = 0;
  #closed = false;

  constructor(limit: number, shared: ByteBudget) {
    this.limit = limit;
    this.shared = shared;
  }

  get used(): number {
    return this.#used;
  }

  /** The most this connection has held. */
  get peak(): number {
    return this.#peak;
  }

  /** Over its own limit, or the broker's budget is spent: the connection must not be read. */
  get over(): boolean {
    return this.#used >= this.limit || this.shared.exhausted;
  }

  /**
   * Whether `bytes` more can be held now: within this connection's limit (a connection holding nothing
   * may always take up to its limit) and within the broker's budget.
   */
  fits(bytes: number): boolean {
    return this.#used + bytes <= this.limit && this.shared.fits(bytes);
  }

  take(bytes: number): void {
    if (this.#closed) return;
    this.#used += bytes;
    if (this.#used > this.#peak) this.#peak = this.#used;
    this.shared.take(bytes);
  }

  release(bytes: number): void {
    if (this.#closed) return;
    this.#used -= bytes;
    this.shared.release(bytes);
  }

  /** The connection closed: everything it held goes back at once, and later releases are ignored. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    const held = this.#used;
    this.#used = 0;
    this.shared.release(held);
  }
}
