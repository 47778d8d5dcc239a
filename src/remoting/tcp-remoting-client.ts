/**
 * TcpRemotingClient: the command model over RocketMQ's own remoting protocol on TCP, for Apache
 * RocketMQ NameServers and brokers (and the bundled broker's remoting port). The second
 * implementation of `RemotingClient`, next to HttpRemotingClient.
 *
 * - One connection per address (`host:port`, `[v6]:port`), opened on first use; many requests in
 *   flight on it at once, matched to their answers by `opaque`.
 * - Every call has a deadline (`timeoutMs`, connecting included) and an optional AbortSignal.
 * - A connection that dies fails its in-flight calls at once with a retriable `TransportError`. The
 *   next call reconnects; after a failed connect, calls to that address fail fast for a backoff that
 *   doubles from `reconnectBackoffMs` up to `maxReconnectBackoffMs` and resets once connected.
 * - Requests are written with a JSON header (RocketMQ's default) or, with `serializeType: 'ROCKETMQ'`,
 *   the binary one; answers are read in either.
 * - Requests the server sends (NOTIFY_CONSUMER_IDS_CHANGED, GET_CONSUMER_RUNNING_INFO,
 *   CONSUME_MESSAGE_DIRECTLY, ...) go to the handler registered with `onServerRequest`; a code with
 *   no handler is answered REQUEST_CODE_NOT_SUPPORTED, as RocketMQ's clients answer it.
 * - A peer that sends a frame over `maxFrameLength` or a malformed one has its connection closed,
 *   with the reason logged.
 */
import { InvalidArgumentError, RocketMQError, TransportError } from '../common/errors.js';
import { onAbort } from '../common/abort.js';
import { systemClock, type Clock, type TimerHandle } from '../common/clock.js';
import { silentLogger, type Logger } from '../common/logger.js';
import type { RemotingRequest, RemotingResponse } from '../protocol/command.js';
import { ResponseCode } from '../protocol/response-code.js';
import { DEFAULT_MAX_FRAME_LENGTH } from './frame-reader.js';
import type { LanguageName } from './language-code.js';
import {
  encodeRemotingCommand,
  isOneway,
  markOneway,
  markResponse,
  type ExtFields,
  type RemotingCommand,
  type SerializeType,
} from './remoting-command.js';
import type { InvokeOptions, RemotingClient, ServerRequestProcessor } from './remoting-client.js';
import { AbortError, ClosedError } from './remoting-errors.js';
import { aclDeniedError, aclRefusal, type Credentials } from './acl-credentials.js';
import { signExtFields } from './acl-signature.js';
import { requestToWire, responseFromWire } from './tcp-command-mapping.js';
import { TcpConnection } from './tcp-connection.js';
import { TlsError, type TlsOptions } from './tls-options.js';

export interface TcpRemotingClientOptions {
  /** Header serialization of the requests this client writes. Default `'JSON'` (RocketMQ's default). */
  serializeType?: SerializeType;
  /** Largest frame accepted from a peer, bytes, length prefix included. Default 16 MiB (RocketMQ's). */
  maxFrameLength?: number;
  /** How long opening a connection may take, ms (a call's own deadline may end it sooner). Default 3000. */
  connectTimeoutMs?: number;
  /** Wait after a failed connect before the next attempt, ms; doubles per failure. Default 100. */
  reconnectBackoffMs?: number;
  /** Upper bound of that wait, ms. Default 5000. */
  maxReconnectBackoffMs?: number;
  /** How long `close()` waits for calls in flight before destroying the connections, ms. Default 5000. */
  closeTimeoutMs?: number;
  /** The `language` written in every command. Default `'NODE_JS'`. */
  language?: LanguageName;
  /**
   * The `version` written in every command: the MQVersion ordinal the peer takes us for. Default 405
   * (4.9.8, which every 4.9 and 5.x server understands; at 401 and above a NameServer answers routes
   * in standard JSON).
   */
  version?: number;
  /**
   * Signs every request this client sends (oneway ones included) as RocketMQ's `AclClientRPCHook`
   * does; the answers to requests the server sends are not signed.
   */
  credentials?: Credentials | undefined;
  /**
   * Connect with TLS (RocketMQ's `tls.enable`): Node's `tls.connect` options (`ca`, `cert`, `key`,
   * `servername`, `rejectUnauthorized`). A failed handshake is a `TlsError` naming the address. Default: plain TCP.
   */
  tls?: TlsOptions | undefined;
  logger?: Logger;
  clock?: Clock;
}

