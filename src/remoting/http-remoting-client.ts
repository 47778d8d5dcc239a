/**
 * HttpRemotingClient: the command model over HTTP/1.1 (docs/protocol.md), on undici. This file is
 * the only network code of the client side.
 *
 * - Two lanes per broker origin, each an undici `Pool` with keep-alive. HTTP/1.1 carries one call per
 *   connection at a time, and a held call (a long-polling pull, the membership watch) occupies its
 *   connection for up to the broker's suspend time, so:
 *   - the **held lane** carries PULL_MESSAGE, LITE_PULL_MESSAGE and WATCH_CONSUMER_IDS, with no limit
 *     on connections: every queue's pull has a connection of its own and never waits behind another
 *     queue's, so the number of queues a consumer holds bounds nothing here (idle connections close
 *     after `keepAliveTimeoutMs`);
 *   - the **liveness lane** carries the calls that keep a client a member (heartbeat, routes, member
 *     list, unregister, subscription check) on 4 connections: never behind a held pull, nor behind a
 *     burst of per-queue calls;
 *   - the **control lane** carries everything else (offsets, sends, queue offsets), on up to
 *     `connectionsPerBroker` connections (default 64): a control call never waits behind a held pull.
 * - Every call has a deadline (`timeoutMs`) and an optional AbortSignal. undici's own headers/body
 *   timeouts are set just above the call's deadline, so the deadline decides: a held pull whose
 *   deadline is above the broker's suspend time is always answered by the broker first.
 * - Request headers are validated with the command's zod schema before sending; response headers with
 *   the response schema after decoding. Protocol outcomes (response codes) are returned, not thrown.
 */
import type { Dispatcher, Pool } from 'undici';
import type { z } from 'zod';
import { InvalidArgumentError, RocketMQError, TransportError } from '../common/errors.js';
import { silentLogger, type Logger } from '../common/logger.js';
import { onAbort } from '../common/abort.js';
import { systemClock, type Clock } from '../common/clock.js';
import type { RemotingRequest, RemotingResponse } from '../protocol/command.js';
import { COMMANDS } from '../protocol/commands/index.js';
import { FRAME_CONTENT_TYPE, decodeFrame, encodeFrame } from '../protocol/frame.js';
import { checkHeader } from '../protocol/header-check.js';
import { RequestCode } from '../protocol/request-code.js';
import { ResponseCode } from '../protocol/response-code.js';
import type { InvokeOptions, RemotingClient } from './remoting-client.js';
import { AbortError, ClosedError, RequestRejectedError } from './remoting-errors.js';
import { aclDeniedError, aclRefusal, signHttpHeader, type Credentials } from './acl-credentials.js';
import { isTlsFailure, tlsHandshakeError, type TlsOptions } from './tls-options.js';

export interface HttpRemotingClientOptions {
  /** Connections per broker origin for control calls (everything but held pulls and watches). Default 64. */
  connectionsPerBroker?: number;
  /** Sent as `Authorization: Bearer <token>` when the broker was started with an access token. */
  accessToken?: string | undefined;
  /**
   * Signs every request as RocketMQ's `AclClientRPCHook` does, the `AccessKey`, `SecurityToken` and
   * `Signature` fields added to the frame's header (the signature covers the header's values, sorted
   * by field name, then the body).
   */
  credentials?: Credentials | undefined;
  /** How long `close()` waits for calls in flight before aborting them, ms. Default 5000. */
  closeTimeoutMs?: number;
  /** How long an idle keep-alive connection is kept, ms. Default 4000 (below Node servers' 5 s). */
  keepAliveTimeoutMs?: number;
  /**
   * TLS options for `https://` brokers (Node's `tls.connect` options: `ca`, `cert`, `key`, `servername`,
   * `rejectUnauthorized`). Without them an `https://` broker is checked against the system's CAs.
   */
  tls?: TlsOptions | undefined;
  logger?: Logger;
  clock?: Clock;
}

