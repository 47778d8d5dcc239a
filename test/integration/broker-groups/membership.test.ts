import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { uniqueName } from '../../support/broker-client.js';
import { consumerList, heartbeat, watch } from './group-client.js';
import { decodeMessages } from '../../../src/common/codec/index.js';

let fx: BrokerFixture;

beforeAll(async () => {
  fx = await startBroker({ channelExpiredTimeoutMs: 1500, watchRenewGraceMs: 500, clientScanIntervalMs: 100 });
});
afterAll(async () => {
  await fx.close();
});

describe('HEART_BEAT, GET_CONSUMER_LIST_BY_GROUP, UNREGISTER_CLIENT over HTTP', () => {
  test('a heartbeat registers the consumer, creates the subscription group and %RETRY%<group>', async () => {
    const group = uniqueName('G');
    expect((await heartbeat(fx.client, 'cidA', group)).code).toBe(0);
    expect(await consumerList(fx.client, group)).toEqual({ code: 0, ids: ['cidA'] });
    const retry = fx.broker.topicConfigManager.selectTopicConfig(`%RETRY%${group}`);
    expect(retry).toMatchObject({ readQueueNums: 1, writeQueueNums: 1, perm: 6 });
    expect(fx.broker.consumerManager.getConsumerGroupInfo(group)?.findSubscriptionData('T')).toBeDefined();
    expect((await fx.client.call('UNREGISTER_CLIENT', { clientID: 'cidA', consumerGroup: group })).code).toBe(0);
  });

  test('RocketMQ: a group without members answers SYSTEM_ERROR "no consumer for this group, <g>"', async () => {
    const group = uniqueName('G');
    expect(await consumerList(fx.client, group)).toEqual({
      code: 1,
      remark: `no consumer for this group, ${group}`,
      ids: [],
    });
  });

  test('UNREGISTER_CLIENT removes the member', async () => {
    const group = uniqueName('G');
    await heartbeat(fx.client, 'c1', group);
    await heartbeat(fx.client, 'c2', group);
    await fx.client.call('UNREGISTER_CLIENT', { clientID: 'c1', consumerGroup: group });
    expect((await consumerList(fx.client, group)).ids).toEqual(['c2']);
    await fx.client.call('UNREGISTER_CLIENT', { clientID: 'c2', consumerGroup: group, producerGroup: 'pg' });
    expect((await consumerList(fx.client, group)).code).toBe(1);
  });

  test('SQL92 subscriptions are compiled per topic and group and serve pulls that rely on the heartbeat', async () => {
    const group = uniqueName('G');
    const topic = uniqueName('T');
    await fx.client.send(topic, 'small', { properties: { a: '1' } });
    await fx.client.send(topic, 'big', { properties: { a: '10' } });
    const sub = (subString: string, expressionType: string) => ({
      topic: subString === '*' ? `%RETRY%${group}` : topic,
      subString,
      tagsSet: [],
      codeSet: [],
      subVersion: 100,
      expressionType,
      classFilterMode: false,
    });
    const body = {
      clientID: 'sqlc',
      consumerDataSet: [
        {
          groupName: group,
          consumeType: 'CONSUME_PASSIVELY',
          messageModel: 'CLUSTERING',
          consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
          subscriptionDataSet: [sub('a > 5', 'SQL92'), sub('*', 'TAG')],
        },
      ],
    };
    expect((await fx.client.call('HEART_BEAT', {}, Buffer.from(JSON.stringify(body)))).code).toBe(0);
    const filter = fx.broker.consumerFilterManager.get(topic, group);
    expect(filter).toMatchObject({ expression: 'a > 5', clientVersion: 100 });
    const pulled = await fx.client.pull({ group, topic, offset: 0, useSubscriptionFlag: false, subVersion: 100 });
    expect(pulled.code).toBe(0);
    expect(decodeMessages(pulled.body).map((m) => m.body?.toString())).toEqual(['big']);
  });

  test('a malformed heartbeat body is answered 400 naming the field', async () => {
    const a = await fx.client.call('HEART_BEAT', {}, Buffer.from(JSON.stringify({ consumerDataSet: [] })));
    expect(a.status).toBe(400);
    expect(a.error?.field).toContain('clientID');
  });
});

