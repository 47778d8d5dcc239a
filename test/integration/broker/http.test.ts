/**
 * The HTTP mapping (docs/protocol.md) and its failure answers: nothing a client sends crashes the
 * broker or produces a 500.
 */
import { existsSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import fc from 'fast-check';
import { encodeFrame, ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, parseAnswer, uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;

beforeAll(async () => {
  f = await startBroker({ maxRequestBodyBytes: 64 * 1024 });
});
afterAll(async () => {
  await f.close();
});

async function alive(client: TestBrokerClient = f.client): Promise<void> {
  const r = await client.call('GET_MAX_OFFSET', { topic: 'Alive', queueId: 0 });
  expect(r.status).toBe(200);
  expect(r.code).toBe(ResponseCode.SUCCESS);
}

const frameWithHeaderLength = (n: number, rest: Buffer = Buffer.alloc(0)): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0, 0);
  return Buffer.concat([b, rest]);
};

describe('malformed requests are answered 400 with the field and the problem', () => {
  test.each([
    ['too short', Buffer.from([1, 2])],
    ['header length past the end', frameWithHeaderLength(50, Buffer.from('{}'))],
    ['huge header length', frameWithHeaderLength(0xffffffff, Buffer.from('{}'))],
    ['header not JSON', frameWithHeaderLength(5, Buffer.from('{nope'))],
  ])('%s', async (_name, frame) => {
    const r = parseAnswer(await f.client.raw('/v1/PULL_MESSAGE', { body: frame }));
    expect(r.status).toBe(400);
    expect(r.error).toMatchObject({ error: 'BAD_REQUEST', field: '(frame)' });
    await alive();
  });

  test('an empty body is a malformed frame', async () => {
    const r = parseAnswer(await f.client.raw('/v1/GET_MAX_OFFSET', {}));
    expect(r.status).toBe(400);
  });

  test('a field of the wrong type names the field', async () => {
    const r = await f.client.call('GET_MAX_OFFSET', { topic: 'T', queueId: 'zero' });
    expect(r.status).toBe(400);
    expect(r.error?.field).toBe('queueId');
    expect(r.error?.message).toBeTruthy();
  });

  test('a missing field names the field', async () => {
    const r = await f.client.call('PULL_MESSAGE', { consumerGroup: 'g', topic: 'T', queueId: 0 });
    expect(r.status).toBe(400);
    expect(r.error?.field).toBe('queueOffset');
  });

  test('a header that is not an object, and a 64-bit value past 2^53, are refused', async () => {
    const arr = parseAnswer(await f.client.raw('/v1/GET_MAX_OFFSET', { body: encodeFrame([1, 2]) }));
    expect(arr.status).toBe(400);
    const big = Buffer.from('{"topic":"T","queueId":0,"timestamp":9223372036854775807}');
    const r = parseAnswer(
      await f.client.raw('/v1/SEARCH_OFFSET_BY_TIMESTAMP', { body: frameWithHeaderLength(big.length, big) }),
    );
    expect(r.status).toBe(400);
    expect(r.error?.field).toBe('timestamp');
  });

  test('a JSON body that does not match its schema is refused', async () => {
    const r = await f.client.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, Buffer.from('{"groupName": 5}'));
    expect(r.status).toBe(400);
    expect(r.error?.field).toBe('body.groupName');
    const notJson = await f.client.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, Buffer.from('{x'));
    expect(notJson.status).toBe(400);
    expect(notJson.error?.field).toBe('(body)');
  });

  test('a body over the limit is answered 413 and the connection keeps working', async () => {
    const r = parseAnswer(await f.client.raw('/v1/SEND_MESSAGE', { body: Buffer.alloc(100 * 1024) }));
    expect(r.status).toBe(413);
    expect(r.error?.error).toBe('PAYLOAD_TOO_LARGE');
    await alive();
  });

  test('a much larger body is refused too', async () => {
    const res: { status: number } | Error = await f.client
      .raw('/v1/SEND_MESSAGE', { body: Buffer.alloc(2 * 1024 * 1024) })
      .catch((e: unknown) => (e instanceof Error ? e : new Error(String(e))));
    // The broker may close the connection while the client still writes; either way it is refused.
    if (!(res instanceof Error)) expect(res.status).toBe(413);
    await alive();
  });
});

