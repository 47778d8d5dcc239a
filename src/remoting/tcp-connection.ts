/**
 * One TCP connection to a RocketMQ remoting peer: frames out, frames in, responses matched to their
 * requests by `opaque`. A connection that closes or errors fails every request still waiting on it at
 * once; a peer that sends something that is not a remoting frame (too large, malformed) gets its
 * connection closed, with the reason logged. With `tls` the connection is TLS (RocketMQ's `tls.enable`),
 * and a handshake that fails is a `TlsError` naming the address.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from '../common/logger.js';
import { FrameReader } from './frame-reader.js';
import { TickWriter } from './tick-writer.js';
import { decodeRemotingCommand, isResponse, type RemotingCommand } from './remoting-command.js';
import { tlsHandshakeError, type TlsOptions } from './tls-options.js';

/** Bytes one socket read may bring: several pull answers of 32 x 1 KiB when they are queued. */
const READ_BUFFER_BYTES = 256 * 1024;

export interface PendingCall {
  resolve(cmd: RemotingCommand): void;
  reject(err: Error): void;
}

export interface TcpConnectionEvents {
  /** A request frame from the peer (broker or NameServer initiated). */
  onRequest(conn: TcpConnection, cmd: RemotingCommand): void;
  /** The connection is gone; `err` says why. Called once. */
  onClose(conn: TcpConnection, err: Error): void;
}

export class TcpConnection {
  readonly addr: string;
  readonly #socket: net.Socket;
  readonly #writer: TickWriter;
  readonly #reader: FrameReader;
  readonly #pending = new Map<number, PendingCall>();
  readonly #events: TcpConnectionEvents;
  readonly #logger: Logger;
  #open = false;
  /** A frame came from the peer: a close after that is not a refusal of the connection itself. */
  #answered = false;
  /** `end()` or `destroy()` was called: the close is ours. */
  #closing = false;
  #closed: Error | null = null;
  readonly ready: Promise<void>;

