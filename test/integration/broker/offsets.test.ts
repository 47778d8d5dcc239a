/**
 * Consumer offsets (RocketMQ's ConsumerOffsetManager) and queue offsets over real HTTP, and their
 * persistence across a restart.
 */
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { Broker } from '../../../src/broker/index.js';
import { RequestCode, ResponseCode, buildPullSysFlag } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { startBroker, tempStorePath, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;

beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

const query = (group: string, topic: string, queueId = 0, setZeroIfNotFound?: boolean) =>
  f.client.call('QUERY_CONSUMER_OFFSET', {
    consumerGroup: group,
    topic,
    queueId,
    ...(setZeroIfNotFound !== undefined ? { setZeroIfNotFound } : {}),
  });

const update = (group: string, topic: string, commitOffset: number, queueId = 0) =>
  f.client.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId, commitOffset });

describe('QUERY_CONSUMER_OFFSET / UPDATE_CONSUMER_OFFSET', () => {
  test('RocketMQ: a new group on a young queue gets offset 0; an empty queue gives QUERY_NOT_FOUND', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'x', { queueId: 0 });
    const young = await query(uniqueName('g'), topic, 0);
    expect(young.code).toBe(ResponseCode.SUCCESS);
    expect(young.header.offset).toBe(0);
    const empty = await query(uniqueName('g'), topic, 1);
    expect(empty.code).toBe(ResponseCode.QUERY_NOT_FOUND);
    expect(empty.remark).toBe('Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first');
  });

  test('setZeroIfNotFound=false gives QUERY_NOT_FOUND even on a young queue', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'x');
    const r = await query(uniqueName('g'), topic, 0, false);
    expect(r.code).toBe(ResponseCode.QUERY_NOT_FOUND);
    expect(r.remark).toBe('Not found, do not set to zero, maybe this group boot first');
  });

  test('UPDATE then QUERY returns the committed offset; a lower value overwrites (RocketMQ: plain overwrite)', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    await f.client.send(topic, 'x');
    await f.client.pull({ group, topic }); // creates the group
    const u = await update(group, topic, 7);
    expect(u.code).toBe(ResponseCode.SUCCESS);
    expect((await query(group, topic)).header.offset).toBe(7);
    await update(group, topic, 3);
    expect((await query(group, topic)).header.offset).toBe(3);
  });

  test('UPDATE_CONSUMER_OFFSET creates a new group as RocketMQ 4.9.8 accepts it, refuses one it may not create and an unknown topic', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'x');
    const group = uniqueName('g');
    const newGroup = await update(group, topic, 1);
    expect(newGroup.code).toBe(ResponseCode.SUCCESS);
    expect((await query(group, topic)).header.offset).toBe(1);
    const badName = await update('../g', topic, 1);
    expect(badName.code).toBe(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
    expect(badName.remark).toBe('Group ../g not exist!');
    const missing = uniqueName('Missing');
    const noTopic = await update(group, missing, 1);
    expect(noTopic.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(noTopic.remark).toBe(`Topic ${missing} not exist!`);
  });

  test('commit-on-pull: the COMMIT_OFFSET flag stores the offset carried by the pull', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    for (let i = 0; i < 3; i++) await f.client.send(topic, `m${i}`);
    const r = await f.client.pull({ group, topic, offset: 2, commitOffset: 2 });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect((await query(group, topic)).header.offset).toBe(2);
    expect(f.broker.consumerOffsetManager.queryPullOffset(group, topic, 0)).toBe(3);
  });

  test('commit-on-pull happens as the pull arrives: a later UPDATE_CONSUMER_OFFSET on the connection is not undone', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    for (let i = 0; i < 3; i++) await f.client.send(topic, `m${i}`);
    const connection = {
      remoteAddress: '127.0.0.1:1',
      signal: new AbortController().signal,
      gone: false,
      held: () => undefined,
      onGone: () => () => {},
    };
    // In arrival order, as one TCP connection delivers them: a pull carrying the consumer's offset 1, then
    // the consumer's final offset 3 (what it persists before giving the queue up).
    const pull = f.broker.handle(
      {
        code: RequestCode.PULL_MESSAGE,
        header: {
          consumerGroup: group,
          topic,
          queueId: 0,
          queueOffset: 1,
          maxMsgNums: 32,
          sysFlag: buildPullSysFlag(true, false, true),
          commitOffset: 1,
          suspendTimeoutMillis: 0,
          subVersion: 0,
          subscription: '*',
        },
      },
      connection,
    );
    const persist = f.broker.handle(
      {
        code: RequestCode.UPDATE_CONSUMER_OFFSET,
        header: { consumerGroup: group, topic, queueId: 0, commitOffset: 3 },
      },
      connection,
    );
    expect((await pull).code).toBe(ResponseCode.SUCCESS);
    expect((await persist).code).toBe(ResponseCode.SUCCESS);
    expect(f.broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(3);
  });

  test('without the COMMIT_OFFSET flag nothing is committed', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    await f.client.send(topic, 'x');
    await f.client.pull({ group, topic });
    expect(f.broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(-1);
  });
});