/** A request the server sent (its header as raw strings; `body` as it came). */
export interface ServerRequest {
  /** The server's address as this client dialled it. */
  addr: string;
  code: number;
  /** True when the server expects no answer (RocketMQ's oneway flag). */
  oneway: boolean;
  language: LanguageName | null;
  version: number;
  remark: string | null;
  extFields: ExtFields;
  body: Buffer | null;
}

/** The answer to a server request. */
export interface ServerResponse {
  code: number;
  remark?: string | null | undefined;
  extFields?: Readonly<Record<string, string>> | null | undefined;
  body?: Buffer | null | undefined;
}

/** Answers a server request; resolving with nothing answers SUCCESS with no header or body. */
export type ServerRequestHandler = (request: ServerRequest) => ServerResponse | void | Promise<ServerResponse | void>;

/** RocketMQ's client-side RPC_TIME_OUT code (RemotingSysResponseCode), carried by a timed-out call's error. */
const RPC_TIME_OUT = -1006;
/** RocketMQ 4.9.8's MQVersion ordinal. */
const DEFAULT_VERSION = 405;

interface Backoff {
  failures: number;
  retryAt: number;
  lastError: Error;
}

function positiveInt(v: number | undefined, field: string, fallback: number): number {
  if (v === undefined) return fallback;
  if (!Number.isInteger(v) || v < 0) throw new InvalidArgumentError(field, `must be an integer >= 0, got ${String(v)}`);
  return v;
}

/** Splits `host:port` or `[v6]:port`. */
export function parseAddress(addr: string): { host: string; port: number } {
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(addr) ?? /^([^:\s]+):(\d+)$/.exec(addr);
  const port = m ? Number(m[2]) : NaN;
  if (!m || !m[1] || port < 1 || port > 65535)
    throw new InvalidArgumentError('addr', `not a host:port address: ${JSON.stringify(addr)}`);
  return { host: m[1], port };
}

export class TcpRemotingClient implements RemotingClient {
  readonly #serializeType: SerializeType;
  readonly #maxFrameLength: number;
  readonly #connectTimeoutMs: number;
  readonly #backoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #closeTimeoutMs: number;
  readonly #language: LanguageName;
  readonly #version: number;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #credentials: Credentials | undefined;
  readonly #tls: TlsOptions | undefined;
  readonly #connections = new Map<string, TcpConnection>();
  readonly #backoff = new Map<string, Backoff>();
  readonly #handlers = new Map<number, ServerRequestHandler>();
  /** Calls in flight (oneway writes included until written), for close(). */
  #inFlight = 0;
  /** Resolved when the last call in flight settles (only while close() waits for it). */
  #idle: (() => void) | undefined;
  #opaque = 0;
  #closing: Promise<void> | undefined;

