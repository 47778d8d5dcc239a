/**
 * TcpRemotingClient over real sockets against a small remoting server built with the codec.
 */
import { jest } from '@jest/globals';
import { ClosedError, AbortError } from '../../../src/remoting/remoting-errors.js';
import { RocketMQError, TransportError } from '../../../src/common/errors.js';
import { RequestCode } from '../../../src/protocol/request-code.js';
import { ResponseCode } from '../../../src/protocol/response-code.js';
import { isOneway, type RemotingCommand } from '../../../src/remoting/index.js';
import { TcpRemotingClient, parseAddress } from '../../../src/remoting/tcp-remoting-client.js';
import { RemotingTestServer, eventually, waitFor, type TestServerHandler } from '../../support/remoting-test-server.js';

const servers: RemotingTestServer[] = [];
const clients: TcpRemotingClient[] = [];
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function server(handle: TestServerHandler = () => ({ code: ResponseCode.SUCCESS })): Promise<RemotingTestServer> {
  const s = await RemotingTestServer.start(handle);
  servers.push(s);
  return s;
}

function client(options: ConstructorParameters<typeof TcpRemotingClient>[0] = {}): TcpRemotingClient {
  const c = new TcpRemotingClient({ closeTimeoutMs: 2000, ...options });
  clients.push(c);
  return c;
}

const maxOffset = (queueId: number) => ({
  code: RequestCode.GET_MAX_OFFSET,
  header: { topic: 'T', queueId, committed: true },
});

const offsetAnswer = (cmd: RemotingCommand) => ({
  code: ResponseCode.SUCCESS,
  extFields: { offset: String(Number(cmd.extFields?.queueId) * 100) },
});

