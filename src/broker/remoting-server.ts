/**
 * The broker's RocketMQ remoting listener (RocketMQ: NettyRemotingServer), on node:net only: a thin
 * shell that splits a connection's bytes into RocketMQ frames, hands each request to `onRequest`, and
 * writes the answer back with the request's `opaque`, the response flag and the request's header
 * serialization (JSON or ROCKETMQ).
 *
 * - Many requests run at once on one connection: a held pull does not delay the calls behind it.
 *   Past `maxInFlightPerConnection` a request is answered SYSTEM_BUSY, as RocketMQ does when its
 *   executor queue is full.
 * - A oneway request (flag bit 1) is run and never answered.
 * - A frame that cannot be read (a lying length, a length above `maxFrameBytes`, an unknown serialize
 *   type, a header that does not parse) closes that connection, with the reason logged; the others go on.
 * - When a connection closes, everything it had waiting is released (held pulls are dropped) and
 *   `onClose` runs (the broker forgets the clients that heartbeated on it).
 * - At most `maxConnections` connections; one more is closed at once. A connection with no traffic and
 *   nothing in flight for `idleTimeoutMs` is closed (RocketMQ: serverChannelMaxIdleTimeSeconds).
 * - Answers ready in the same turn of the event loop leave in one write (the socket is corked until the
 *   turn's callbacks are done), and a body is written as it is, after its header, never copied into a
 *   frame. While the client does not read its answers (the socket's buffer is full), its connection is
 *   not read either, so it cannot queue more work.
 */
import net, { type AddressInfo, type Socket } from 'node:net';
import type { Logger } from '../common/logger.js';
import { ResponseCode } from '../protocol/index.js';
import { FrameReader } from '../remoting/frame-reader.js';
import { TickWriter } from '../remoting/tick-writer.js';
import {
  decodeRemotingCommand,
  encodeRemotingCommand,
  frameSerializeType,
  isOneway,
  isResponse,
  markResponse,
  type RemotingCommand,
  type RemotingCommandInput,
  type SerializeType,
} from '../remoting/remoting-command.js';
import { ClientConnection } from './client-connection.js';
import { releasePullBody } from '../store/index.js';

export interface RemotingServerOptions {
  host: string;
  port: number;
  /** Largest frame accepted, bytes (length prefix included). */
  maxFrameBytes: number;
  maxConnections: number;
  /** Requests of one connection being handled at once before new ones are answered SYSTEM_BUSY. */
  maxInFlightPerConnection: number;
  /** A connection idle this long with nothing in flight is closed, ms. */
  idleTimeoutMs: number;
  logger: Logger;
  /**
   * Answers one request: the response (its opaque, flag and serialization are set here), or null for
   * none. Must not throw; a rejection is answered SYSTEM_ERROR.
   */
  onRequest(command: RemotingCommand, connection: RemotingConnection): Promise<RemotingCommandInput | null>;
  /** Called once when a connection has closed, after its waiting calls were released. */
  onClose?(connection: RemotingConnection): void;
}

/** RocketMQ: the remark of a request refused because the server is overloaded. */
const OVERLOAD_REMARK = '[OVERLOAD]system busy, start flow control for a while';

/** One client connection as the processors see it (ConnectionInfo) plus what the broker keeps on it. */
export class RemotingConnection extends ClientConnection {
  /** Client ids that sent a heartbeat on this connection, with their consumer and producer groups. */
  readonly clients = new Map<string, { consumerGroups: Set<string>; producerGroups: Set<string> }>();
  /** Requests being handled. */
  inFlight = 0;
  readonly #socket: Socket;
  readonly #writer: TickWriter;
  readonly #logger: Logger;

  constructor(socket: Socket, logger: Logger) {
    super(`${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? 0}`);
    this.#socket = socket;
    this.#writer = new TickWriter(socket);
    this.#logger = logger;
  }