  constructor(options: TcpRemotingClientOptions = {}) {
    const type = options.serializeType ?? 'JSON';
    if (type !== 'JSON' && type !== 'ROCKETMQ')
      throw new InvalidArgumentError('serializeType', `must be 'JSON' or 'ROCKETMQ', got ${String(type)}`);
    this.#serializeType = type;
    this.#maxFrameLength = positiveInt(options.maxFrameLength, 'maxFrameLength', DEFAULT_MAX_FRAME_LENGTH);
    if (this.#maxFrameLength < 8) throw new InvalidArgumentError('maxFrameLength', 'must be at least 8');
    this.#connectTimeoutMs = positiveInt(options.connectTimeoutMs, 'connectTimeoutMs', 3000);
    this.#backoffMs = positiveInt(options.reconnectBackoffMs, 'reconnectBackoffMs', 100);
    this.#maxBackoffMs = positiveInt(options.maxReconnectBackoffMs, 'maxReconnectBackoffMs', 5000);
    this.#closeTimeoutMs = positiveInt(options.closeTimeoutMs, 'closeTimeoutMs', 5000);
    this.#language = options.language ?? 'NODE_JS';
    this.#version = options.version ?? DEFAULT_VERSION;
    // Validates language and version once, by encoding an empty command.
    encodeRemotingCommand({ code: 0, opaque: 0, language: this.#language, version: this.#version });
    this.#logger = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    this.#credentials = options.credentials;
    this.#tls = options.tls;
  }

  /**
   * Registers the handler for requests the server sends with `code` (one handler per code; a later
   * registration replaces it). Returns a function that removes it.
   */
  onServerRequest(code: number, handler: ServerRequestHandler): () => void {
    this.#handlers.set(code, handler);
    return () => {
      if (this.#handlers.get(code) === handler) this.#handlers.delete(code);
    };
  }

  /** RemotingClient.registerProcessor: `onServerRequest` for a processor that speaks commands, not frames. */
  registerProcessor(code: number, processor: ServerRequestProcessor): () => void {
    return this.onServerRequest(code, async (req) => {
      const res = await processor(
        { code: req.code, header: { ...(req.extFields ?? {}) }, body: req.body ?? undefined },
        req.addr,
      );
      if (!res) return undefined;
      return { code: res.code, remark: res.remark ?? null, body: res.body ?? null };
    });
  }

  async invoke(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<RemotingResponse> {
    const p = this.#invoke(addr, request, opts, false);
    this.#track(p);
    const cmd = (await p) as RemotingCommand;
    return responseFromWire(request.code, cmd);
  }

  /**
   * RocketMQ's oneway: the request goes out with the oneway flag and no answer is awaited. A failure
   * to connect or write is logged at debug level, never thrown.
   */
  invokeOneway(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<void> {
    if (this.#closing) {
      this.#logger.debug({ addr, code: request.code }, 'oneway call after close dropped');
      return Promise.resolve();
    }
    const p = this.#invoke(addr, request, opts, true).then(
      () => undefined,
      (err: unknown) => {
        this.#logger.debug({ addr, code: request.code, err }, 'oneway call failed');
      },
    );
    this.#track(p);
    return p;
  }

  /** Counts `p` in flight until it settles (a counter: no promise or set entry per call). */
  #track(p: Promise<unknown>): void {
    this.#inFlight++;
    p.then(this.#untrack, this.#untrack);
  }

  readonly #untrack = (): void => {
    if (--this.#inFlight === 0) this.#idle?.();
  };

  async #invoke(addr: string, request: RemotingRequest, opts: InvokeOptions, oneway: boolean): Promise<unknown> {
    if (this.#closing) throw new ClosedError('the remoting client is closed');
    const wire = requestToWire(request);
    const body = wire.body;
    let extFields: ExtFields = wire.extFields;
    const signal = opts.signal;
    const what = `request ${request.code} to ${addr}`;
    if (signal?.aborted) throw new AbortError(`${what} aborted before it was sent`, { cause: signal.reason });
    let timeoutMs = opts.timeoutMs;
    let accessKey: string | undefined;
    if (this.#credentials) {
      // Fixed credentials (and a function answering at once) sign without a turn of the event loop,
      // so requests keep their order; an async function's wait counts against the call's deadline.
      const started = this.#clock.now();
      const pending = this.#credentials.get(timeoutMs, this.#clock, signal);
      const credentials = pending instanceof Promise ? await pending : pending;
      if (pending instanceof Promise) {
        timeoutMs = Math.max(1, timeoutMs - (this.#clock.now() - started));
        if (this.#closing) throw new ClosedError('the remoting client is closed');
      }
      extFields = signExtFields(extFields, body, credentials);
      accessKey = credentials.accessKey;
    }
    const opaque = this.#nextOpaque();
    const frame = encodeRemotingCommand(
      {
        code: request.code,
        language: this.#language,
        version: this.#version,
        opaque,
        flag: oneway ? markOneway(0) : 0,
        remark: null,
        extFields,
        body,
      },
      { serializeType: this.#serializeType },
    );

    let timer: TimerHandle | undefined;
    let unlisten: (() => void) | undefined;
    let conn: TcpConnection | undefined;
    try {
      const answer = await new Promise<unknown>((resolve, reject) => {
        let done = false;
        const fail = (err: Error): void => {
          if (done) return;
          done = true;
          conn?.forget(opaque);
          reject(err);
        };
        timer = this.#clock.setTimeout(
          () =>
            fail(
              new TransportError(`${what} timed out after ${opts.timeoutMs} ms`, {
                timeout: true,
                responseCode: RPC_TIME_OUT,
              }),
            ),
          timeoutMs,
        );
        if (signal)
          unlisten = onAbort(signal, () => fail(new AbortError(`${what} was aborted`, { cause: signal.reason })));
        this.#connection(addr).then(
          (c) => {
            if (done) return;
            conn = c;
            if (!oneway)
              c.expect(opaque, {
                resolve: (cmd) => {
                  done = true;
                  resolve(cmd);
                },
                reject: (err) =>
                  fail(
                    err instanceof ClosedError
                      ? err
                      : new TransportError(`${what} failed: connection lost (${err.message})`, { cause: err }),
                  ),
              });
            if (!c.write(frame)) return fail(new TransportError(`${what} failed: connection closed`));
            if (oneway) {
              done = true;
              resolve(undefined);
            }
          },
          (err: Error) => fail(err instanceof RocketMQError ? err : new TransportError(err.message, { cause: err })),
        );
      });
      const cmd = answer as RemotingCommand | undefined;
      const refusal = cmd && cmd.code !== ResponseCode.SUCCESS ? aclRefusal(cmd.remark, accessKey) : null;
      if (refusal) throw aclDeniedError(`request ${request.code}`, addr, refusal, (cmd as RemotingCommand).code);
      return answer;
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
      unlisten?.();
    }
  }

  #nextOpaque(): number {
    this.#opaque = (this.#opaque + 1) | 0;
    return this.#opaque;
  }

  /** The open (or opening) connection to `addr`, subject to the reconnect backoff. */
  async #connection(addr: string): Promise<TcpConnection> {
    const existing = this.#connections.get(addr);
    if (existing && !existing.isClosed) {
      await existing.ready;
      return existing;
    }
    const { host, port } = parseAddress(addr);
    const backoff = this.#backoff.get(addr);
    const now = this.#clock.now();
    if (backoff && now < backoff.retryAt) {
      const last = backoff.lastError;
      // A refused handshake stays a TlsError while the backoff lasts: the caller learns it is TLS, not TCP.
      if (last instanceof TlsError) throw new TlsError(addr, last.message, last.tlsCode);
      throw new TransportError(
        `cannot connect to ${addr} (${last.message}); next attempt in ${backoff.retryAt - now} ms`,
        { cause: last },
      );
    }
    const conn = new TcpConnection(addr, host, port, {
      maxFrameLength: this.#maxFrameLength,
      connectTimeoutMs: this.#connectTimeoutMs,
      logger: this.#logger,
      tls: this.#tls,
      events: {
        onRequest: (c, cmd) => this.#onServerRequest(c, cmd),
        onClose: (c, err) => {
          if (this.#connections.get(addr) === c) this.#connections.delete(addr);
          this.#logger.debug({ addr, err }, 'remoting connection closed');
        },
      },
    });
    this.#connections.set(addr, conn);
    try {
      await conn.ready;
    } catch (e) {
      const failures = (backoff?.failures ?? 0) + 1;
      const wait = Math.min(this.#backoffMs * 2 ** Math.min(failures - 1, 20), this.#maxBackoffMs);
      this.#backoff.set(addr, { failures, retryAt: this.#clock.now() + wait, lastError: e as Error });
      if (e instanceof TlsError) throw e;
      throw new TransportError(`cannot connect to ${addr}: ${(e as Error).message}`, { cause: e });
    }
    this.#backoff.delete(addr);
    if (this.#closing) {
      conn.destroy(new ClosedError('the remoting client is closed'));
      throw new ClosedError('the remoting client closed while connecting');
    }
    return conn;
  }

  #onServerRequest(conn: TcpConnection, cmd: RemotingCommand): void {
    const oneway = isOneway(cmd.flag);
    const handler = this.#handlers.get(cmd.code);
    const reply = (res: ServerResponse): void => {
      if (oneway) return;
      try {
        conn.write(
          encodeRemotingCommand(
            {
              code: res.code,
              language: this.#language,
              version: this.#version,
              opaque: cmd.opaque,
              flag: markResponse(0),
              remark: res.remark ?? null,
              extFields: res.extFields ?? null,
              body: res.body ?? null,
            },
            { serializeType: this.#serializeType },
          ),
        );
      } catch (e) {
        this.#logger.error({ addr: conn.addr, code: cmd.code, err: e }, 'cannot write the answer to a server request');
      }
    };
    if (!handler) {
      // RocketMQ: NettyRemotingAbstract answers an unknown request code this way.
      reply({ code: ResponseCode.REQUEST_CODE_NOT_SUPPORTED, remark: ` request type ${cmd.code} not supported` });
      return;
    }
    const request: ServerRequest = {
      addr: conn.addr,
      code: cmd.code,
      oneway,
      language: cmd.language,
      version: cmd.version,
      remark: cmd.remark,
      extFields: cmd.extFields ?? {},
      body: cmd.body,
    };
    const answered = new Promise<ServerResponse | void>((resolve) => resolve(handler(request)));
    answered.then(
      (res) => reply(res ?? { code: ResponseCode.SUCCESS }),
      (err: unknown) => {
        this.#logger.warn({ addr: conn.addr, code: cmd.code, err }, 'server request handler failed');
        reply({ code: ResponseCode.SYSTEM_ERROR, remark: err instanceof Error ? err.message : String(err) });
      },
    );
  }

  /** Addresses with an open connection. */
  get connectedAddresses(): string[] {
    return [...this.#connections].filter(([, c]) => c.isOpen).map(([a]) => a);
  }

  /**
   * Waits for calls in flight (up to `closeTimeoutMs`), then closes every connection; calls made
   * afterwards fail with `ClosedError`. Idempotent: a second call returns the same promise.
   */
  close(): Promise<void> {
    this.#closing ??= this.#closeAll();
    return this.#closing;
  }

  async #closeAll(): Promise<void> {
    let timer: TimerHandle | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = this.#clock.setTimeout(resolve, this.#closeTimeoutMs);
    });
    try {
      const idle = new Promise<void>((resolve) => {
        if (this.#inFlight === 0) resolve();
        else this.#idle = resolve;
      });
      await Promise.race([idle, deadline]);
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
    }
    const conns = [...this.#connections.values()];
    this.#connections.clear();
    for (const c of conns) if (c.pendingCount > 0) c.destroy(new ClosedError('the remoting client closed'));
    await Promise.all(conns.map((c) => c.end(1000)));
    this.#backoff.clear();
  }
}
