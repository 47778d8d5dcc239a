/**
 * HttpRemotingClient over real HTTP: frames, response header validation, HTTP 4xx → typed
 * non-retriable errors naming the field, timeouts, aborts, refused connections, close.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { HttpRemotingClient } from '../../../src/remoting/http-remoting-client.js';
import { AbortError, ClosedError, RequestRejectedError } from '../../../src/remoting/remoting-errors.js';
import { InvalidArgumentError, RocketMQError, TransportError } from '../../../src/common/errors.js';
import { RequestCode, decodeFrame, encodeFrame } from '../../../src/protocol/index.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

type Reply = (req: http.IncomingMessage, body: Buffer, res: http.ServerResponse) => void;

let server: http.Server;
let base: string;
let reply: Reply;
const requests: Array<{
  url: string | undefined;
  auth: string | undefined;
  header: unknown;
  body: Buffer | undefined;
}> = [];

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const f = decodeFrame(body);
      requests.push({ url: req.url, auth: req.headers.authorization, header: f.header, body: f.body });
      reply(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

const frame = (header: unknown, body?: Buffer): Buffer => encodeFrame(header, body);
const send = (res: http.ServerResponse, status: number, body: Buffer | string): void => {
  res.writeHead(status, { 'content-type': 'application/x-rocketmq-command' });
  res.end(body);
};
const offsetReq = { code: RequestCode.GET_MAX_OFFSET, header: { topic: 'T', queueId: 0 } };

test('POST /v1/<COMMAND_NAME> with the frame and the bearer token; the answer is decoded and validated', async () => {
  const c = new HttpRemotingClient({ accessToken: 'secret' });
  reply = (_q, _b, res) => send(res, 200, frame({ code: 0, remark: 'ok', header: { msgId: 5, offset: 12 } }));
  const r = await c
    .invoke(
      `${base}/`,
      { code: RequestCode.SEND_MESSAGE, header: sendHeader, body: Buffer.from('payload') },
      { timeoutMs: 2000 },
    )
    .catch((e: unknown) => e);
  // The response header is validated with SEND_MESSAGE's schema: msgId must be a string.
  expect(r).toMatchObject({ code: 'ERR_BAD_RESPONSE' });
  expect((r as Error).message).toContain('msgId');
  const res = await c.invoke(base, offsetReq, { timeoutMs: 2000 });
  expect(res).toEqual({ code: 0, remark: 'ok', header: { offset: 12 }, body: undefined });
  const last = requests.at(-1)!;
  expect(last.url).toBe('/v1/GET_MAX_OFFSET');
  expect(last.auth).toBe('Bearer secret');
  expect(last.header).toEqual({ topic: 'T', queueId: 0 });
  expect(requests.at(-2)!.body!.toString()).toBe('payload');
  await c.close();
});

const sendHeader = {
  producerGroup: 'p',
  topic: 'T',
  defaultTopic: 'TBW102',
  defaultTopicQueueNums: 4,
  queueId: 0,
  sysFlag: 0,
  bornTimestamp: 1,
  flag: 0,
};

test('a request header that fails its schema is refused before sending, naming the field', async () => {
  const c = new HttpRemotingClient();
  const n = requests.length;
  const e = await c
    .invoke(base, { code: RequestCode.GET_MAX_OFFSET, header: { topic: 'T', queueId: 'x' } }, { timeoutMs: 1000 })
    .catch((x: unknown) => x);
  expect(e).toBeInstanceOf(InvalidArgumentError);
  expect((e as InvalidArgumentError).field).toBe('GET_MAX_OFFSET.queueId');
  expect(requests.length).toBe(n);
  await c.close();
});

test('HTTP 400 → RequestRejectedError (not retriable) naming the field from the JSON body', async () => {
  const c = new HttpRemotingClient();
  reply = (_q, _b, res) => {
    res.writeHead(400, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ error: 'BAD_REQUEST', field: 'queueId', message: 'expected int' }));
  };
  const e = (await c.invoke(base, offsetReq, { timeoutMs: 1000 }).catch((x: unknown) => x)) as RequestRejectedError;
  expect(e).toBeInstanceOf(RequestRejectedError);
  expect(e).toMatchObject({ code: 'ERR_BAD_REQUEST', status: 400, field: 'queueId', retriable: false });
  expect(e.message).toContain('queueId');
  reply = (_q, _b, res) => {
    res.writeHead(401);
    res.end(JSON.stringify({ error: 'UNAUTHORIZED', message: 'token' }));
  };
  await expect(c.invoke(base, offsetReq, { timeoutMs: 1000 })).rejects.toMatchObject({
    code: 'ERR_UNAUTHORIZED',
    status: 401,
  });
  reply = (_q, _b, res) => {
    res.writeHead(503);
    res.end('busy');
  };
  await expect(c.invoke(base, offsetReq, { timeoutMs: 1000 })).rejects.toMatchObject({
    code: 'ERR_TRANSPORT',
    retriable: true,
  });
  await c.close();
});

test('a malformed response frame is ERR_BAD_RESPONSE', async () => {
  const c = new HttpRemotingClient();
  reply = (_q, _b, res) => send(res, 200, Buffer.from([0, 0, 0, 50, 1]));
  await expect(c.invoke(base, offsetReq, { timeoutMs: 1000 })).rejects.toMatchObject({ code: 'ERR_BAD_RESPONSE' });
  reply = (_q, _b, res) => send(res, 200, frame({ remark: 'no code' }));
  await expect(c.invoke(base, offsetReq, { timeoutMs: 1000 })).rejects.toMatchObject({ code: 'ERR_BAD_RESPONSE' });
  await c.close();
});

test('the call deadline: a slow answer → TransportError ERR_TIMEOUT (retriable); an abort → AbortError', async () => {
  const c = new HttpRemotingClient();
  const pending: http.ServerResponse[] = [];
  reply = (_q, _b, res) => pending.push(res);
  const t0 = Date.now();
  const e = await c.invoke(base, offsetReq, { timeoutMs: 150 }).catch((x: unknown) => x);
  expect(e).toBeInstanceOf(TransportError);
  expect(e).toMatchObject({ code: 'ERR_TIMEOUT', retriable: true });
  expect(Date.now() - t0).toBeLessThan(1000);
  const ac = new AbortController();
  const p = c.invoke(base, offsetReq, { timeoutMs: 10_000, signal: ac.signal }).catch((x: unknown) => x);
  setTimeout(() => ac.abort(), 50);
  expect(await p).toBeInstanceOf(AbortError);
  for (const r of pending) r.destroy();
  // The pool keeps working after aborted calls.
  reply = (_q, _b, res) => send(res, 200, frame({ code: 0, header: { offset: 1 } }));
  expect((await c.invoke(base, offsetReq, { timeoutMs: 1000 })).header).toEqual({ offset: 1 });
  await c.close();
});

test('connection refused → retriable TransportError with the cause', async () => {
  const c = new HttpRemotingClient();
  const e = (await c
    .invoke('http://127.0.0.1:1', offsetReq, { timeoutMs: 2000 })
    .catch((x: unknown) => x)) as TransportError;
  expect(e).toBeInstanceOf(TransportError);
  expect(e.retriable).toBe(true);
  expect(e.cause).toBeDefined();
  await c.close();
});

test('close(): later calls fail with ClosedError; close is idempotent; a second close aborts calls in flight', async () => {
  const c = new HttpRemotingClient({ closeTimeoutMs: 5000 });
  reply = () => undefined;
  const inflight = c.invoke(base, offsetReq, { timeoutMs: 10_000 }).catch((x: unknown) => x);
  await new Promise((r) => setTimeout(r, 50));
  const first = c.close();
  await expect(c.invoke(base, offsetReq, { timeoutMs: 1000 })).rejects.toBeInstanceOf(ClosedError);
  const t0 = Date.now();
  const second = c.close();
  expect(second).toBe(first);
  await second;
  expect(Date.now() - t0).toBeLessThan(2000);
  expect(await inflight).toBeInstanceOf(RocketMQError);
});

describe('against the real broker', () => {
  let fx: BrokerFixture;
  beforeAll(async () => {
    fx = await startBroker({}, {});
  });
  afterAll(() => fx.close());

  test('held pulls have a lane of their own: control calls never wait behind them, and pulls never wait behind each other', async () => {
    const addr = fx.broker.address;
    const probe = new HttpRemotingClient();
    const topic = `Held${Date.now()}`;
    const created = await probe.invoke(
      addr,
      { code: RequestCode.UPDATE_AND_CREATE_TOPIC, header: { topic, readQueueNums: 1, writeQueueNums: 1, perm: 6 } },
      { timeoutMs: 3000 },
    );
    expect(created.code).toBe(0);
    await probe.close();
    const held = (c: HttpRemotingClient) =>
      c.invoke(
        addr,
        {
          code: RequestCode.PULL_MESSAGE,
          header: {
            consumerGroup: 'cg',
            topic,
            queueId: 0,
            queueOffset: 0,
            maxMsgNums: 32,
            sysFlag: 2 | 4,
            commitOffset: 0,
            suspendTimeoutMillis: 3000,
            subscription: '*',
            subVersion: 0,
          },
        },
        { timeoutMs: 8000 },
      );
    const control = { code: RequestCode.GET_MAX_OFFSET, header: { topic, queueId: 0 } };
    // One control connection and many held pulls: neither waits for the other.
    const c = new HttpRemotingClient({ connectionsPerBroker: 1 });
    const t0 = Date.now();
    const pulls = Array.from({ length: 80 }, () => held(c));
    await new Promise((r) => setTimeout(r, 100));
    const t1 = Date.now();
    for (let i = 0; i < 5; i++) expect((await c.invoke(addr, control, { timeoutMs: 5000 })).code).toBe(0);
    // Well within the pulls' 3 s hold: the control calls did not wait for a held pull to end.
    expect(Date.now() - t1).toBeLessThan(1500);
    const codes = await Promise.all(pulls);
    // Every pull was held by the broker at once for its suspend time (3 s), not one after another.
    expect(codes.map((p) => p.code)).toEqual(Array.from({ length: 80 }, () => 19));
    expect(Date.now() - t0).toBeLessThan(6500);
    await c.close();
  });
});

describe('a body over the broker limit', () => {
  let fx: BrokerFixture;
  beforeAll(async () => {
    fx = await startBroker({ maxRequestBodyBytes: 64 * 1024 }, {});
  });
  afterAll(() => fx.close());

  test('is refused with HTTP 413 as a RequestRejectedError, and the client goes on working', async () => {
    const addr = fx.broker.address;
    const c = new HttpRemotingClient({ connectionsPerBroker: 1 });
    const send = (size: number) =>
      c
        .invoke(
          addr,
          { code: RequestCode.SEND_MESSAGE, header: sendHeader, body: Buffer.alloc(size) },
          { timeoutMs: 5000 },
        )
        .catch((x: unknown) => x);
    // Moderately over: the broker reads the body and answers on a connection that stays usable.
    const e = await send(100 * 1024);
    expect(e).toBeInstanceOf(RequestRejectedError);
    expect(e).toMatchObject({ status: 413, retriable: false });
    expect((await c.invoke(addr, offsetReq, { timeoutMs: 5000 })).code).toBeGreaterThanOrEqual(0);
    // Far over: the broker may close the connection while the body is still being written; either way
    // the call fails and the next one is served on a new connection.
    const far = await send(2 * 1024 * 1024);
    expect(far).toBeInstanceOf(RocketMQError);
    if (far instanceof RequestRejectedError) expect(far.status).toBe(413);
    else expect(far).toBeInstanceOf(TransportError);
    expect((await c.invoke(addr, offsetReq, { timeoutMs: 5000 })).code).toBeGreaterThanOrEqual(0);
    await c.close();
  });
});