  /**
   * Writes a frame (`head`, followed by `body` when the frame's body is given apart) unless the connection
   * is gone. With `releaseBody`, nothing but this write holds the body: a pull body's memory is handed
   * back for reuse once the socket has taken it. Writes of one event-loop turn are gathered into one system call; when the socket's buffer is
   * full, reading from the connection pauses until it drains.
   */
  write(head: Buffer, body?: Uint8Array | null, releaseBody = false): void {
    const socket = this.#socket;
    if (this.gone || socket.destroyed) return;
    this.#writer.write(head, body, releaseBody && body ? () => releasePullBody(body) : undefined);
    if (socket.writableNeedDrain && !socket.isPaused()) {
      socket.pause();
      socket.once('drain', () => socket.resume());
    }
  }

  /** Sends a server-initiated oneway request (e.g. NOTIFY_CONSUMER_IDS_CHANGED); never throws. */
  sendOneway(command: RemotingCommandInput, serializeType: SerializeType = 'JSON'): void {
    try {
      this.write(encodeRemotingCommand(command, { serializeType }));
    } catch (e) {
      this.#logger.warn({ err: e, code: command.code, remote: this.remoteAddress }, 'oneway request not sent');
    }
  }

  /** Closes the socket (the 'close' handler releases what waits). */
  destroy(): void {
    this.#socket.destroy();
  }
}

/**
 * The frame of the response `command` to the request `opaque` as its head (length, header) and its body
 * apart, so a large body is written as it is rather than copied into one buffer with the header. The
 * response flag is set here; the command itself is left as it is (one object of one shape is encoded,
 * not a spread copy per answer).
 */
export function encodeResponseParts(
  command: RemotingCommandInput,
  opaque: number,
  serializeType: SerializeType,
): { head: Buffer; body: Uint8Array | null } {
  const body = command.body ?? null;
  const parts = {
    code: command.code,
    language: command.language,
    version: command.version,
    opaque,
    flag: markResponse(command.flag ?? 0),
    remark: command.remark,
    extFields: command.extFields,
    body: null as Uint8Array | null,
  };
  const head = encodeRemotingCommand(parts, { serializeType });
  if (body === null || body.length === 0) return { head, body: null };
  // The total length at the front counts the body too (see remoting-command.ts for the frame's layout).
  const total = head.readInt32BE(0) + body.length;
  if (total > 0x7fffffff) {
    parts.body = body; // refused there, naming the body
    return { head: encodeRemotingCommand(parts, { serializeType }), body: null };
  }
  head.writeInt32BE(total, 0);
  return { head, body };
}

let nextServerOpaque = 0;
/** Opaque for server-initiated requests (RocketMQ: one process-wide counter). */
export function nextOpaque(): number {
  nextServerOpaque = (nextServerOpaque + 1) | 0;
  return nextServerOpaque;
}

export class RemotingServer {
  private readonly server: net.Server;
  private readonly options: RemotingServerOptions;
  private readonly connections = new Set<RemotingConnection>();
  private readonly sockets = new Set<Socket>();
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  private closing: Promise<void> | undefined;

  constructor(options: RemotingServerOptions) {
    this.options = options;
    this.server = net.createServer({ noDelay: true, keepAlive: true }, (socket) => this.onConnection(socket));
    this.server.maxConnections = options.maxConnections;
    this.server.on('drop', (d?: { remoteAddress?: string; remotePort?: number }) =>
      options.logger.warn(
        { remote: `${d?.remoteAddress ?? '?'}:${d?.remotePort ?? 0}`, max: options.maxConnections },
        'remoting connection refused: too many connections',
      ),
    );
  }

  /** Number of open connections. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Open connections (for server-initiated requests). */
  allConnections(): Iterable<RemotingConnection> {
    return this.connections;
  }