describe('paths, methods and commands', () => {
  test('unknown command name or number: 200 with REQUEST_CODE_NOT_SUPPORTED', async () => {
    const byName = await f.client.call('NO_SUCH_COMMAND', {});
    expect(byName.status).toBe(200);
    expect(byName.code).toBe(ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    const byCode = await f.client.call(12345, {});
    expect(byCode.code).toBe(ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    expect(byCode.remark).toBe(' request type 12345 not supported');
  });

  test('a command by its request code number works like its name', async () => {
    const r = await f.client.call(30, { topic: 'T', queueId: 0 });
    expect(r.code).toBe(ResponseCode.SUCCESS);
  });

  test.each(['/', '/v1', '/v1/', '/v2/PULL_MESSAGE', '/v1/PULL_MESSAGE/x', '/v1/..%2F', '/v1/a.b'])(
    '404 for %s',
    async (p) => {
      const r = parseAnswer(await f.client.raw(p, { body: encodeFrame({}) }));
      expect(r.status).toBe(404);
      expect(r.error?.error).toBe('NOT_FOUND');
    },
  );

  test('405 for a method other than POST', async () => {
    const r = parseAnswer(await f.client.raw('/v1/GET_MAX_OFFSET', { method: 'GET' }));
    expect(r.status).toBe(405);
    expect(r.error?.error).toBe('METHOD_NOT_ALLOWED');
  });

  test('a request that is not HTTP gets 400 and the broker keeps serving', async () => {
    const url = new URL(f.broker.address);
    const answer = await new Promise<string>((resolve) => {
      const s = net.connect(Number(url.port), url.hostname, () => s.write('GARBAGE \x00\x01\x02 NOT HTTP\r\n\r\n'));
      let data = '';
      s.on('data', (d) => (data += d.toString()));
      s.on('close', () => resolve(data));
      s.on('error', () => resolve(data));
    });
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    await alive();
  });

  test('random frames to every command never give a 500 and never stop the broker', async () => {
    const commands = [
      'PULL_MESSAGE',
      'SEND_MESSAGE',
      'SEND_BATCH_MESSAGE',
      'QUERY_CONSUMER_OFFSET',
      'UPDATE_CONSUMER_OFFSET',
      'GET_ROUTEINFO_BY_TOPIC',
      'HEART_BEAT',
      'VIEW_MESSAGE_BY_ID',
      'UPDATE_AND_CREATE_TOPIC',
    ];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...commands),
        fc.oneof(
          fc.uint8Array({ maxLength: 200 }).map((a) => Buffer.from(a)),
          fc
            .dictionary(
              fc.constantFrom(
                'topic',
                'queueId',
                'consumerGroup',
                'queueOffset',
                'maxMsgNums',
                'sysFlag',
                'offset',
                'commitOffset',
                'subscription',
              ),
              fc.oneof(fc.integer(), fc.string(), fc.boolean(), fc.constant(null), fc.double()),
            )
            .map((h) => encodeFrame(h, Buffer.from('body'))),
        ),
        async (command, frame) => {
          const r = await f.client.raw(`/v1/${command}`, { body: frame });
          expect([200, 400]).toContain(r.status);
        },
      ),
      { numRuns: 150 },
    );
    await alive();
  });
});

describe('names that could escape the store directory are refused', () => {
  test.each(['../evil', '..', 'a/b', 'a\\b', 'x\u0000y', '.hidden'])('topic %j', async (topic) => {
    const send = await f.client.send(topic, 'x');
    expect(send.code).toBe(ResponseCode.SYSTEM_ERROR);
    const create = await f.client.call('UPDATE_AND_CREATE_TOPIC', {
      topic,
      readQueueNums: 1,
      writeQueueNums: 1,
      perm: 6,
    });
    expect(create.code).toBe(ResponseCode.SYSTEM_ERROR);
    const pull = await f.client.pull({ group: uniqueName('g'), topic });
    expect(pull.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(existsSync(path.join(f.storePath, 'evil'))).toBe(false);
    expect(existsSync(path.join(path.dirname(f.storePath), 'evil'))).toBe(false);
  });

  test('a group name with path characters is not auto-created', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'x');
    const r = await f.client.pull({ group: '../g', topic });
    expect(r.code).toBe(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
    expect(f.broker.subscriptionGroupManager.containsSubscriptionGroup('../g')).toBe(false);
    const u = await f.client.call('UPDATE_CONSUMER_OFFSET', {
      consumerGroup: '../g',
      topic,
      queueId: 0,
      commitOffset: 1,
    });
    expect(u.code).toBe(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
  });
});

describe('access token', () => {
  test('required on every call when configured, compared in constant time', async () => {
    const g = await startBroker({ accessToken: 's3cret' }, { token: 's3cret' });
    const anonymous = new TestBrokerClient(g.broker.address);
    const wrong = new TestBrokerClient(g.broker.address, { token: 'wrong' });
    try {
      await alive(g.client);
      const none = await anonymous.call('GET_MAX_OFFSET', { topic: 'T', queueId: 0 });
      expect(none.status).toBe(401);
      expect(none.error?.error).toBe('UNAUTHORIZED');
      const bad = await wrong.call('GET_MAX_OFFSET', { topic: 'T', queueId: 0 });
      expect(bad.status).toBe(401);
      const badPath = parseAnswer(await anonymous.raw('/nowhere', { method: 'GET' }));
      expect(badPath.status).toBe(401);
    } finally {
      await anonymous.close();
      await wrong.close();
      await g.close();
    }
  });
});