describe('queue offsets', () => {
  test('GET_MIN_OFFSET, GET_MAX_OFFSET and SEARCH_OFFSET_BY_TIMESTAMP', async () => {
    const topic = uniqueName('T');
    const before = Date.now() - 1;
    for (let i = 0; i < 3; i++) await f.client.send(topic, `m${i}`);
    const after = Date.now() + 1;
    expect((await f.client.call('GET_MIN_OFFSET', { topic, queueId: 0 })).header.offset).toBe(0);
    expect((await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 })).header.offset).toBe(3);
    expect((await f.client.call('GET_MAX_OFFSET', { topic, queueId: 2 })).header.offset).toBe(0);
    const lower = await f.client.call('SEARCH_OFFSET_BY_TIMESTAMP', { topic, queueId: 0, timestamp: before });
    expect(lower.header.offset).toBe(0);
    const upper = await f.client.call('SEARCH_OFFSET_BY_TIMESTAMP', {
      topic,
      queueId: 0,
      timestamp: after,
      boundaryType: 'upper',
    });
    expect(upper.header.offset).toBe(2);
    const past = await f.client.call('SEARCH_OFFSET_BY_TIMESTAMP', { topic, queueId: 0, timestamp: after });
    expect(past.header.offset).toBe(3);
  });

  test('offset queries with an unknown or illegal topic name answer 0 and touch no path', async () => {
    const r = await f.client.call('GET_MAX_OFFSET', { topic: '../../etc', queueId: 0 });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.header.offset).toBe(0);
    expect(existsSync(path.join(f.storePath, 'consumequeue', '..', '..', 'etc'))).toBe(false);
  });
});

describe('persistence', () => {
  test('committed offsets, topics and groups survive a broker restart', async () => {
    const storePath = tempStorePath();
    const topic = uniqueName('T');
    const group = uniqueName('g');
    try {
      const b1 = await Broker.start({ storePath, port: 0 });
      const c1 = new TestBrokerClient(b1.address);
      await c1.send(topic, 'x', { queueId: 1 });
      await c1.pull({ group, topic, queueId: 1 });
      expect(
        (await c1.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 1, commitOffset: 1 })).code,
      ).toBe(0);
      await b1.shutdown();
      await c1.close();

      const file = JSON.parse(readFileSync(path.join(storePath, 'config', 'consumerOffset.json'), 'utf8')) as {
        offsetTable: Record<string, Record<string, number>>;
      };
      expect(file.offsetTable[`${topic}@${group}`]).toEqual({ '1': 1 });

      const b2 = await Broker.start({ storePath, port: 0 });
      const c2 = new TestBrokerClient(b2.address);
      try {
        const q = await c2.call('QUERY_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 1 });
        expect(q.code).toBe(ResponseCode.SUCCESS);
        expect(q.header.offset).toBe(1);
        const route = await c2.call('GET_ROUTEINFO_BY_TOPIC', { topic });
        expect(route.code).toBe(ResponseCode.SUCCESS);
        expect(b2.subscriptionGroupManager.containsSubscriptionGroup(group)).toBe(true);
        expect((await c2.call('GET_MAX_OFFSET', { topic, queueId: 1 })).header.offset).toBe(1);
      } finally {
        await b2.shutdown();
        await c2.close();
      }
    } finally {
      rmSync(storePath, { recursive: true, force: true });
    }
  });

  test('offsets are persisted periodically, not only at shutdown', async () => {
    const g = await startBroker({ flushConsumerOffsetIntervalMs: 50 });
    try {
      const topic = uniqueName('T');
      const group = uniqueName('g');
      await g.client.send(topic, 'x');
      await g.client.pull({ group, topic, commitOffset: 1, offset: 1 });
      const file = path.join(g.storePath, 'config', 'consumerOffset.json');
      const deadline = Date.now() + 5000;
      let content = '';
      while (Date.now() < deadline) {
        content = existsSync(file) ? readFileSync(file, 'utf8') : '';
        if (content.includes(`${topic}@${group}`)) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(content).toContain(`${topic}@${group}`);
    } finally {
      await g.close();
    }
  });
});