  /** Binds; resolves with the bound port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error): void => reject(e);
      this.server.once('error', onError);
      this.server.listen({ port: this.options.port, host: this.options.host }, () => {
        this.server.off('error', onError);
        this.server.on('error', (e) => this.options.logger.error({ err: e }, 'remoting server error'));
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops accepting connections; calls in flight go on. */
  stopAccepting(): void {
    this.closing ??= new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  /** Waits up to `timeoutMs` for calls in flight, then closes every connection. Idempotent. */
  async close(timeoutMs: number): Promise<void> {
    this.stopAccepting();
    if (this.active > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((r) => {
        this.idleWaiters.push(r);
        timer = setTimeout(r, timeoutMs);
      });
      clearTimeout(timer);
    }
    for (const s of this.sockets) s.destroy();
    await this.closing;
  }

  private onConnection(socket: Socket): void {
    const o = this.options;
    const connection = new RemotingConnection(socket, o.logger);
    this.sockets.add(socket);
    this.connections.add(connection);
    const reader = new FrameReader({ maxFrameLength: o.maxFrameBytes });
    socket.setTimeout(o.idleTimeoutMs);
    socket.on('timeout', () => {
      if (connection.inFlight > 0) return;
      o.logger.info({ remote: connection.remoteAddress }, 'remoting connection idle, closed');
      socket.destroy();
    });
    socket.on('data', (chunk: Buffer) => {
      let frames: Buffer[];
      try {
        frames = reader.push(chunk);
      } catch (e) {
        return this.refuse(connection, e);
      }
      for (const frame of frames) {
        let command: RemotingCommand;
        try {
          command = decodeRemotingCommand(frame);
        } catch (e) {
          return this.refuse(connection, e);
        }
        // A response to one of our oneway notifications would have the response flag: nothing waits for it.
        if (isResponse(command.flag)) continue;
        this.dispatch(connection, command, frameSerializeType(frame) ?? 'JSON');
      }
    });
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'ECONNRESET' && e.code !== 'EPIPE')
        o.logger.warn({ err: e, remote: connection.remoteAddress }, 'remoting connection error');
    });
    socket.on('close', () => {
      this.sockets.delete(socket);
      this.connections.delete(connection);
      connection.markGone();
      try {
        o.onClose?.(connection);
      } catch (e) {
        o.logger.error({ err: e }, 'remoting connection close handler failed');
      }
    });
  }

  private refuse(connection: RemotingConnection, e: unknown): void {
    this.options.logger.error(
      { err: e, remote: connection.remoteAddress },
      `remoting frame refused, connection closed: ${(e as Error)?.message ?? String(e)}`,
    );
    connection.destroy();
  }

  private dispatch(connection: RemotingConnection, command: RemotingCommand, serializeType: SerializeType): void {
    if (connection.inFlight >= this.options.maxInFlightPerConnection) {
      this.answer(connection, command, serializeType, {
        code: ResponseCode.SYSTEM_BUSY,
        opaque: command.opaque,
        remark: OVERLOAD_REMARK,
      });
      return;
    }
    connection.inFlight++;
    this.active++;
    void this.run(connection, command, serializeType);
  }

  /** Handles one request and answers it (one method per request, no closures or promise chain of its own). */
  private async run(connection: RemotingConnection, command: RemotingCommand, serializeType: SerializeType) {
    try {
      let response: RemotingCommandInput | null;
      try {
        response = await this.options.onRequest(command, connection);
      } catch (e) {
        this.options.logger.error({ err: e, code: command.code }, 'remoting request handling failed');
        const remark = (e as Error)?.message || 'system error';
        response = { code: ResponseCode.SYSTEM_ERROR, opaque: command.opaque, remark };
      }
      if (response && !connection.gone) this.answer(connection, command, serializeType, response);
    } finally {
      connection.inFlight--;
      if (--this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** Writes the answer to `command` (nothing for a oneway request). */
  private answer(
    connection: RemotingConnection,
    command: RemotingCommand,
    serializeType: SerializeType,
    response: RemotingCommandInput,
  ): void {
    if (isOneway(command.flag)) return;
    let frame: { head: Buffer; body: Uint8Array | null };
    try {
      frame = encodeResponseParts(response, command.opaque, serializeType);
    } catch (e) {
      this.options.logger.error({ err: e, code: command.code }, 'remoting response could not be encoded');
      const error = { code: ResponseCode.SYSTEM_ERROR, opaque: command.opaque, flag: markResponse(0) };
      frame = { head: encodeRemotingCommand({ ...error, remark: 'system error' }, { serializeType }), body: null };
    }
    // Nothing keeps a response's body after it is written (pull bodies are reused then).
    connection.write(frame.head, frame.body, true);
  }
}