/** undici's own timeouts sit this far above the call's deadline, so ours always fires first. */
const UNDICI_TIMEOUT_MARGIN_MS = 1000;
/** RocketMQ's client-side RPC_TIME_OUT code (RemotingSysResponseCode), carried by a timed-out call's error. */
const RPC_TIME_OUT = -1006;

/** The documented codes of the HTTP refusals; any other 4xx is ERR_BAD_REQUEST. */
const HTTP_REJECT_CODES: Readonly<Record<number, string>> = Object.freeze({
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  413: 'PAYLOAD_TOO_LARGE',
});

/** Calls the broker may hold (long polling): they go on the held lane, one connection each. */
const HELD_CALLS: ReadonlySet<number> = new Set([
  RequestCode.PULL_MESSAGE,
  RequestCode.LITE_PULL_MESSAGE,
  RequestCode.WATCH_CONSUMER_IDS,
]);

/**
 * Calls that keep a client a member (heartbeat, routes, the member list, unregister, the subscription
 * check): few and small, on a lane of their own, so that a burst of per-queue calls (a thousand offset
 * updates or offset queries after a rebalance) never delays a heartbeat into an eviction.
 */
const LIVENESS_CALLS: ReadonlySet<number> = new Set([
  RequestCode.HEART_BEAT,
  RequestCode.UNREGISTER_CLIENT,
  RequestCode.GET_ROUTEINFO_BY_TOPIC,
  RequestCode.GET_CONSUMER_LIST_BY_GROUP,
  RequestCode.CHECK_CLIENT_CONFIG,
]);
/** Connections of the liveness lane per broker. */
const LIVENESS_CONNECTIONS = 4;

let poolLoading: Promise<typeof Pool> | undefined;
/**
 * undici's `Pool` is loaded on the first HTTP call, not with the package, and on its own: a process that
 * only talks TCP remoting (namesrvAddr), or only imports the package, does not load undici at all, and
 * one that talks HTTP loads the connection pool without undici's fetch, WebSocket, cache and mock
 * modules (about half the resident memory of `import('undici')`). Should an undici release move or
 * hide that module, the pool comes from undici's public entry point instead. A failed load is an
 * `ERR_STATE` error, and the next call tries again.
 */
function loadPool(): Promise<typeof Pool> {
  return (poolLoading ??= import('undici/lib/dispatcher/pool.js')
    .then((m) => {
      if (typeof m.default !== 'function') throw new TypeError('not a class');
      return m.default;
    })
    .catch(() => import('undici').then((m) => m.Pool))
    .catch((e: unknown) => {
      poolLoading = undefined;
      throw new RocketMQError(
        'ERR_STATE',
        `the HTTP transport could not load undici: ${(e as Error)?.message ?? String(e)}`,
        { cause: e },
      );
    }));
}

interface Lanes {
  control: Pool;
  held: Pool;
  liveness: Pool;
}

interface Target {
  lanes: Lanes;
  basePath: string;
}

/** The response frame's header: `{code, remark?, header}`. */
function readResponseEnvelope(raw: unknown): { code: number; remark: string | undefined; header: unknown } {
  if (raw === null || typeof raw !== 'object') throw badResponse('the response header is not an object');
  const env = raw as { code?: unknown; remark?: unknown; header?: unknown };
  if (typeof env.code !== 'number' || !Number.isInteger(env.code))
    throw badResponse('the response has no integer code');
  if (env.remark !== undefined && env.remark !== null && typeof env.remark !== 'string')
    throw badResponse('the response remark is not a string');
  return { code: env.code, remark: typeof env.remark === 'string' ? env.remark : undefined, header: env.header ?? {} };
}