  constructor(
    addr: string,
    host: string,
    port: number,
    options: {
      maxFrameLength: number;
      connectTimeoutMs: number;
      logger: Logger;
      events: TcpConnectionEvents;
      tls?: TlsOptions | undefined;
    },
  ) {
    this.addr = addr;
    this.#events = options.events;
    this.#logger = options.logger;
    this.#reader = new FrameReader({ maxFrameLength: options.maxFrameLength, reusesChunks: true });
    // The socket reads into one buffer that this connection keeps: no new buffer per read, and the frames
    // (copied out of it) are the only memory a read leaves behind — a pull answer no longer holds on to
    // the read buffers it arrived in, and the garbage collector runs far less often.
    const readBuffer = Buffer.allocUnsafe(READ_BUFFER_BYTES);
    const onread = {
      buffer: readBuffer,
      callback: (n: number, buf: Uint8Array): boolean => {
        this.#onData(buf.subarray(0, n));
        return true;
      },
    };
    const secure = options.tls;
    const socket = secure
      ? tls.connect({
          host,
          port,
          onread,
          ...secure,
          // SNI carries a host name only; an IP address is checked against the certificate's IP entries.
          ...(secure.servername === undefined && net.isIP(host) === 0 ? { servername: host } : {}),
        } as tls.ConnectionOptions)
      : net.connect({ host, port, onread });
    this.#socket = socket;
    this.#writer = new TickWriter(socket);
    socket.setNoDelay(true);
    socket.setKeepAlive(true, 30_000);
    socket.setTimeout(options.connectTimeoutMs, () => {
      if (!this.#open) socket.destroy(new Error(`connect to ${addr} timed out after ${options.connectTimeoutMs} ms`));
    });
    let tcpConnected = false;
    this.ready = new Promise<void>((resolve, reject) => {
      socket.once('connect', () => {
        tcpConnected = true;
        if (secure) return;
        this.#open = true;
        socket.setTimeout(0);
        resolve();
      });
      socket.once('secureConnect', () => {
        this.#open = true;
        socket.setTimeout(0);
        resolve();
      });
      socket.once('close', () => {
        if (this.#open) return;
        // Past the TCP connect, a TLS connection that did not open failed its handshake: say so, with
        // the address, rather than as a reset.
        if (secure && tcpConnected && !this.#closing) this.#closed = tlsHandshakeError(addr, this.#closed);
        reject(this.#closed ?? new Error(`connection to ${addr} closed`));
      });
    });
    // A connect failure is reported through `ready`; nobody may be awaiting it yet.
    this.ready.catch(() => undefined);
    socket.on('error', (err) => {
      this.#closed ??= err;
    });
    socket.on('close', () => this.#onClose());
  }

  get isOpen(): boolean {
    return this.#open && this.#closed === null;
  }

  get isClosed(): boolean {
    return this.#closed !== null;
  }

  /** Requests waiting for their answer. */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Writes a frame. Returns false when the connection is already closed. */
  write(frame: Buffer): boolean {
    if (this.#closed) return false;
    this.#writer.write(frame);
    return true;
  }

  /** Waits for the response with `opaque`; the caller writes the request afterwards. */
  expect(opaque: number, call: PendingCall): void {
    this.#pending.set(opaque, call);
  }

  /** Stops waiting for `opaque` (timed out or aborted); a late answer is then dropped. */
  forget(opaque: number): void {
    this.#pending.delete(opaque);
  }

  hasPending(opaque: number): boolean {
    return this.#pending.has(opaque);
  }

  /** Closes the connection: ends it gracefully, and destroys it if it has not closed within `graceMs`. */
  end(graceMs: number): Promise<void> {
    if (this.#socket.destroyed) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => this.#socket.destroy(), graceMs);
      timer.unref();
      this.#socket.once('close', () => {
        clearTimeout(timer);
        resolve();
      });
      this.#closing = true;
      this.#closed ??= new Error(`connection to ${this.addr} was closed by the client`);
      this.#socket.end();
    });
  }

  /** Destroys the connection now, failing whatever waits on it with `err`. */
  destroy(err: Error): void {
    this.#closing = true;
    this.#closed ??= err;
    this.#socket.destroy();
  }

  #onData(chunk: Uint8Array): void {
    this.#answered = true;
    let frames: Buffer[];
    try {
      frames = this.#reader.push(chunk);
    } catch (e) {
      this.#logger.error({ addr: this.addr, err: e }, 'remoting peer sent an invalid frame; closing the connection');
      this.destroy(e as Error);
      return;
    }
    for (const frame of frames) {
      let cmd: RemotingCommand;
      try {
        cmd = decodeRemotingCommand(frame);
      } catch (e) {
        this.#logger.error(
          { addr: this.addr, err: e },
          'remoting peer sent a malformed command; closing the connection',
        );
        this.destroy(e as Error);
        return;
      }
      if (isResponse(cmd.flag)) {
        const call = this.#pending.get(cmd.opaque);
        if (call) {
          this.#pending.delete(cmd.opaque);
          call.resolve(cmd);
        } else {
          this.#logger.debug(
            { addr: this.addr, opaque: cmd.opaque, code: cmd.code },
            'response for no waiting request',
          );
        }
      } else {
        this.#events.onRequest(this, cmd);
      }
    }
  }

  #onClose(): void {
    // A server that requires TLS closes a plain connection at its first bytes without a word
    // (RocketMQ's NettyRemotingServer in enforcing mode does): name that likely cause.
    const refused =
      this.#open &&
      !this.#answered &&
      !this.#closing &&
      this.#pending.size > 0 &&
      !(this.#socket instanceof tls.TLSSocket);
    const err =
      this.#closed ??
      new Error(
        refused
          ? `connection to ${this.addr} was closed by the peer before it answered anything (a server that requires TLS does this to a plain connection: see the client's tls option)`
          : `connection to ${this.addr} closed by the peer`,
      );
    this.#closed = err;
    const calls = [...this.#pending.values()];
    this.#pending.clear();
    for (const call of calls) call.reject(err);
    this.#events.onClose(this, err);
  }
}