describe('WATCH_CONSUMER_IDS: membership news within one second', () => {
  test('an unknown version is answered at once with the current version and members', async () => {
    const group = uniqueName('G');
    await heartbeat(fx.client, 'c1', group);
    const w = await watch(fx.client, group, 'c1', -1);
    expect(w.code).toBe(0);
    expect(w.version).toBeGreaterThan(0);
    expect(w.ids).toEqual(['c1']);
  });

  test('a join and a leave are seen by a held watch within one second', async () => {
    const group = uniqueName('G');
    await heartbeat(fx.client, 'c1', group);
    const known = await watch(fx.client, group, 'c1', -1);
    const held = watch(fx.client, group, 'c1', known.version, 30_000);
    await waitFor(() => fx.broker.consumerManager.waiterCount(group) === 1);
    const t0 = Date.now();
    await heartbeat(fx.client, 'c2', group);
    const joined = await held;
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(joined.ids).toEqual(['c1', 'c2']);
    expect(joined.version).not.toBe(known.version);

    const held2 = watch(fx.client, group, 'c1', joined.version, 30_000);
    await waitFor(() => fx.broker.consumerManager.waiterCount(group) === 1);
    const t1 = Date.now();
    await fx.client.call('UNREGISTER_CLIENT', { clientID: 'c2', consumerGroup: group });
    const left = await held2;
    expect(Date.now() - t1).toBeLessThan(1000);
    expect(left.ids).toEqual(['c1']);
  });

  test('a held watch with no change is answered at its timeout with the same version', async () => {
    const group = uniqueName('G');
    await heartbeat(fx.client, 'c1', group);
    const known = await watch(fx.client, group, 'c1', -1);
    const t0 = Date.now();
    const w = await watch(fx.client, group, 'c1', known.version, 300);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(290);
    expect(w).toEqual({ code: 0, version: known.version, ids: ['c1'] });
  });

  test('RocketMQ: BROADCASTING groups get no news (the watch runs to its timeout)', async () => {
    const group = uniqueName('G');
    await heartbeat(fx.client, 'b1', group, { messageModel: 'BROADCASTING' });
    const known = await watch(fx.client, group, 'b1', -1);
    const held = watch(fx.client, group, 'b1', known.version, 400);
    await heartbeat(fx.client, 'b2', group, { messageModel: 'BROADCASTING' });
    const w = await held;
    expect(w.version).toBe(known.version);
    expect(w.ids).toEqual(['b1', 'b2']);
  });
});

describe('liveness', () => {
  test('a silent member is evicted after channelExpiredTimeoutMs and its departure is announced', async () => {
    const group = uniqueName('G');
    await heartbeat(fx.client, 'alive', group);
    await heartbeat(fx.client, 'silent', group);
    const t0 = Date.now();
    // "alive" keeps heartbeating; "silent" stops
    const timer = setInterval(() => void heartbeat(fx.client, 'alive', group), 300);
    try {
      let known = (await watch(fx.client, group, 'alive', -1)).version;
      let ids: string[] = [];
      while (Date.now() - t0 < 10_000) {
        const w = await watch(fx.client, group, 'alive', known, 5000);
        known = w.version;
        ids = w.ids;
        if (!ids.includes('silent')) break;
      }
      expect(ids).toEqual(['alive']);
      const elapsed = Date.now() - t0;
      expect(elapsed).toBeGreaterThanOrEqual(1400);
      expect(elapsed).toBeLessThan(10_000);
    } finally {
      clearInterval(timer);
    }
  });

  test('a member whose watch connection closes and is not renewed is evicted after the grace time', async () => {
    // a long expiry, so only the watch rule can evict within the test
    const own = await startBroker({
      channelExpiredTimeoutMs: 60_000,
      watchRenewGraceMs: 500,
      clientScanIntervalMs: 100,
    });
    try {
      const group = uniqueName('G');
      await heartbeat(own.client, 'keeper', group);
      await heartbeat(own.client, 'gone', group);
      const v = (await watch(own.client, group, 'gone', -1)).version;
      const ac = new AbortController();
      const goneWatch = watch(own.client, group, 'gone', v, 60_000, ac.signal).catch(() => null);
      await waitFor(() => own.broker.consumerManager.waiterCount(group) === 1);
      const keeperWatch = watch(own.client, group, 'keeper', v, 60_000);
      await waitFor(() => own.broker.consumerManager.waiterCount(group) === 2);
      const t0 = Date.now();
      ac.abort(); // the client died: its held call's connection closes
      await goneWatch;
      const w = await keeperWatch;
      expect(w.ids).toEqual(['keeper']);
      const elapsed = Date.now() - t0;
      expect(elapsed).toBeGreaterThanOrEqual(450);
      expect(elapsed).toBeLessThan(10_000);
    } finally {
      await own.close();
    }
  });
});