describe('TcpRemotingClient', () => {
  test('a request goes out as RocketMQ writes it and the typed answer comes back', async () => {
    const s = await server(offsetAnswer);
    const c = client();
    const res = await c.invoke(s.addr, maxOffset(3), { timeoutMs: 3000 });
    expect(res).toMatchObject({ code: ResponseCode.SUCCESS, header: { offset: 300 } });
    const [req] = s.received;
    expect(req).toMatchObject({
      code: RequestCode.GET_MAX_OFFSET,
      language: 'NODE_JS',
      version: 405,
      flag: 0,
      extFields: { topic: 'T', queueId: '3', committed: 'true' },
    });
  });

  test('many requests in flight on one connection are matched to their answers by opaque', async () => {
    const held: Array<() => void> = [];
    const s = await server(
      (cmd: RemotingCommand) =>
        new Promise((resolve) => {
          held.push(() => resolve(offsetAnswer(cmd)));
          // Answer in reverse order once all have arrived.
          if (held.length === 20) for (const f of held.reverse()) f();
        }),
    );
    const c = client();
    const answers = await Promise.all(
      Array.from({ length: 20 }, (_, i) => c.invoke(s.addr, maxOffset(i), { timeoutMs: 5000 })),
    );
    expect(answers.map((a) => a.header.offset)).toEqual(Array.from({ length: 20 }, (_, i) => i * 100));
    expect(s.sockets.size).toBe(1);
    expect(new Set(s.received.map((r) => r.opaque)).size).toBe(20);
  });

  test('ROCKETMQ requests; answers in either serialization are read', async () => {
    let n = 0;
    const s = await server((cmd: RemotingCommand) => ({
      ...offsetAnswer(cmd),
      serializeType: n++ % 2 === 0 ? 'JSON' : 'ROCKETMQ',
    }));
    const c = client({ serializeType: 'ROCKETMQ' });
    for (let i = 1; i <= 4; i++)
      expect((await c.invoke(s.addr, maxOffset(i), { timeoutMs: 3000 })).header.offset).toBe(i * 100);
    expect(s.received[0]?.extFields).toEqual({ topic: 'T', queueId: '1', committed: 'true' });
  });

  test('a call past its deadline fails with a retriable ERR_TIMEOUT; the late answer is dropped', async () => {
    const s = await server(async (cmd: RemotingCommand) => {
      await new Promise((r) => setTimeout(r, 300));
      return offsetAnswer(cmd);
    });
    const c = client();
    const err = await c.invoke(s.addr, maxOffset(1), { timeoutMs: 50 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ code: 'ERR_TIMEOUT', retriable: true });
    // The connection stays usable.
    expect((await c.invoke(s.addr, maxOffset(2), { timeoutMs: 3000 })).header.offset).toBe(200);
  });

  test('an AbortSignal ends the call with AbortError', async () => {
    const s = await server(() => new Promise<undefined>(() => undefined));
    const c = client();
    const ac = new AbortController();
    const p = c.invoke(s.addr, maxOffset(1), { timeoutMs: 10_000, signal: ac.signal });
    await waitFor(() => s.received.length === 1);
    ac.abort();
    await expect(p).rejects.toBeInstanceOf(AbortError);
    await expect(c.invoke(s.addr, maxOffset(1), { timeoutMs: 1000, signal: ac.signal })).rejects.toBeInstanceOf(
      AbortError,
    );
  });

  test('oneway: the oneway flag goes out and no answer is awaited', async () => {
    const s = await server(() => undefined);
    const c = client();
    c.invokeOneway(
      s.addr,
      {
        code: RequestCode.UPDATE_CONSUMER_OFFSET,
        header: { consumerGroup: 'G', topic: 'T', queueId: 0, commitOffset: 12 },
      },
      { timeoutMs: 3000 },
    );
    await waitFor(() => s.received.length === 1);
    expect(isOneway(s.received[0]?.flag ?? 0)).toBe(true);
    expect(s.received[0]?.extFields).toMatchObject({ commitOffset: '12' });
  });

  test('a connection that dies fails its in-flight calls at once with a retriable TransportError', async () => {
    const s = await server(() => new Promise<undefined>(() => undefined));
    const c = client();
    const started = Date.now();
    const calls = [1, 2, 3].map((i) => c.invoke(s.addr, maxOffset(i), { timeoutMs: 20_000 }).catch((e: unknown) => e));
    await waitFor(() => s.received.length === 3);
    for (const sock of s.sockets) sock.destroy();
    const errs = await Promise.all(calls);
    expect(Date.now() - started).toBeLessThan(5000);
    for (const e of errs) expect(e).toMatchObject({ code: 'ERR_TRANSPORT', retriable: true });
  });

  test('reconnects after the server restarts; a refused connect fails fast and backs off', async () => {
    const s1 = await server(offsetAnswer);
    const port = s1.port;
    const c = client({ reconnectBackoffMs: 200, maxReconnectBackoffMs: 400 });
    expect((await c.invoke(s1.addr, maxOffset(1), { timeoutMs: 3000 })).header.offset).toBe(100);
    await s1.close();
    servers.splice(servers.indexOf(s1), 1);
    const addr = `127.0.0.1:${port}`;
    // The first call may meet the dying connection; soon one meets a refused connect.
    let e1: unknown;
    for (let i = 0; i < 5 && !/cannot connect/.test(String((e1 as Error | undefined)?.message)); i++)
      e1 = await c.invoke(addr, maxOffset(1), { timeoutMs: 3000 }).catch((e: unknown) => e);
    expect(e1).toMatchObject({ code: 'ERR_TRANSPORT', retriable: true });
    expect((e1 as Error).message).toMatch(/cannot connect/);
    // Within the backoff: no new attempt, an immediate error saying when the next one is.
    const t = Date.now();
    const e2 = await c.invoke(addr, maxOffset(1), { timeoutMs: 3000 }).catch((e: unknown) => e);
    expect(Date.now() - t).toBeLessThan(150);
    expect(e2).toMatchObject({ code: 'ERR_TRANSPORT', retriable: true });
    expect((e2 as Error).message).toMatch(/next attempt in/);
    const s2 = await RemotingTestServer.start(offsetAnswer, port);
    servers.push(s2);
    await eventually(
      async () => (await c.invoke(addr, maxOffset(2), { timeoutMs: 1000 })).header.offset === 200,
      5000,
      'reconnect',
    );
  });

  test('server requests go to the registered handler; unknown codes get REQUEST_CODE_NOT_SUPPORTED', async () => {
    const s = await server(offsetAnswer);
    const c = client();
    const notified: string[] = [];
    c.onServerRequest(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, (req) => {
      notified.push(req.extFields.consumerGroup ?? '');
    });
    c.onServerRequest(307, (req) => ({
      code: ResponseCode.SUCCESS,
      body: Buffer.from(`info for ${req.extFields.clientId}`),
    }));
    c.onServerRequest(309, () => {
      throw new Error('listener failed');
    });
    await c.invoke(s.addr, maxOffset(1), { timeoutMs: 3000 });
    s.sendToClients({
      code: RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
      opaque: 900,
      flag: 2,
      extFields: { consumerGroup: 'G' },
    });
    s.sendToClients({ code: 307, opaque: 901, extFields: { consumerGroup: 'G', clientId: 'c1' } }, 'ROCKETMQ');
    s.sendToClients({ code: 309, opaque: 902, extFields: {} });
    s.sendToClients({ code: 4242, opaque: 903 });
    await waitFor(() => s.responses.length === 3 && notified.length === 1);
    const byOpaque = new Map(s.responses.map((r) => [r.opaque, r]));
    expect(notified).toEqual(['G']);
    expect(byOpaque.has(900)).toBe(false); // oneway: never answered
    expect(byOpaque.get(901)?.body?.toString()).toBe('info for c1');
    expect(byOpaque.get(902)).toMatchObject({ code: ResponseCode.SYSTEM_ERROR, remark: 'listener failed' });
    expect(byOpaque.get(903)).toMatchObject({
      code: ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
      remark: ' request type 4242 not supported',
    });
  });

  test('registerProcessor: a processor in command form gets the request and its answer goes back', async () => {
    const s = await server(offsetAnswer);
    const c = client();
    const seen: Array<{ code: number; header: Record<string, unknown>; addr: string }> = [];
    const off = c.registerProcessor(307, async (req, addr) => {
      seen.push({ code: req.code, header: req.header, addr });
      return { code: ResponseCode.SUCCESS, header: {}, body: Buffer.from(`info for ${String(req.header.clientId)}`) };
    });
    await c.invoke(s.addr, maxOffset(1), { timeoutMs: 3000 });
    s.sendToClients({ code: 307, opaque: 911, extFields: { consumerGroup: 'G', clientId: 'c1' } });
    await waitFor(() => s.responses.length === 1);
    expect(seen).toEqual([{ code: 307, header: { consumerGroup: 'G', clientId: 'c1' }, addr: s.addr }]);
    expect(s.responses[0]).toMatchObject({ opaque: 911, code: ResponseCode.SUCCESS });
    expect(s.responses[0]?.body?.toString()).toBe('info for c1');
    off();
    s.sendToClients({ code: 307, opaque: 912 });
    await waitFor(() => s.responses.length === 2);
    expect(s.responses[1]).toMatchObject({ opaque: 912, code: ResponseCode.REQUEST_CODE_NOT_SUPPORTED });
  });

  test.each([
    ['a frame over the maximum', Buffer.from('7fffffff', 'hex')],
    ['a malformed frame', Buffer.from('0000000aff00000400000000000000', 'hex')],
  ])('%s closes the connection with a logged error and fails its calls', async (_n, junk) => {
    const s = await server((_cmd: RemotingCommand, socket: import('node:net').Socket) => {
      socket.write(junk);
      return undefined;
    });
    const logger = { debug: jest.fn(), info: jest.fn(), warn: jest.fn(), error: jest.fn() };
    const c = client({ logger });
    const err = await c.invoke(s.addr, maxOffset(1), { timeoutMs: 5000 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RocketMQError);
    expect((err as RocketMQError).retriable).toBe(true);
    expect(logger.error).toHaveBeenCalled();
    await waitFor(() => s.sockets.size === 0, 5000, 'connection closed');
  });

  test('JSON bodies: the heartbeat goes out as fastjson writes it; an unquoted-key route comes back as JSON', async () => {
    const route =
      '{"brokerDatas":[{"brokerAddrs":{0:"10.0.0.1:10911",1:"10.0.0.2:10911"},"brokerName":"b","cluster":"C","enableActingMaster":false}],"filterServerTable":{},"queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}';
    const s = await server((cmd: RemotingCommand) =>
      cmd.code === RequestCode.GET_ROUTEINFO_BY_TOPIC
        ? { code: ResponseCode.SUCCESS, body: Buffer.from(route) }
        : { code: ResponseCode.SUCCESS },
    );
    const c = client();
    const heartbeat = {
      clientID: 'c1',
      producerDataSet: [],
      consumerDataSet: [
        {
          groupName: 'G',
          consumeType: 'CONSUME_PASSIVELY',
          messageModel: 'CLUSTERING',
          consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
          unitMode: false,
          subscriptionDataSet: [
            {
              topic: 'T',
              subString: '*',
              tagsSet: [],
              codeSet: [],
              subVersion: 1,
              expressionType: 'TAG',
              classFilterMode: false,
            },
          ],
        },
      ],
    };
    await c.invoke(
      s.addr,
      { code: RequestCode.HEART_BEAT, header: {}, body: Buffer.from(JSON.stringify(heartbeat)) },
      { timeoutMs: 3000 },
    );
    expect(s.received[0]?.body?.toString()).toBe(
      '{"clientID":"c1","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET","consumeType":"CONSUME_PASSIVELY","groupName":"G","messageModel":"CLUSTERING","subscriptionDataSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":1,"tagsSet":[],"topic":"T"}],"unitMode":false}],"producerDataSet":[]}',
    );
    expect(s.received[0]?.extFields).toEqual({});
    const res = await c.invoke(
      s.addr,
      { code: RequestCode.GET_ROUTEINFO_BY_TOPIC, header: { topic: 'T' } },
      { timeoutMs: 3000 },
    );
    expect(JSON.parse(res.body?.toString() ?? '')).toMatchObject({
      brokerDatas: [{ brokerAddrs: { '0': '10.0.0.1:10911', '1': '10.0.0.2:10911' } }],
    });
  });

  test('a bad header is refused before sending, naming the field; a bad address names addr', async () => {
    const c = client();
    await expect(
      c.invoke(
        '127.0.0.1:1',
        { code: RequestCode.GET_MAX_OFFSET, header: { topic: 'T', queueId: 'x' } },
        { timeoutMs: 100 },
      ),
    ).rejects.toThrow(/GET_MAX_OFFSET\.queueId/);
    await expect(c.invoke('nohostport', maxOffset(1), { timeoutMs: 100 })).rejects.toThrow(/addr/);
    expect(parseAddress('[::1]:10911')).toEqual({ host: '::1', port: 10911 });
  });

  test('close() waits for calls in flight, is idempotent, and later calls fail with ClosedError', async () => {
    const s = await server(async (cmd: RemotingCommand) => {
      await new Promise((r) => setTimeout(r, 100));
      return offsetAnswer(cmd);
    });
    const c = client();
    const p = c.invoke(s.addr, maxOffset(5), { timeoutMs: 3000 });
    await waitFor(() => s.received.length === 1);
    const closing = c.close();
    expect(c.close()).toBe(closing);
    expect((await p).header.offset).toBe(500);
    await closing;
    await waitFor(() => s.sockets.size === 0, 3000, 'socket closed');
    await expect(c.invoke(s.addr, maxOffset(1), { timeoutMs: 100 })).rejects.toBeInstanceOf(ClosedError);
  });
});
