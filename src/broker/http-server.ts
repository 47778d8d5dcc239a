/**
 * The broker's HTTP transport (docs/protocol.md), on node:http only: a thin shell that turns an HTTP
 * request into a validated command, hands it to `handle`, and writes the answer as a frame.
 *
 * Transport failures: 401 (token), 405 (method), 404 (path), 413 (body size), 400 (frame, header or JSON
 * body invalid) — each with a JSON body `{"error", "message", "field"?}`. Everything else is HTTP 200
 * with a response code; nothing a client sends produces a 500 or crashes the process.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo, Socket } from 'node:net';
import type { Logger } from '../common/logger.js';
import {
  FRAME_CONTENT_TYPE,
  ResponseCode,
  decodeFrame,
  encodeFrame,
  type RemotingResponse,
} from '../protocol/index.js';
import type { BrokerRequest, ConnectionInfo } from './broker-context.js';
import type { AclGuard } from './acl/acl-guard.js';
import { ClientConnection } from './client-connection.js';
import { noteBytesRead } from './idle-memory-reclaim.js';
import type { BrokerTls } from './broker-tls.js';
import type { ConnectionLimits } from './connection-limits.js';
import { RareLog } from './rare-log.js';
import { publicRemark } from './remoting/public-remark.js';
import type { ByteBudget } from './remoting/byte-budget.js';
import { lookupCommand, requestCodeNotSupported, validateRequest } from './dispatch.js';
import { releasePullBody } from '../store/index.js';

export interface HttpServerOptions {
  host: string;
  port: number;
  maxRequestBodyBytes: number;
  accessToken: string | undefined;
  /** Serve HTTPS with this certificate (in both TLS modes: permissive applies to the remoting port only). */
  tls?: BrokerTls | undefined;
  logger: Logger;
  /** Bounds on connections, requests in flight and buffered answers (connection-limits.ts). */
  limits?: ConnectionLimits;
  /**
   * The broker-wide byte budget (shared with the remoting listener): request bodies as they arrive and
   * answers until handed to the OS count against it; while it is spent new requests are answered SYSTEM_BUSY.
   */
  budget?: ByteBudget;
  /** The plain ACL every command passes before it is read (the broker's `aclFile`). */
  acl?: AclGuard | undefined;
  /** Answers a validated request (the broker's handle). Must not throw; a rejection is answered SYSTEM_ERROR. */
  handle(request: BrokerRequest, connection: ConnectionInfo): Promise<RemotingResponse>;
  /** Told of each handled request: its code, the answer's code and when it began (performance.now()). */
  onAnswered?(requestCode: number, responseCode: number, startedAt: number): void;
}

const PATH_RE = /^\/v1\/([A-Za-z0-9_]{1,64})$/;
/** A body past the limit is read and thrown away up to this much, so the 413 reaches the client on a healthy connection. */
const DRAIN_FACTOR = 4;

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

export class HttpServer {
  private readonly server: http.Server;
  private readonly options: HttpServerOptions;
  private readonly tokenHash: Buffer | undefined;
  /** Requests being handled, and who waits for the count to reach zero (close). */
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  /** Every open socket with its peer's `ip:port`, worked out once per connection rather than per call. */
  private readonly sockets = new Map<Socket, string>();
  private closing: Promise<void> | undefined;