function badResponse(message: string, cause?: unknown): RocketMQError {
  return new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${message}`, { cause });
}

/** What a call ended with: the HTTP status and the whole response body. */
interface RawAnswer {
  status: number;
  bytes: Buffer;
}

/**
 * One call as an undici dispatch handler: collects the response body and settles a promise.
 *
 * Why not `pool.request()`: it wraps every answer in a Readable stream (plus an AsyncResource and an
 * AbortSignal listener), and `arrayBuffer()` then copies the body out of it; for a command answered
 * with one small frame that machinery cost more CPU than the HTTP exchange itself. Here the body's
 * chunks are kept as they arrive (views of the socket reads, which undici never reuses) and joined
 * only when there are several.
 */
class CallHandler implements Dispatcher.DispatchHandler {
  status = 0;
  #chunks: Buffer[] = [];
  #size = 0;
  #controller: Dispatcher.DispatchController | null = null;
  /** Set when the call was aborted before undici started it: it is aborted as soon as it starts. */
  #pendingAbort: Error | null = null;
  #settled = false;
  readonly #resolve: (answer: RawAnswer) => void;
  readonly #reject: (err: unknown) => void;

  constructor(resolve: (answer: RawAnswer) => void, reject: (err: unknown) => void) {
    this.#resolve = resolve;
    this.#reject = reject;
  }

  /** Ends the call now with `err` (the caller's deadline or signal); undici is told to drop it. False when already settled. */
  abort(err: Error): boolean {
    if (this.#settled) return false;
    this.#settled = true;
    this.#reject(err);
    if (this.#controller) this.#controller.abort(err);
    else this.#pendingAbort = err;
    return true;
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.#pendingAbort) return controller.abort(this.#pendingAbort);
    this.#controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number): void {
    // 1xx informational answers are followed by the real one.
    if (statusCode >= 200) this.status = statusCode;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    const chunks = this.#chunks;
    const bytes = chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, this.#size);
    this.#resolve({ status: this.status, bytes });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.#reject(err);
  }
}

export class HttpRemotingClient implements RemotingClient {
  readonly #connections: number;
  readonly #accessToken: string | undefined;
  readonly #credentials: Credentials | undefined;
  readonly #closeTimeoutMs: number;
  readonly #keepAliveTimeoutMs: number;
  readonly #tls: TlsOptions | undefined;
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #pools = new Map<string, Lanes>();
  readonly #targets = new Map<string, Target>();
  /** The same for every call (undici only reads it). */
  readonly #headers: Readonly<Record<string, string>>;
  #closing: Promise<void> | undefined;

  constructor(options: HttpRemotingClientOptions = {}) {
    const n = options.connectionsPerBroker ?? 64;
    if (!Number.isInteger(n) || n < 1)
      throw new InvalidArgumentError('connectionsPerBroker', `must be an integer >= 1, got ${String(n)}`);
    this.#connections = n;
    this.#accessToken = options.accessToken;
    this.#credentials = options.credentials;
    this.#closeTimeoutMs = options.closeTimeoutMs ?? 5000;
    this.#keepAliveTimeoutMs = options.keepAliveTimeoutMs ?? 4000;
    this.#tls = options.tls;
    this.#logger = options.logger ?? silentLogger;
    this.#clock = options.clock ?? systemClock;
    const headers: Record<string, string> = { 'content-type': FRAME_CONTENT_TYPE };
    if (this.#accessToken) headers.authorization = `Bearer ${this.#accessToken}`;
    this.#headers = Object.freeze(headers);
  }

  async #target(addr: string): Promise<Target> {
    const cached = this.#targets.get(addr);
    if (cached) return cached;
    let url: URL;
    try {
      url = new URL(addr);
    } catch (e) {
      throw new InvalidArgumentError('addr', `not a broker URL: ${JSON.stringify(addr)}`, { cause: e });
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new InvalidArgumentError('addr', `a broker URL must be http: or https:, got ${JSON.stringify(addr)}`);
    const Pool = await loadPool();
    if (this.#closing) throw new ClosedError('the remoting client is closed');
    const again = this.#targets.get(addr);
    if (again) return again;
    let lanes = this.#pools.get(url.origin);
    if (!lanes) {
      const keepAliveTimeout = this.#keepAliveTimeoutMs;
      // undici's connector takes Node's tls.connect options; they matter only for an https: origin.
      const tls =
        url.protocol === 'https:' && this.#tls ? { connect: { ...this.#tls } as Pool.Options['connect'] } : {};
      lanes = {
        control: new Pool(url.origin, { connections: this.#connections, pipelining: 1, keepAliveTimeout, ...tls }),
        held: new Pool(url.origin, { connections: null, pipelining: 1, keepAliveTimeout, ...tls }),
        liveness: new Pool(url.origin, { connections: LIVENESS_CONNECTIONS, pipelining: 1, keepAliveTimeout, ...tls }),
      };
      this.#pools.set(url.origin, lanes);
    }
    const target = { lanes, basePath: url.pathname.replace(/\/+$/, '') };
    this.#targets.set(addr, target);
    return target;
  }

  async invoke(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<RemotingResponse> {
    if (this.#closing) throw new ClosedError('the remoting client is closed');
    const spec = COMMANDS.get(request.code);
    if (!spec) throw new InvalidArgumentError('request.code', `no command with request code ${request.code}`);
    if (request.headerChecked !== true) {
      const checked = checkHeader(spec.requestHeader, request.header);
      if (!checked.ok) throw new InvalidArgumentError(`${spec.name}.${checked.field}`, checked.message);
    }
    const { lanes, basePath } = this.#targets.get(addr) ?? (await this.#target(addr));
    const signal = opts.signal;
    if (signal?.aborted) throw new AbortError(`${spec.name} aborted before it was sent`, { cause: signal.reason });
    let timeoutMs = opts.timeoutMs;
    let header: Readonly<Record<string, unknown>> | undefined = request.header;
    let accessKey: string | undefined;
    if (this.#credentials) {
      // An async credentials function's wait counts against the call's deadline.
      const started = this.#clock.now();
      const pending = this.#credentials.get(timeoutMs, this.#clock, signal);
      const credentials = pending instanceof Promise ? await pending : pending;
      if (pending instanceof Promise) {
        timeoutMs = Math.max(1, timeoutMs - (this.#clock.now() - started));
        if (this.#closing) throw new ClosedError('the remoting client is closed');
      }
      header = signHttpHeader(header, request.body, credentials);
      accessKey = credentials.accessKey;
    }
    const pool = HELD_CALLS.has(request.code)
      ? lanes.held
      : LIVENESS_CALLS.has(request.code)
        ? lanes.liveness
        : lanes.control;
    const dispatchOptions: Dispatcher.DispatchOptions = {
      path: `${basePath}/v1/${spec.name}`,
      method: 'POST',
      headers: this.#headers,
      body: encodeFrame(header, request.body),
      headersTimeout: timeoutMs + UNDICI_TIMEOUT_MARGIN_MS,
      bodyTimeout: timeoutMs + UNDICI_TIMEOUT_MARGIN_MS,
    };
    let ended: 'timeout' | 'aborted' | null = null;
    let handler: CallHandler | undefined;
    const timer = this.#clock.setTimeout(() => {
      if (handler?.abort(new Error(`${spec.name} timed out`))) ended = 'timeout';
    }, timeoutMs);
    const unlisten =
      signal &&
      onAbort(signal, () => {
        const reason = signal.reason instanceof Error ? signal.reason : new Error(`${spec.name} aborted`);
        if (handler?.abort(reason)) ended = 'aborted';
      });
    try {
      const answer = await new Promise<RawAnswer>((resolve, reject) => {
        handler = new CallHandler(resolve, reject);
        pool.dispatch(dispatchOptions, handler);
      });
      if (answer.status !== 200) throw this.#statusError(spec.name, addr, answer.status, answer.bytes);
      const res = this.#decode(spec.responseHeader, spec.name, answer.bytes);
      const refusal = res.code !== ResponseCode.SUCCESS ? aclRefusal(res.remark, accessKey) : null;
      if (refusal) throw aclDeniedError(spec.name, addr, refusal, res.code);
      return res;
    } catch (e) {
      if (ended === 'timeout')
        throw new TransportError(`${spec.name} to ${addr} timed out after ${opts.timeoutMs} ms`, {
          timeout: true,
          responseCode: RPC_TIME_OUT,
          cause: e,
        });
      if (ended === 'aborted')
        throw new AbortError(`${spec.name} to ${addr} was aborted`, { cause: signal?.reason ?? e });
      if (e instanceof RocketMQError) throw e;
      if (this.#closing) throw new ClosedError(`the remoting client closed during ${spec.name}`);
      if (addr.startsWith('https:') && isTlsFailure(e)) throw tlsHandshakeError(addr, e);
      throw new TransportError(`${spec.name} to ${addr} failed: ${(e as Error)?.message ?? String(e)}`, { cause: e });
    } finally {
      this.#clock.clearTimeout(timer);
      unlisten?.();
    }
  }

  invokeOneway(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<void> {
    return this.invoke(addr, request, opts).then(
      (res) => {
        if (res.code !== ResponseCode.SUCCESS)
          this.#logger.debug({ addr, code: res.code, remark: res.remark }, 'oneway call answered with an error code');
      },
      (err: unknown) => this.#logger.debug({ addr, err }, 'oneway call failed'),
    );
  }

  unsentHeldCalls(addr: string): number {
    const lanes = this.#targets.get(addr)?.lanes;
    return lanes ? lanes.held.stats.pending : 0;
  }

  #decode(schema: z.ZodType, name: string, bytes: Buffer): RemotingResponse {
    let frame;
    try {
      frame = decodeFrame(bytes);
    } catch (e) {
      throw badResponse(`${name}: ${(e as Error).message}`, e);
    }
    const env = readResponseEnvelope(frame.header);
    const checked = checkHeader(schema, env.header);
    if (!checked.ok) throw badResponse(`${name} response header field ${checked.field}: ${checked.message}`);
    return { code: env.code, remark: env.remark, header: checked.data, body: frame.body };
  }

  #statusError(name: string, addr: string, status: number, bytes: Buffer): RocketMQError {
    let info: { error?: unknown; field?: unknown; message?: unknown } = {};
    try {
      const parsed: unknown = JSON.parse(bytes.toString('utf8'));
      if (parsed && typeof parsed === 'object') info = parsed as typeof info;
    } catch {
      // Not JSON (a proxy's page, say): the status alone describes the failure.
    }
    const detail = typeof info.message === 'string' ? info.message : bytes.toString('utf8', 0, 200);
    if (status >= 400 && status < 500) {
      const fromBroker = typeof info.error === 'string' && /^[A-Z_]+$/.test(info.error);
      const code = fromBroker ? (info.error as string) : (HTTP_REJECT_CODES[status] ?? 'BAD_REQUEST');
      const field = typeof info.field === 'string' ? info.field : undefined;
      // A server that answers without the broker's JSON error body is probably not a broker.
      const hint = fromBroker ? '' : ' (the answer is not a rocketmq-ts broker error: is this the broker address?)';
      return new RequestRejectedError(
        status,
        code,
        `${name} rejected by ${addr} (HTTP ${status}${field ? `, field ${field}` : ''}): ${detail}${hint}`,
        field,
      );
    }
    return new TransportError(`${name} to ${addr} answered HTTP ${status}: ${detail}`);
  }

  #allPools(): Pool[] {
    return [...this.#pools.values()].flatMap((l) => [l.control, l.held, l.liveness]);
  }

  close(): Promise<void> {
    if (this.#closing) {
      // A second call does not wait: it aborts whatever is still in flight.
      for (const pool of this.#allPools()) pool.destroy().catch(() => undefined);
      return this.#closing;
    }
    this.#closing = this.#closeAll();
    return this.#closing;
  }

  async #closeAll(): Promise<void> {
    const pools = this.#allPools();
    let timer: ReturnType<Clock['setTimeout']> | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = this.#clock.setTimeout(() => resolve('deadline'), this.#closeTimeoutMs);
    });
    try {
      const closed = Promise.allSettled(pools.map((p) => p.close())).then(() => 'closed' as const);
      if ((await Promise.race([closed, deadline])) === 'deadline') {
        this.#logger.warn({ closeTimeoutMs: this.#closeTimeoutMs }, 'calls still in flight at close: aborting them');
        await Promise.allSettled(pools.map((p) => p.destroy()));
      }
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
    }
  }
}
