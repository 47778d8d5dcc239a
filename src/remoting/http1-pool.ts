/**
 * The connections of one lane of the HTTP transport to one origin: at most `maxConnections` (Infinity:
 * no bound), each carrying one call at a time; calls beyond the bound wait in a FIFO queue. An idle
 * connection is reused (the most recently freed first, so that the others age out) only while it is
 * still open both ways, and closes itself after `keepAliveTimeoutMs`. Pools of the same origin can
 * share their idle connections (`shareIdleWith`): a call that would open a connection takes one left
 * idle by another lane instead, as a consumer's first pulls do with the connections its offset reads
 * just freed, so that they go out without waiting for new connections to open.
 */
import { Http1Call, Http1Connection, type Http1ConnectionEvents, type Http1Origin } from './http1-connection.js';

export interface Http1PoolOptions {
  origin: Http1Origin;
  /** Connections at most; `Infinity` for none. */
  maxConnections: number;
  keepAliveTimeoutMs: number;
}

export class Http1Pool {
  readonly #origin: Http1Origin;
  readonly #max: number;
  readonly #keepAliveTimeoutMs: number;
  readonly #connections = new Set<Http1Connection>();
  /** Free connections, the most recently freed last. */
  readonly #idle: Http1Connection[] = [];
  readonly #queue: Http1Call[] = [];
  readonly #events: Http1ConnectionEvents;
  /** Pools of the same origin whose idle connections this one may take. */
  #siblings: readonly Http1Pool[] = [];
  #closing = false;
  #destroyed: Error | null = null;
  #drained: (() => void) | null = null;

  constructor(options: Http1PoolOptions) {
    this.#origin = options.origin;
    this.#max = options.maxConnections;
    this.#keepAliveTimeoutMs = options.keepAliveTimeoutMs;
    this.#events = {
      onFree: (conn) => this.#onFree(conn),
      onClose: (conn) => this.#onClose(conn),
    };
  }

  /** Calls not yet written to a connection: queued, or waiting for their connection to open. */
  get unsent(): number {
    let n = this.#queue.length;
    for (const c of this.#connections) if (c.unsent) n++;
    return n;
  }

  /** Open connections (busy, idle or still connecting). */
  get connections(): number {
    return this.#connections.size;
  }

  /** Lets this pool take idle connections of `pools` (same origin) rather than open new ones. */
  shareIdleWith(pools: readonly Http1Pool[]): void {
    this.#siblings = pools.filter((p) => p !== this);
  }

  /** Hands one of this pool's idle connections over to another pool (which must give it a call now). */
  lendIdle(): Http1Connection | undefined {
    const conn = this.#takeIdle();
    if (conn) this.#connections.delete(conn);
    return conn;
  }

  /** Sends `call` on a free connection, a new one, or when one is free. */
  request(call: Http1Call): void {
    if (this.#destroyed) return call.fail(this.#destroyed);
    const conn = this.#takeIdle() ?? (this.#connections.size < this.#max ? this.#another() : undefined);
    if (conn) return conn.run(call);
    this.#queue.push(call);
    call.onAbort(() => {
      const i = this.#queue.indexOf(call);
      if (i >= 0) this.#queue.splice(i, 1);
      this.#checkDrained();
    });
  }

  /**
   * Serves the calls in flight and queued, closing each connection as it frees; resolves once none is
   * left. Calls made meanwhile are still served.
   */
  close(): Promise<void> {
    this.#closing = true;
    for (const c of this.#idle.splice(0)) c.destroy();
    return new Promise<void>((resolve) => {
      this.#drained = resolve;
      this.#checkDrained();
    });
  }

  /** Ends every connection and fails every call with `err` at once. */
  destroy(err: Error): void {
    this.#closing = true;
    this.#destroyed ??= err;
    for (const call of this.#queue.splice(0)) call.fail(err);
    for (const c of [...this.#connections]) c.destroy(err);
    this.#checkDrained();
  }

  #takeIdle(): Http1Connection | undefined {
    for (let c = this.#idle.pop(); c !== undefined; c = this.#idle.pop()) {
      if (c.reusable) return c;
      c.destroy();
    }
    return undefined;
  }

  /** A connection for this pool beyond those it has: one another pool left idle, else a new one. */
  #another(): Http1Connection {
    for (const pool of this.#siblings) {
      const conn = pool.lendIdle();
      if (conn) {
        conn.moveTo(this.#events);
        this.#connections.add(conn);
        return conn;
      }
    }
    const conn = new Http1Connection(this.#origin, this.#keepAliveTimeoutMs, this.#events);
    this.#connections.add(conn);
    return conn;
  }

  #next(): Http1Call | undefined {
    const call = this.#queue.shift();
    call?.onAbort(null);
    return call;
  }

  #onFree(conn: Http1Connection): void {
    const call = this.#next();
    if (call) return conn.run(call);
    if (this.#closing) {
      conn.destroy();
      return;
    }
    this.#idle.push(conn);
    conn.idle();
  }

  #onClose(conn: Http1Connection): void {
    this.#connections.delete(conn);
    const i = this.#idle.indexOf(conn);
    if (i >= 0) this.#idle.splice(i, 1);
    if (this.#queue.length > 0 && !this.#destroyed && this.#connections.size < this.#max) {
      const call = this.#next() as Http1Call;
      this.#another().run(call);
    }
    this.#checkDrained();
  }

  #checkDrained(): void {
    if (this.#drained === null || this.#queue.length > 0 || this.#connections.size > 0) return;
    const resolve = this.#drained;
    this.#drained = null;
    resolve();
  }
}
