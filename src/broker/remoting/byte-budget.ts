/**
 * Bytes the listeners hold for their clients, counted against a broker-wide bound: frames still
 * arriving (reserved in full when their length arrives), requests read but not yet answered, and
 * answers queued but not yet handed to the OS. Each connection also has a bound of its own
 * (ConnectionBudget); a connection past either stops being read until what it holds drains.
 *
 * The last part of the broker-wide budget (`reserve`) is kept for holders that hold little (at most
 * LIGHT_HOLDER_BYTES, the frame or answer in question included): a flood of connections that each hold
 * megabytes can spend the rest, never that part, so a well-behaved client's small request and its answer
 * still fit while the flood waits.
 */

/** What a holder (a connection, with the bytes it asks for) may hold and still draw on the reserve. */
export const LIGHT_HOLDER_BYTES = 128 * 1024;

export class ByteBudget {
  readonly limit: number;
  /** The bytes below `limit` that only light holders may take: an eighth of it. */
  readonly reserve: number;
  #used = 0;
  #peak = 0;
  #released = 0;
  readonly #waiters = new Set<() => void>();

  constructor(limit: number) {
    this.limit = limit;
    this.reserve = Math.floor(limit / 8);
  }

  /** How far `used` may go for a holder of `held` bytes that asks for `bytes` more. */
  #cap(held: number, bytes: number): number {
    return held + bytes <= LIGHT_HOLDER_BYTES ? this.limit : this.limit - this.reserve;
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

  /** Bytes given back since start: what went through the listeners, most of it garbage once given back. */
  get releasedTotal(): number {
    return this.#released;
  }

  /** Spent for a holder of `held` bytes: it may take nothing more now (the reserve counts only for light ones). */
  exhaustedFor(held: number): boolean {
    return this.#used >= this.#cap(held, 0);
  }

  /** Whether a holder of `held` bytes may take `bytes` more. */
  fits(bytes: number, held: number): boolean {
    return this.#used + bytes <= this.#cap(held, bytes);
  }

  take(bytes: number): void {
    this.#used += bytes;
    if (this.#used > this.#peak) this.#peak = this.#used;
  }

  /** Gives `bytes` back; while there is room again, every waiter runs (each may take some back). */
  release(bytes: number): void {
    this.#used -= bytes;
    this.#released += bytes;
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

  /** Over its own limit, or the broker's budget is spent for what it holds: the connection must not be read. */
  get over(): boolean {
    return this.#used >= this.limit || this.shared.exhaustedFor(this.#used);
  }

  /**
   * Whether `bytes` more can be held now: within this connection's limit (a connection holding nothing
   * may always take up to its limit) and within the broker's budget.
   */
  fits(bytes: number): boolean {
    return this.#used + bytes <= this.limit && this.shared.fits(bytes, this.#used);
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