  constructor(options: HttpServerOptions) {
    this.options = options;
    this.tokenHash = options.accessToken === undefined ? undefined : sha256(options.accessToken);
    const onRequest = (req: http.IncomingMessage, res: http.ServerResponse): void => {
      this.active++;
      this.onRequest(req, res)
        .catch((e: unknown) => {
          options.logger.error({ err: e }, 'HTTP request handling failed');
          if (!res.headersSent && !res.destroyed)
            this.sendJson(res, 400, 'BAD_REQUEST', 'the request could not be read');
          else res.destroy();
        })
        .then(this.requestDone, this.requestDone);
    };
    const tls = options.tls;
    this.server = tls
      ? https.createServer({ keepAlive: true, cert: tls.cert, key: tls.key, handshakeTimeout: 60_000 }, onRequest)
      : http.createServer({ keepAlive: true }, onRequest);
    // Held pulls may last long: no socket inactivity timeout, and the request timeouts only bound how long
    // a client may take to send its request.
    this.server.timeout = 0;
    this.server.headersTimeout = 60_000;
    this.server.requestTimeout = 300_000;
    this.server.keepAliveTimeout = 65_000;
    options.limits?.attach(this.server);
    // Over HTTPS the requests arrive on the TLSSocket, so that is the socket counted and named; the
    // raw one is tracked too, so that close() also ends a handshake still in progress.
    this.server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
      options.limits?.onConnection(socket);
      this.sockets.set(socket, `${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? 0}`);
      socket.on('close', () => this.sockets.delete(socket));
    });
    if (tls) {
      const rareLog = new RareLog(options.logger);
      this.server.on('connection', (socket: Socket) => {
        this.sockets.set(socket, '');
        socket.on('close', () => this.sockets.delete(socket));
      });
      this.server.on('tlsClientError', (err: Error, socket: Socket) => {
        rareLog.warn('tls-handshake', { remote: socket.remoteAddress, err: err.message }, 'HTTPS handshake failed');
        socket.destroy();
      });
    }
    this.server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || !socket.writable) {
        socket.destroy();
        return;
      }
      const body = JSON.stringify({ error: 'BAD_REQUEST', message: 'malformed HTTP request' });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
  }

  /** Binds; resolves with the bound port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error): void => reject(e);
      this.server.once('error', onError);
      this.server.listen(this.options.port, this.options.host, () => {
        this.server.off('error', onError);
        this.server.on('error', (e) => this.options.logger.error({ err: e }, 'HTTP server error'));
        resolve((this.server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops accepting connections and closes idle ones; calls in flight go on. */
  stopAccepting(): void {
    if (!this.closing) {
      this.closing = new Promise<void>((resolve) => this.server.close(() => resolve()));
    }
    this.server.closeIdleConnections();
  }

  private readonly requestDone = (): void => {
    if (--this.active > 0) return;
    for (const w of this.idleWaiters.splice(0)) w();
  };

  /** Waits up to `timeoutMs` for calls in flight, then closes every socket. Idempotent. */
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
    this.server.closeAllConnections();
    for (const s of this.sockets.keys()) s.destroy();
    await this.closing;
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const socket = req.socket;
    const connection = new ClientConnection(
      this.sockets.get(socket) ?? `${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? 0}`,
    );
    res.on('close', () => {
      if (!res.writableFinished) connection.markGone();
    });
    if (this.tokenHash && !this.authorized(req.headers.authorization)) {
      await this.drain(req);
      return this.sendJson(
        res,
        401,
        'UNAUTHORIZED',
        'a valid access token is required (Authorization: Bearer <token>)',
      );
    }
    if (req.method !== 'POST') {
      await this.drain(req);
      res.setHeader('Allow', 'POST');
      return this.sendJson(res, 405, 'METHOD_NOT_ALLOWED', `method ${req.method ?? ''} not allowed; use POST`);
    }
    const url = req.url ?? '';
    const q = url.indexOf('?');
    const m = PATH_RE.exec(q < 0 ? url : url.slice(0, q));
    if (!m || m[1] === undefined) {
      await this.drain(req);
      return this.sendJson(res, 404, 'NOT_FOUND', 'the path must be /v1/<command name or request code>');
    }
    const busy = this.options.limits?.admit(socket, res);
    if (busy !== undefined) {
      await this.drain(req);
      return this.sendFrame(res, { code: ResponseCode.SYSTEM_BUSY, header: {}, remark: busy });
    }
    const budget = this.options.budget;
    if (budget?.exhaustedFor(0)) {
      await this.drain(req);
      return this.sendFrame(res, {
        code: ResponseCode.SYSTEM_BUSY,
        header: {},
        remark: `[OVERLOAD]system busy, start flow control for a while: the broker holds ${budget.used} bytes for its clients (maxBufferedBytes ${budget.limit})`,
      });
    }
    const body = await this.readBody(req, res);
    if (body === undefined) return;

    let frame;
    try {
      frame = decodeFrame(body);
    } catch (e) {
      return this.sendJson(res, 400, 'BAD_REQUEST', (e as Error).message, '(frame)');
    }
    const lookup = lookupCommand(m[1]);
    if (!lookup.spec) return this.sendFrame(res, requestCodeNotSupported(lookup.code ?? lookup.segment));
    const refused = this.options.acl?.checkHttp(lookup.spec.code, frame.header, frame.body, connection.remoteAddress);
    if (refused) return this.sendFrame(res, { code: refused.code, header: {}, remark: refused.remark });
    const validated = validateRequest(lookup.spec, frame.header, frame.body);
    if (!validated.ok) return this.sendJson(res, 400, 'BAD_REQUEST', validated.message, validated.field);

    let response: RemotingResponse;
    const startedAt = performance.now();
    try {
      response = await this.options.handle(validated.request, connection);
    } catch (e) {
      this.options.logger.error({ err: e }, 'broker handle failed');
      response = { code: ResponseCode.SYSTEM_ERROR, header: {}, remark: (e as Error)?.message ?? 'system error' };
    }
    this.options.onAnswered?.(validated.request.code, response.code, startedAt);
    if (connection.gone || res.destroyed) return;
    this.sendFrame(res, response, socket);
  }

  private authorized(header: string | undefined): boolean {
    if (!this.tokenHash || typeof header !== 'string') return false;
    const m = /^Bearer\s+(.+)$/i.exec(header.trim());
    if (!m || m[1] === undefined) return false;
    return timingSafeEqual(sha256(m[1]), this.tokenHash);
  }

  /** The whole body, or undefined after answering 413. */
  private readBody(req: http.IncomingMessage, res: http.ServerResponse): Promise<Buffer | undefined> {
    const limit = this.options.maxRequestBodyBytes;
    const declared = Number(req.headers['content-length']);
    return new Promise((resolve) => {
      const chunks: Buffer[] = [];
      let size = 0;
      let tooLarge = Number.isFinite(declared) && declared > limit;
      let settled = false;
      const tooLargeAnswer = (close: boolean): void => {
        if (settled) return;
        settled = true;
        if (close) res.setHeader('Connection', 'close');
        this.sendJson(res, 413, 'PAYLOAD_TOO_LARGE', `the request body exceeds ${limit} bytes`);
        if (close) res.once('finish', () => req.destroy());
        resolve(undefined);
      };
      const budget = this.options.budget;
      let held = 0;
      if (budget) res.once('close', () => budget.release(held));
      req.on('data', (chunk: Buffer) => {
        size += chunk.length;
        noteBytesRead(chunk.length);
        if (size > limit) tooLarge = true;
        if (budget && !tooLarge) {
          // Held until the answer is sent: the body is in memory that long.
          budget.take(chunk.length);
          held += chunk.length;
        }
        if (tooLarge) {
          chunks.length = 0;
          if (size > limit * DRAIN_FACTOR + 1024 * 1024) tooLargeAnswer(true);
          return;
        }
        chunks.push(chunk);
      });
      req.on('end', () => {
        if (settled) return;
        if (tooLarge) return tooLargeAnswer(false);
        settled = true;
        // A body that came in one chunk is used as it is (a view of that socket read), not copied.
        resolve(chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks, size));
      });
      req.on('error', () => {
        if (settled) return;
        settled = true;
        resolve(undefined);
      });
      if (tooLarge && declared > limit * DRAIN_FACTOR + 1024 * 1024) tooLargeAnswer(true);
    });
  }

  /** Reads and discards a request body (bounded), so the connection stays usable. */
  private drain(req: http.IncomingMessage): Promise<void> {
    return new Promise((resolve) => {
      if (req.complete) return resolve();
      let size = 0;
      const cap = this.options.maxRequestBodyBytes * DRAIN_FACTOR;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size > cap) {
          req.destroy();
          resolve();
        }
      });
      req.on('end', () => resolve());
      req.on('error', () => resolve());
      req.on('close', () => resolve());
    });
  }

  /** Writes the answer; with `socket`, its bytes count against the connection's buffered-answer limit. */
  private sendFrame(res: http.ServerResponse, response: RemotingResponse, socket?: Socket): void {
    if (res.headersSent || res.destroyed) return;
    const head: { code: number; remark?: string; header: unknown } = {
      code: response.code,
      header: response.header ?? {},
    };
    if (response.remark !== undefined)
      head.remark = publicRemark(response.remark, this.options.logger, { code: response.code });
    // The frame's head and the body go out as two buffers: a pull's body (the stored records) is not copied again.
    const headFrame = encodeFrame(head);
    const body = response.body;
    const length = headFrame.length + (body?.length ?? 0);
    if (socket) this.options.limits?.countResponse(socket, res, length);
    const budget = this.options.budget;
    if (budget) {
      budget.take(length);
      let counted = true;
      const release = (): void => {
        if (!counted) return;
        counted = false;
        budget.release(length);
      };
      res.once('finish', release);
      res.once('close', release);
    }
    res.writeHead(200, { 'Content-Type': FRAME_CONTENT_TYPE, 'Content-Length': length });
    if (body && body.length > 0) {
      res.cork();
      res.write(headFrame);
      // end() uncorks: both buffers leave in one write. Once they are handed to the socket nothing reads
      // the body again, so a pull body's memory is reused.
      res.end(body, () => releasePullBody(body));
    } else {
      res.end(headFrame);
    }
  }

  private sendJson(res: http.ServerResponse, status: number, error: string, message: string, field?: string): void {
    if (res.headersSent || res.destroyed) return;
    const payload: Record<string, string> = { error };
    if (field !== undefined) payload.field = field;
    payload.message = message;
    const body = Buffer.from(JSON.stringify(payload), 'utf8');
    res.writeHead(status, { 'Content-Type': 'application/json', 'Content-Length': body.length });
    res.end(body);
  }
}
