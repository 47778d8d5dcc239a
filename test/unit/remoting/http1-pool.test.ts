/**
 * Http1Pool and Http1Connection against a real `node:net` server on 127.0.0.1 that answers by hand:
 * the bound on connections and the FIFO queue beyond it, reuse, the idle timeout, a server closing a
 * kept-alive connection, malformed answers, and calls ended early ending their connection.
 */
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { Http1Call } from '../../../src/remoting/http1-connection.js';
import { Http1Pool } from '../../../src/remoting/http1-pool.js';
import type { Http1Response } from '../../../src/remoting/http1-response-parser.js';
import { waitFor } from '../../support/remoting-test-server.js';

interface RawRequest {
  socket: net.Socket;
  path: string;
  body: string;
  answer(text: string): void;
}

/** A server that reads requests framed by Content-Length and hands them to the test. */
class RawServer {
  readonly server: net.Server;
  readonly sockets = new Set<net.Socket>();
  /** Connections ever accepted. */
  accepted = 0;
  readonly requests: RawRequest[] = [];
  onRequest: (req: RawRequest) => void = () => undefined;

  constructor() {
    this.server = net.createServer((socket) => {
      this.accepted++;
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      let pending = Buffer.alloc(0);
      socket.on('data', (chunk: Buffer) => {
        pending = Buffer.concat([pending, chunk]);
        for (;;) {
          const end = pending.indexOf('\r\n\r\n');
          if (end < 0) return;
          const head = pending.toString('latin1', 0, end);
          const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
          if (pending.length < end + 4 + length) return;
          const body = pending.toString('latin1', end + 4, end + 4 + length);
          pending = pending.subarray(end + 4 + length);
          const req: RawRequest = {
            socket,
            path: head.split(' ')[1] as string,
            body,
            answer: (text) => socket.write(text),
          };
          this.requests.push(req);
          this.onRequest(req);
        }
      });
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((r) => this.server.listen(0, '127.0.0.1', r));
    return (this.server.address() as AddressInfo).port;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((r) => this.server.close(() => r()));
  }
}

const ok = (body: string): string => `HTTP/1.1 200 OK\r\nContent-Length: ${body.length}\r\n\r\n${body}`;

let server: RawServer;
let port: number;
const pools: Http1Pool[] = [];

beforeEach(async () => {
  server = new RawServer();
  port = await server.listen();
});

afterEach(async () => {
  for (const p of pools.splice(0)) p.destroy(new Error('test over'));
  await server.close();
});

function pool(maxConnections: number, keepAliveTimeoutMs = 4000): Http1Pool {
  const p = new Http1Pool({ origin: { host: '127.0.0.1', port, tls: undefined }, maxConnections, keepAliveTimeoutMs });
  pools.push(p);
  return p;
}

/** Starts a call on `p`; returns it and its outcome (the answer, or the Error it failed with). */
function send(p: Http1Pool, path: string, body = ''): { call: Http1Call; result: Promise<Http1Response | Error> } {
  let call: Http1Call | undefined;
  const result = new Promise<Http1Response>((resolve, reject) => {
    const bytes = Buffer.from(body);
    call = new Http1Call(
      `POST ${path} HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\ncontent-length: ${bytes.length}\r\n\r\n`,
      bytes,
      resolve,
      reject,
    );
    p.request(call);
  }).catch((e: unknown) => e as Error);
  return { call: call as Http1Call, result };
}

const text = async (r: Promise<Http1Response | Error>): Promise<string> => {
  const res = await r;
  if (res instanceof Error) throw res;
  return res.body.toString();
};

test('calls beyond the bound wait FIFO and go out as connections free; connections are reused', async () => {
  const p = pool(2);
  const calls = ['/a', '/b', '/c', '/d', '/e'].map((path) => send(p, path, path));
  await waitFor(() => server.requests.length === 2, 5000, 'the first two requests');
  expect(server.accepted).toBe(2);
  expect(p.unsent).toBe(3);
  // Answer in the order the requests arrive: each freed connection takes the oldest queued call.
  server.onRequest = (req) => req.answer(ok(`re:${req.body}`));
  for (const req of server.requests.slice(0, 2)) req.answer(ok(`re:${req.body}`));
  expect(await Promise.all(calls.map((c) => text(c.result)))).toEqual(['re:/a', 're:/b', 're:/c', 're:/d', 're:/e']);
  expect(server.requests.map((r) => r.path).slice(2)).toEqual(['/c', '/d', '/e']);
  expect(server.accepted).toBe(2);
  expect(p.unsent).toBe(0);
  // An idle connection is reused.
  expect(await text(send(p, '/f', 'f').result)).toBe('re:f');
  expect(server.accepted).toBe(2);
  expect(p.connections).toBe(2);
});

test('the held lane (no bound) opens a connection per concurrent call and counts those not yet written', async () => {
  const p = pool(Infinity);
  const calls = Array.from({ length: 20 }, (_, i) => send(p, `/h${i}`));
  expect(p.unsent).toBe(20);
  await waitFor(() => server.requests.length === 20, 5000, 'twenty requests');
  expect(p.unsent).toBe(0);
  expect(server.accepted).toBe(20);
  for (const req of server.requests) req.answer(ok('x'));
  await Promise.all(calls.map((c) => text(c.result)));
});

test('a pool that needs a connection takes one its siblings left idle, and opens one when none is', async () => {
  const control = pool(4);
  const held = pool(Infinity);
  for (const p of [control, held]) p.shareIdleWith([control, held]);
  server.onRequest = (req) => req.answer(ok(`re:${req.body}`));
  await Promise.all(['a', 'b'].map((b) => text(send(control, '/c', b).result)));
  expect([server.accepted, control.connections, held.connections]).toEqual([2, 2, 0]);
  // Two calls on the held pool: both ride the control pool's idle connections, which now belong to it.
  const first = ['c', 'd'].map((b) => send(held, '/h', b));
  expect(await Promise.all(first.map((c) => text(c.result)))).toEqual(['re:c', 're:d']);
  expect([server.accepted, control.connections, held.connections]).toEqual([2, 0, 2]);
  // A third concurrent one finds nothing idle elsewhere: a new connection.
  const more = ['e', 'f', 'g'].map((b) => send(held, '/h', b));
  expect(await Promise.all(more.map((c) => text(c.result)))).toEqual(['re:e', 're:f', 're:g']);
  expect([server.accepted, held.connections]).toEqual([3, 3]);
  // A connection that closes after it moved is forgotten by the pool it moved to.
  for (const s of server.sockets) s.destroy();
  await waitFor(() => held.connections === 0, 5000, 'the moved connections to close');
  expect(control.connections).toBe(0);
});

test('an idle connection closes after the keep-alive timeout', async () => {
  const p = pool(4, 100);
  server.onRequest = (req) => req.answer(ok('1'));
  await text(send(p, '/x').result);
  expect(p.connections).toBe(1);
  await waitFor(() => p.connections === 0 && server.sockets.size === 0, 5000, 'the idle connection to close');
  // The next call opens a new connection.
  expect(await text(send(p, '/y').result)).toBe('1');
  expect(server.accepted).toBe(2);
});

test('an idle connection does not keep the process alive; a busy one does', async () => {
  const p = pool(1);
  // The server's side is left out of the count.
  server.onRequest = (req) => req.socket.unref();
  const sockets = (): number => process.getActiveResourcesInfo().filter((r) => r === 'TCPSocketWrap').length;
  const first = send(p, '/a');
  await waitFor(() => server.requests.length === 1, 5000, 'the first request');
  (server.requests[0] as RawRequest).answer(ok('a'));
  await text(first.result);
  const idle = sockets();
  // Reused, it counts again; idle again, it does not.
  const second = send(p, '/b');
  await waitFor(() => server.requests.length === 2, 5000, 'the second request');
  expect(sockets()).toBe(idle + 1);
  (server.requests[1] as RawRequest).answer(ok('b'));
  await text(second.result);
  expect(sockets()).toBe(idle);
  expect(server.accepted).toBe(1);
});

test('a kept-alive connection the server closed is dropped; the next call opens a new one and succeeds', async () => {
  const p = pool(4);
  server.onRequest = (req) => req.answer(ok('first'));
  await text(send(p, '/x').result);
  for (const s of server.sockets) s.end();
  await waitFor(() => p.connections === 0, 5000, 'the client to drop the connection');
  server.onRequest = (req) => req.answer(ok('second'));
  expect(await text(send(p, '/y').result)).toBe('second');
  expect(server.accepted).toBe(2);
});

test('Connection: close and HTTP/1.0 answers end the connection after the answer', async () => {
  const p = pool(1);
  server.onRequest = (req) =>
    req.answer(
      req.path === '/close'
        ? 'HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 1\r\n\r\nc'
        : 'HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nz',
    );
  expect(await text(send(p, '/close').result)).toBe('c');
  expect(await text(send(p, '/old').result)).toBe('z');
  expect(await text(send(p, '/close').result)).toBe('c');
  expect(server.accepted).toBe(3);
});

test('a body that runs until the close is the answer; a close mid-answer fails the call', async () => {
  const p = pool(2);
  server.onRequest = (req) => {
    if (req.path === '/until-close') req.socket.end('HTTP/1.1 200 OK\r\n\r\nall of it');
    else req.socket.end('HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort');
  };
  expect(await text(send(p, '/until-close').result)).toBe('all of it');
  const cut = await send(p, '/cut').result;
  expect(cut).toBeInstanceOf(Error);
  expect((cut as Error).message).toMatch(/closed in the middle of an answer \(with 5 of its Content-Length bytes/);
  await waitFor(() => p.connections === 0, 5000, 'the connections to close');
});

test('a malformed answer fails the call and ends its connection; the pool goes on', async () => {
  const p = pool(1);
  server.onRequest = (req) => req.answer(req.path === '/bad' ? 'HTTP/1.1 OK\r\n\r\n' : ok('fine'));
  const bad = await send(p, '/bad').result;
  expect((bad as Error).message).toBe('malformed HTTP response: bad status line "HTTP/1.1 OK"');
  await waitFor(() => server.sockets.size === 0, 5000, 'the server to see the close');
  expect(await text(send(p, '/good').result)).toBe('fine');
  expect(server.accepted).toBe(2);
});

test('an aborted call ends its connection at once; a queued one just leaves the queue', async () => {
  const p = pool(1);
  const first = send(p, '/held');
  const queued = send(p, '/queued');
  await waitFor(() => server.requests.length === 1, 5000, 'the first request');
  expect(p.unsent).toBe(1);
  expect(queued.call.abort(new Error('deadline'))).toBe(true);
  expect(((await queued.result) as Error).message).toBe('deadline');
  expect(p.unsent).toBe(0);
  expect(first.call.abort(new Error('aborted'))).toBe(true);
  expect(first.call.abort(new Error('again'))).toBe(false);
  expect(((await first.result) as Error).message).toBe('aborted');
  // The connection was destroyed (an answer may have been in flight): the server sees it close.
  await waitFor(() => server.sockets.size === 0 && p.connections === 0, 5000, 'the connection to close');
  server.onRequest = (req) => req.answer(ok('after'));
  expect(await text(send(p, '/next').result)).toBe('after');
  expect(server.requests.map((r) => r.path)).toEqual(['/held', '/next']);
});

test('a call ended while its connection is opening ends that connection; the queue moves on', async () => {
  // Aborted in the same turn as it was made: its connection has not connected, nothing was written.
  const p = pool(1);
  server.onRequest = (req) => req.answer(ok('late'));
  const a = send(p, '/a');
  const b = send(p, '/b');
  expect(p.unsent).toBe(2);
  a.call.abort(new Error('gone'));
  expect(((await a.result) as Error).message).toBe('gone');
  expect(await text(b.result)).toBe('late');
  expect(server.requests.map((r) => r.path)).toEqual(['/b']);
});

test('connection refused fails the call with the socket error', async () => {
  const closed = net.createServer();
  await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
  const deadPort = (closed.address() as AddressInfo).port;
  await new Promise<void>((r) => closed.close(() => r()));
  const p = new Http1Pool({
    origin: { host: '127.0.0.1', port: deadPort, tls: undefined },
    maxConnections: 1,
    keepAliveTimeoutMs: 1000,
  });
  pools.push(p);
  const err = (await send(p, '/x').result) as NodeJS.ErrnoException;
  expect(err.code).toBe('ECONNREFUSED');
  expect(p.connections).toBe(0);
});

test('close() serves the calls in flight and queued, then ends every connection; destroy() fails them at once', async () => {
  const p = pool(1);
  const a = send(p, '/a');
  const b = send(p, '/b');
  await waitFor(() => server.requests.length === 1, 5000, 'the first request');
  const closed = p.close();
  server.onRequest = (req) => req.answer(ok('b'));
  (server.requests[0] as RawRequest).answer(ok('a'));
  expect(await text(a.result)).toBe('a');
  expect(await text(b.result)).toBe('b');
  await closed;
  expect(p.connections).toBe(0);
  await waitFor(() => server.sockets.size === 0, 5000, 'the server to see the close');

  const q = pool(1);
  server.onRequest = () => undefined;
  const c = send(q, '/c');
  const d = send(q, '/d');
  await waitFor(() => server.requests.length === 3, 5000, 'the third request');
  const closing = q.close();
  q.destroy(new Error('destroyed'));
  expect(((await c.result) as Error).message).toBe('destroyed');
  expect(((await d.result) as Error).message).toBe('destroyed');
  await closing;
  expect(q.connections).toBe(0);
  expect(((await send(q, '/e').result) as Error).message).toBe('destroyed');
});
