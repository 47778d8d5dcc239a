/**
 * One HTTP/1.1 keep-alive connection of the HTTP transport, over a `node:net` or `node:tls` socket,
 * carrying one call at a time (no pipelining), and the call it carries.
 *
 * The request is written once the socket is connected (a call not yet written counts as unsent); the
 * answer is read with Http1ResponseParser. A malformed answer, a socket error or a close before the
 * answer's end fails the call and ends the connection; so does a call that ends early (its deadline or
 * its signal), since its answer may still be on the way.
 */
import net from 'node:net';
import tls from 'node:tls';
import { Http1ResponseParser, type Http1Response } from './http1-response-parser.js';
import type { TlsOptions } from './tls-options.js';

/** Bodies up to this size are copied behind the head and leave in one write; larger ones are not copied. */
const COPY_BODY_BYTES = 16 * 1024;

/** Where a connection goes: `tls` set (possibly `{}`) for an `https:` origin. */
export interface Http1Origin {
  host: string;
  port: number;
  tls: TlsOptions | undefined;
}

/** One request and the promise waiting for its answer; settles once. */
export class Http1Call {
  /** The request line and headers, ending with the blank line. */
  readonly head: string;
  readonly body: Buffer;
  readonly #resolve: (res: Http1Response) => void;
  readonly #reject: (err: unknown) => void;
  #settled = false;
  /** What ending the call early must undo: leave the queue, or end the connection carrying it. */
  #onAbort: (() => void) | null = null;

  constructor(head: string, body: Buffer, resolve: (res: Http1Response) => void, reject: (err: unknown) => void) {
    this.head = head;
    this.body = body;
    this.#resolve = resolve;
    this.#reject = reject;
  }

  get settled(): boolean {
    return this.#settled;
  }

  /** Ends the call now with `err` (its deadline or its signal). False when it had already ended. */
  abort(err: Error): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#reject(err);
    const undo = this.#onAbort;
    this.#onAbort = null;
    undo?.();
    return true;
  }

  /** @internal The pool or connection now holding the call. */
  onAbort(undo: (() => void) | null): void {
    this.#onAbort = undo;
  }

  /** @internal */
  complete(res: Http1Response): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#onAbort = null;
    this.#resolve(res);
  }

  /** @internal */
  fail(err: unknown): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#onAbort = null;
    this.#reject(err);
  }
}

export interface Http1ConnectionEvents {
  /** The connection's call was answered and it may carry another. */
  onFree(conn: Http1Connection): void;
  /** The connection is gone (called once). */
  onClose(conn: Http1Connection): void;
}

export class Http1Connection {
  readonly #socket: net.Socket;
  readonly #parser = new Http1ResponseParser();
  #events: Http1ConnectionEvents;
  readonly #keepAliveTimeoutMs: number;
  #call: Http1Call | null = null;
  #connected = false;
  /** The call's request was handed to the socket. */
  #written = false;
  /** The peer ended its side. */
  #ended = false;
  #closed = false;
  #error: Error | null = null;
  #idleTimer: NodeJS.Timeout | undefined;

  constructor(origin: Http1Origin, keepAliveTimeoutMs: number, events: Http1ConnectionEvents) {
    this.#events = events;
    this.#keepAliveTimeoutMs = keepAliveTimeoutMs;
    const secure = origin.tls;
    const socket = secure
      ? tls.connect({
          host: origin.host,
          port: origin.port,
          // SNI carries a host name only; an IP address is checked against the certificate's IP entries.
          ...(net.isIP(origin.host) === 0 ? { servername: origin.host } : {}),
          ALPNProtocols: ['http/1.1'],
          ...secure,
        } as tls.ConnectionOptions)
      : net.connect({ host: origin.host, port: origin.port });
    this.#socket = socket;
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 60_000);
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      this.#connected = true;
      this.#write();
    });
    socket.on('data', (chunk: Buffer) => this.#onData(chunk));
    socket.on('end', () => {
      this.#ended = true;
      // A server closing an idle keep-alive connection: it is dropped, never reused.
      if (this.#call === null) this.destroy();
    });
    socket.on('error', (err) => {
      this.#error ??= err;
    });
    socket.on('close', () => this.#onClose());
  }

  /** Idle, connected and still open both ways: it may carry another call. */
  get reusable(): boolean {
    const s = this.#socket;
    return !this.#closed && this.#call === null && !this.#ended && s.writable && !s.destroyed && !s.readableEnded;
  }

  /** A call is assigned whose request is not yet on the socket (the connection is still opening). */
  get unsent(): boolean {
    return this.#call !== null && !this.#written && !this.#call.settled;
  }

  /** From now on tells `events` when it frees or closes (it moved to another pool of the same origin). */
  moveTo(events: Http1ConnectionEvents): void {
    this.#events = events;
  }

  /** Carries `call`: writes it now, or once connected. */
  run(call: Http1Call): void {
    if (this.#call !== null || this.#closed) throw new Error('HTTP connection: not free for a call');
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    this.#call = call;
    this.#written = false;
    this.#socket.ref();
    call.onAbort(() => this.destroy());
    this.#write();
  }

  /**
   * Idle from now: closes itself after the keep-alive timeout unless given a call. An idle connection
   * does not keep the process alive, so a program that forgets close() still exits.
   */
  idle(): void {
    this.#socket.unref();
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = setTimeout(() => this.destroy(), this.#keepAliveTimeoutMs);
    this.#idleTimer.unref();
  }

  /** Ends the connection; a call still on it fails with `err`. */
  destroy(err?: Error): void {
    if (this.#closed) return;
    this.#error ??= err ?? null;
    this.#socket.destroy();
    this.#onClose();
  }

  #write(): void {
    const call = this.#call;
    if (!this.#connected || call === null || this.#written || call.settled) return;
    this.#written = true;
    const socket = this.#socket;
    const { head, body } = call;
    if (body.length <= COPY_BODY_BYTES) {
      const headBytes = Buffer.byteLength(head, 'latin1');
      const out = Buffer.allocUnsafe(headBytes + body.length);
      out.write(head, 0, headBytes, 'latin1');
      body.copy(out, headBytes);
      socket.write(out);
    } else {
      socket.cork();
      socket.write(head, 'latin1');
      socket.write(body);
      socket.uncork();
    }
  }

  #onData(chunk: Buffer): void {
    const call = this.#call;
    if (call === null) {
      // Nothing was asked: a server that talks out of turn is not trusted with the next call.
      this.destroy();
      return;
    }
    let res: Http1Response | undefined;
    try {
      res = this.#parser.push(chunk);
    } catch (e) {
      this.destroy(e as Error);
      return;
    }
    if (res === undefined) return;
    this.#call = null;
    call.complete(res);
    if (!res.keepAlive || this.#ended) {
      this.destroy();
      return;
    }
    this.#parser.reset();
    this.#events.onFree(this);
  }

  #onClose(): void {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#idleTimer !== undefined) clearTimeout(this.#idleTimer);
    this.#idleTimer = undefined;
    const call = this.#call;
    this.#call = null;
    if (call !== null && !call.settled) {
      if (this.#error) {
        call.fail(this.#error);
      } else {
        // A body that runs until the close ends here; anything else was cut short.
        try {
          call.complete(this.#parser.end());
        } catch (e) {
          call.fail(e);
        }
      }
    }
    if (!this.#socket.destroyed) this.#socket.destroy();
    this.#events.onClose(this);
  }
}
