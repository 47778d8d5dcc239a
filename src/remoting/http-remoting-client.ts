/**
 * HttpRemotingClient: the command model over HTTP/1.1 (docs/protocol.md), on a small HTTP/1.1 client of
 * its own over `node:net` / `node:tls` sockets (http1-pool.ts, http1-connection.ts,
 * http1-response-parser.ts). These files are the only network code of the HTTP client side; a process's
 * first call loads no HTTP library and compiles no parser.
 *
 * - Three lanes per broker origin, each a pool of keep-alive connections. HTTP/1.1 carries one call per
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
 *   A lane that needs one more connection first takes one that another lane of the origin left idle
 *   (only idle ones: no lane waits for another's calls), and opens a new one when none is.
 * - Every call has a deadline (`timeoutMs`) and an optional AbortSignal, covering the wait for a
 *   connection, the connect and the answer; a call that ends early ends its connection too, since its
 *   answer may still be on the way.
 * - Request headers are validated with the command's zod schema before sending; response headers with
 *   the response schema after decoding. Protocol outcomes (response codes) are returned, not thrown.
 */
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
import { Http1Call } from './http1-connection.js';
import { Http1Pool } from './http1-pool.js';
import type { Http1Response } from './http1-response-parser.js';

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

interface Lanes {
  control: Http1Pool;
  held: Http1Pool;
  liveness: Http1Pool;
  /** The request headers every call to the origin carries before its content-length. */
  headers: string;
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
  /** The header lines every call carries besides host and content-length. */
  readonly #headers: string;
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
    // A line break in the token would end the header and start another.
    if (this.#accessToken && /[\0\r\n]/.test(this.#accessToken))
      throw new InvalidArgumentError('accessToken', 'must not contain line breaks or NUL');
    this.#headers =
      `content-type: ${FRAME_CONTENT_TYPE}\r\n` +
      (this.#accessToken ? `authorization: Bearer ${this.#accessToken}\r\n` : '');
  }

  #target(addr: string): Target {
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
    if (this.#closing) throw new ClosedError('the remoting client is closed');
    let lanes = this.#pools.get(url.origin);
    if (!lanes) {
      const secure = url.protocol === 'https:';
      const origin = {
        // An IPv6 literal comes bracketed in a URL, not in a socket address.
        host: url.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
        tls: secure ? { ...this.#tls } : undefined,
      };
      const keepAliveTimeoutMs = this.#keepAliveTimeoutMs;
      lanes = {
        control: new Http1Pool({ origin, maxConnections: this.#connections, keepAliveTimeoutMs }),
        held: new Http1Pool({ origin, maxConnections: Infinity, keepAliveTimeoutMs }),
        liveness: new Http1Pool({ origin, maxConnections: LIVENESS_CONNECTIONS, keepAliveTimeoutMs }),
        headers: `host: ${url.host}\r\n${this.#headers}`,
      };
      const all = [lanes.control, lanes.held, lanes.liveness];
      for (const pool of all) pool.shareIdleWith(all);
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
    const { lanes, basePath } = this.#target(addr);
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
    const body = encodeFrame(header, request.body);
    const head = `POST ${basePath}/v1/${spec.name} HTTP/1.1\r\n${lanes.headers}content-length: ${body.length}\r\n\r\n`;
    let ended: 'timeout' | 'aborted' | null = null;
    let call: Http1Call | undefined;
    const timer = this.#clock.setTimeout(() => {
      if (call?.abort(new Error(`${spec.name} timed out`))) ended = 'timeout';
    }, timeoutMs);
    const unlisten =
      signal &&
      onAbort(signal, () => {
        const reason = signal.reason instanceof Error ? signal.reason : new Error(`${spec.name} aborted`);
        if (call?.abort(reason)) ended = 'aborted';
      });
    try {
      const answer = await new Promise<Http1Response>((resolve, reject) => {
        call = new Http1Call(head, body, resolve, reject);
        pool.request(call);
      });
      if (answer.status !== 200) throw this.#statusError(spec.name, addr, answer.status, answer.body);
      const res = this.#decode(spec.responseHeader, spec.name, answer.body);
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
    return lanes ? lanes.held.unsent : 0;
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

  #allPools(): Http1Pool[] {
    return [...this.#pools.values()].flatMap((l) => [l.control, l.held, l.liveness]);
  }

  close(): Promise<void> {
    if (this.#closing) {
      // A second call does not wait: it aborts whatever is still in flight.
      for (const pool of this.#allPools()) pool.destroy(new Error('the remoting client was closed'));
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
      const closed = Promise.all(pools.map((p) => p.close())).then(() => 'closed' as const);
      if ((await Promise.race([closed, deadline])) === 'deadline') {
        this.#logger.warn({ closeTimeoutMs: this.#closeTimeoutMs }, 'calls still in flight at close: aborting them');
        for (const pool of pools) pool.destroy(new Error('the remoting client was closed'));
      }
    } finally {
      if (timer !== undefined) this.#clock.clearTimeout(timer);
    }
  }
}
