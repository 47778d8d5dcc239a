/**
 * Config files are inputs too: topics.json, subscriptionGroup.json and consumerOffset.json are loaded with
 * the limits the admin commands apply, and a table lost together with its .bak is said loudly.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Broker } from '../../../src/broker/index.js';
import type { Logger } from '../../../src/common/logger.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';

interface Line {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: Record<string, unknown>;
  msg: string;
}

function capture(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: Line['level']) =>
    (obj: unknown, msg?: string): void =>
      void lines.push({ level, obj: (obj ?? {}) as Record<string, unknown>, msg: msg ?? '' });
  return { logger: { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }, lines };
}

const stores: string[] = [];
afterAll(() => {
  for (const s of stores) rmSync(s, { recursive: true, force: true });
});

function store(files: Record<string, unknown> = {}): string {
  const dir = tempStorePath('rmq-cfgf-');
  stores.push(dir);
  mkdirSync(path.join(dir, 'config'), { recursive: true });
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(path.join(dir, 'config', name), typeof content === 'string' ? content : JSON.stringify(content));
  }
  return dir;
}

async function withBroker<T>(storePath: string, logger: Logger, fn: (b: Broker, c: TestBrokerClient) => Promise<T>) {
  const broker = await Broker.start({ storePath, port: 0, logger });
  const client = new TestBrokerClient(broker.address);
  try {
    return await fn(broker, client);
  } finally {
    await client.close();
    await broker.shutdown();
  }
}

describe('config files are validated like the API', () => {
  test('a topic with 1e9 queues in topics.json is refused on load (and its route is never served)', async () => {
    const topic = uniqueName('Huge');
    const ok = uniqueName('Fine');
    const dir = store({
      'topics.json': {
        dataVersion: { counter: 1, timestamp: 0 },
        topicConfigTable: {
          [topic]: { topicName: topic, readQueueNums: 1e9, writeQueueNums: 1e9, perm: 6 },
          [ok]: { topicName: ok, readQueueNums: 4, writeQueueNums: 4, perm: 6 },
          'bad/name': { readQueueNums: 1, writeQueueNums: 1, perm: 6 },
          [uniqueName('BadPerm')]: { readQueueNums: 1, writeQueueNums: 1, perm: 64 },
        },
      },
    });
    const { logger, lines } = capture();
    await withBroker(dir, logger, async (b, c) => {
      expect(b.topicConfigManager.selectTopicConfig(topic)).toBeUndefined();
      expect(b.topicConfigManager.selectTopicConfig(ok)?.readQueueNums).toBe(4);
      const route = await c.call('GET_ROUTEINFO_BY_TOPIC', { topic });
      expect(route.body.toString()).not.toContain('1000000000');
    });
    const refused = lines.filter((l) => l.msg === 'ignoring an invalid topic config on load');
    expect(refused.map((l) => l.obj.problem)).toEqual([
      'queue numbers must be between 1 and 1024',
      expect.stringMatching(/contains characters/),
      'perm must be a combination of READ 4, WRITE 2 and INHERIT 1',
    ]);
  });

  test('subscription groups and offsets out of the API limits are refused on load', async () => {
    const topic = uniqueName('T');
    const dir = store({
      'subscriptionGroup.json': {
        subscriptionGroupTable: {
          huge: { groupName: 'huge', retryQueueNums: 1e9 },
          fine: { groupName: 'fine', retryQueueNums: 2 },
          other: { groupName: 'not-other' },
        },
      },
      'consumerOffset.json': {
        offsetTable: {
          [`${topic}@fine`]: { '0': 5, '1': 7, '99999': 1, '-1': 3, x: 2, '2': 1.5 },
          'no-separator': { '0': 1 },
          'a@b@c': { '0': 1 },
        },
      },
    });
    const { logger, lines } = capture();
    await withBroker(dir, logger, async (b) => {
      expect(b.subscriptionGroupManager.selectSubscriptionGroupConfig('huge')).toBeUndefined();
      expect(b.subscriptionGroupManager.selectSubscriptionGroupConfig('other')).toBeUndefined();
      expect(b.subscriptionGroupManager.selectSubscriptionGroupConfig('fine')?.retryQueueNums).toBe(2);
      // The two legal entries are kept, then corrected to the queues' end at start: the store holds no
      // message of the topic, so an offset past it would make the group skip the first new messages.
      expect([...(b.consumerOffsetManager.offsetsOfGroup('fine').get(topic) ?? [])]).toEqual([
        [0, 0],
        [1, 0],
      ]);
      expect(b.consumerOffsetManager.offsetsOfGroup('b').size).toBe(0);
    });
    expect(lines.filter((l) => l.msg === 'ignoring an invalid subscription group config on load')).toHaveLength(2);
    const offsets = lines.find((l) => l.msg === 'ignoring invalid consumer offsets on load');
    expect(offsets?.obj.dropped).toBe(6);
  });

  test('the admin commands apply the same limits', async () => {
    const { logger } = capture();
    await withBroker(store(), logger, async (_b, c) => {
      const topic = uniqueName('T');
      const create = (h: Record<string, unknown>) =>
        c.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 4, writeQueueNums: 4, perm: 6, ...h });
      expect((await create({ readQueueNums: 2000 })).code).toBe(ResponseCode.INVALID_PARAMETER);
      expect((await create({ perm: 64 })).code).toBe(ResponseCode.INVALID_PARAMETER);
      expect((await create({ topicSysFlag: -1 })).code).toBe(ResponseCode.INVALID_PARAMETER);
      expect((await create({})).code).toBe(ResponseCode.SUCCESS);
      const group = await c.call(
        'UPDATE_AND_CREATE_SUBSCRIPTIONGROUP',
        {},
        Buffer.from(JSON.stringify({ groupName: 'g', retryQueueNums: 1e9 })),
      );
      expect(group.status).toBe(400);
      expect(group.error?.field).toBe('body.retryQueueNums');
      expect(
        (await c.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, Buffer.from(JSON.stringify({ groupName: 'g' })))).code,
      ).toBe(ResponseCode.SUCCESS);
      const commit = (queueId: number) =>
        c.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: 'g', topic, queueId, commitOffset: 1 });
      expect((await commit(3)).code).toBe(ResponseCode.SUCCESS);
      expect((await commit(4)).code).toBe(ResponseCode.INVALID_PARAMETER);
      expect((await commit(1_000_000)).code).toBe(ResponseCode.INVALID_PARAMETER);
    });
  });
});

describe('a table lost with its .bak is said loudly', () => {
  test('topics.json and consumerOffset.json missing with their .bak while the store holds messages: error logs', async () => {
    const dir = store();
    const topic = uniqueName('T');
    await withBroker(dir, capture().logger, async (_b, c) => {
      expect((await c.send(topic, 'kept')).code).toBe(ResponseCode.SUCCESS);
      await c.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, Buffer.from(JSON.stringify({ groupName: 'g' })));
      await c.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: 'g', topic, queueId: 0, commitOffset: 1 });
    });
    for (const f of ['topics.json', 'consumerOffset.json']) {
      rmSync(path.join(dir, 'config', f));
      rmSync(path.join(dir, 'config', `${f}.bak`), { force: true });
    }
    const { logger, lines } = capture();
    await withBroker(dir, logger, async () => undefined);
    const errors = lines.filter((l) => l.level === 'error').map((l) => l.msg);
    expect(errors).toEqual([
      expect.stringMatching(/^topics.json and its .bak are missing although the store holds messages/),
      expect.stringMatching(/^consumerOffset.json and its .bak are missing although the store holds messages/),
    ]);
  });

  test('a new store says nothing; a file whose .bak is intact is restored with a warning', async () => {
    const fresh = capture();
    await withBroker(store(), fresh.logger, async () => undefined);
    expect(fresh.lines.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);

    const dir = store();
    await withBroker(dir, capture().logger, async (_b, c) => {
      expect((await c.send(uniqueName('T'), 'x')).code).toBe(ResponseCode.SUCCESS);
    });
    rmSync(path.join(dir, 'config', 'topics.json'));
    const { logger, lines } = capture();
    await withBroker(dir, logger, async () => undefined);
    expect(lines.filter((l) => l.level === 'error')).toEqual([]);
    expect(lines.some((l) => l.level === 'warn' && l.msg === 'config file restored from its .bak')).toBe(true);
  });

  test('a file unreadable in both copies is kept aside and logged as lost', async () => {
    const dir = store({ 'topics.json': '{"torn', 'topics.json.bak': 'also torn' });
    const { logger, lines } = capture();
    await withBroker(dir, logger, async () => undefined);
    expect(lines.some((l) => l.level === 'error' && /both unreadable/.test(l.msg))).toBe(true);
    expect(readdirSync(path.join(dir, 'config')).some((f) => f.startsWith('topics.json.unreadable-'))).toBe(true);
    expect(existsSync(path.join(dir, 'config', 'topics.json'))).toBe(true);
  });
});
