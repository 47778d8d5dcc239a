import { RequestCode } from '../../../../src/protocol/index.js';
import type { RemotingRequest } from '../../../../src/protocol/command.js';
import {
  MQClientInstance,
  topicRouteToPublishInfo,
  topicRouteToSubscribeInfo,
} from '../../../../src/client/instance/mq-client-instance.js';
import type { MQConsumerInner } from '../../../../src/client/instance/mq-consumer-inner.js';
import { resolvePullConsumerOptions } from '../../../../src/client/consumer/pull/pull-consumer-options.js';
import { InvalidArgumentError, StateError } from '../../../../src/common/errors.js';
import { buildSubscriptionData } from '../../../../src/filter/index.js';
import type { MessageQueue } from '../../../../src/common/message.js';
import { ManualClock, flush } from '../../../support/manual-clock.js';
import { FakeRemotingClient, json, ok, routeOf } from '../core-fakes.js';

let seq = 0;
function options(clock: ManualClock, extra: Record<string, unknown> = {}) {
  return resolvePullConsumerOptions({
    endpoints: ['http://ep1:1', 'http://ep2:1'],
    consumerGroup: 'g',
    instanceName: `inst-${++seq}`,
    clientIP: '10.0.0.1',
    clock,
    ...extra,
  });
}

function consumer(group: string, topics: string[], model: 'CLUSTERING' | 'BROADCASTING' = 'CLUSTERING') {
  const updates: Array<[string, MessageQueue[]]> = [];
  let rebalances = 0;
  let persists = 0;
  const inner: MQConsumerInner = {
    groupName: () => group,
    messageModel: () => model,
    consumeType: () => 'CONSUME_PASSIVELY',
    consumeFromWhere: () => 'CONSUME_FROM_LAST_OFFSET',
    subscriptions: () => topics.map((t) => ({ ...buildSubscriptionData(t, 'TagA || TagB'), subVersion: 42 })),
    doRebalance: async () => {
      rebalances++;
    },
    persistConsumerOffset: async () => {
      persists++;
    },
    updateTopicSubscribeInfo: (t, mqs) => updates.push([t, mqs]),
  };
  return {
    inner,
    updates,
    get rebalances() {
      return rebalances;
    },
    get persists() {
      return persists;
    },
  };
}

const routeFor = (r: RemotingRequest) => (r.header as { topic: string }).topic;

test('route → queue sets: readable queues sorted for subscribe, writable master queues for publish', () => {
  const route = routeOf({ 'broker-b': 'http://b:1', 'broker-a': 'http://a:1' }, 2);
  route.queueDatas.push({ brokerName: 'broker-c', readQueueNums: 3, writeQueueNums: 3, perm: 2, topicSysFlag: 0 });
  route.brokerDatas.push({ cluster: 'c', brokerName: 'broker-c', brokerAddrs: { '0': 'http://c:1' } });
  expect(topicRouteToSubscribeInfo('T', route).map((q) => `${q.brokerName}:${q.queueId}`)).toEqual([
    'broker-a:0',
    'broker-a:1',
    'broker-b:0',
    'broker-b:1',
  ]);
  expect(topicRouteToPublishInfo('T', route).map((q) => `${q.brokerName}:${q.queueId}`)).toEqual([
    'broker-a:0',
    'broker-a:1',
    'broker-b:0',
    'broker-b:1',
    'broker-c:0',
    'broker-c:1',
    'broker-c:2',
  ]);
});

test('acquire shares one instance per client id; the last release shuts it down and clears every timer', async () => {
  const clock = new ManualClock();
  const fake = new FakeRemotingClient(() => ok({}, json(routeOf({ a: 'http://a:1' }))));
  const o = options(clock);
  const i1 = MQClientInstance.acquire(o, fake);
  const i2 = MQClientInstance.acquire(o, fake);
  expect(i1).toBe(i2);
  expect(i1.clientId).toBe(`10.0.0.1@${o.instanceName}`);
  await i1.start();
  await i1.start();
  expect(clock.pendingTimers).toBeGreaterThan(0);
  await i1.release();
  expect(i1.state).toBe('RUNNING');
  await i2.release();
  expect(i1.state).toBe('SHUTDOWN');
  expect(clock.pendingTimers).toBe(0);
  expect(fake.closed).toBe(1);
  expect(() => i1.registerConsumer('x', consumer('x', []).inner)).toThrow(StateError);
  // A new acquire after shutdown builds a fresh instance.
  const i3 = MQClientInstance.acquire(o, fake);
  expect(i3).not.toBe(i1);
  await i3.release();
});

test('registering a consumer group twice in one instance throws', async () => {
  const clock = new ManualClock();
  const inst = MQClientInstance.acquire(options(clock), new FakeRemotingClient(() => ok()));
  inst.registerConsumer('g1', consumer('g1', []).inner);
  expect(() => inst.registerConsumer('g1', consumer('g1', []).inner)).toThrow(InvalidArgumentError);
  await inst.release();
});

test('updateTopicRouteInfo: a non-retriable failure of an endpoint surfaces at once', async () => {
  const clock = new ManualClock();
  const fake = new FakeRemotingClient(() => {
    throw new InvalidArgumentError('x', 'refused');
  });
  const inst = MQClientInstance.acquire(options(clock), fake);
  await expect(inst.updateTopicRouteInfo('T')).rejects.toThrow('refused');
  expect(fake.calls).toHaveLength(1);
  await inst.release();
});

test('updateTopicRouteInfo rotates endpoints on retriable errors and notifies consumers', async () => {
  const clock = new ManualClock();
  const { TransportError } = await import('../../../../src/common/errors.js');
  let queues = 4;
  const fake = new FakeRemotingClient((addr, r) => {
    if (addr === 'http://ep1:1') throw new TransportError('refused');
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC)
      return ok({}, json(routeOf({ 'broker-a': 'http://a:1' }, queues)));
    return ok();
  });
  const inst = MQClientInstance.acquire(options(clock), fake);
  const c = consumer('g', ['T']);
  inst.registerConsumer('g', c.inner);
  const changes: string[] = [];
  inst.events.on('routeChanged', () => {
    throw new Error('a listener that throws never kills the client');
  });
  inst.events.on('routeChanged', (t) => changes.push(t));
  const route = await inst.updateTopicRouteInfo('T');
  expect(route?.queueDatas[0]?.readQueueNums).toBe(4);
  expect(c.updates).toHaveLength(1);
  expect(c.updates[0]![1]).toHaveLength(4);
  await inst.updateTopicRouteInfo('T');
  expect(changes).toEqual(['T']);
  queues = 8;
  await inst.updateTopicRouteInfo('T');
  expect(changes).toEqual(['T', 'T']);
  expect(c.updates[1]![1]).toHaveLength(8);
  expect(inst.getTopicSubscribeInfo('T')).toHaveLength(8);
  expect(inst.findBrokerAddressInPublish('broker-a')).toBe('http://a:1');
  expect(inst.findBrokerAddressInSubscribe('broker-a', 0)).toEqual({
    brokerAddr: 'http://a:1',
    slave: false,
    brokerId: 0,
  });
  // RocketMQ: an unknown slave id falls back to any broker of the name.
  expect(inst.findBrokerAddressInSubscribe('broker-a', 3)).toEqual({
    brokerAddr: 'http://a:1',
    slave: false,
    brokerId: 0,
  });
  expect(inst.findBrokerAddressInSubscribe('broker-a', 3, true)).toBeUndefined();
  expect(inst.findBrokerAddressInSubscribe('nope')).toBeUndefined();
  // The endpoint that worked is tried first next time.
  const before = fake.calls.filter((x) => x.addr === 'http://ep1:1').length;
  await inst.updateTopicRouteInfo('T');
  expect(fake.calls.filter((x) => x.addr === 'http://ep1:1').length).toBe(before);
  await inst.release();
});

test('TOPIC_NOT_EXIST: updateTopicRouteInfo resolves null and fetchSubscribeMessageQueues throws ERR_TOPIC_NOT_EXIST', async () => {
  const clock = new ManualClock();
  const inst = MQClientInstance.acquire(
    options(clock),
    new FakeRemotingClient(() => ({ code: 17, header: {}, remark: 'no' })),
  );
  expect(await inst.updateTopicRouteInfo('T')).toBeNull();
  await expect(inst.fetchSubscribeMessageQueues('T')).rejects.toMatchObject({ code: 'ERR_TOPIC_NOT_EXIST' });
  await inst.release();
});

test('scheduled tasks: route at 10 ms, heartbeat at 1 s then every 30 s to every broker, offsets persisted every 5 s', async () => {
  const clock = new ManualClock();
  const fake = new FakeRemotingClient((_a, r, opts) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC
      ? ok({}, json(routeOf(routeFor(r) === 'T' ? { 'broker-a': 'http://a:1', 'broker-b': 'http://b:1' } : {})))
      : r.code === RequestCode.WATCH_CONSUMER_IDS
        ? new Promise((_resolve, reject) => opts.signal?.addEventListener('abort', () => reject(new Error('aborted'))))
        : ok(),
  );
  const inst = MQClientInstance.acquire(options(clock), fake);
  const c = consumer('g', ['T']);
  inst.registerConsumer('g', c.inner);
  await inst.start();
  await clock.advanceAsync(10);
  expect(fake.callsOf(RequestCode.GET_ROUTEINFO_BY_TOPIC)).toHaveLength(1);
  await clock.advanceAsync(990);
  const hbs = fake.callsOf(RequestCode.HEART_BEAT);
  expect(hbs.map((h) => h.addr).sort()).toEqual(['http://a:1', 'http://b:1']);
  const data = JSON.parse(hbs[0]!.request.body!.toString());
  expect(data).toEqual({
    clientID: inst.clientId,
    consumerDataSet: [
      {
        groupName: 'g',
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        subscriptionDataSet: [
          {
            topic: 'T',
            subString: 'TagA || TagB',
            tagsSet: ['TagA', 'TagB'],
            codeSet: [2598919, 2598920],
            subVersion: 42,
            expressionType: 'TAG',
            classFilterMode: false,
          },
        ],
        unitMode: false,
      },
    ],
    producerDataSet: [],
  });
  await clock.advanceAsync(30_000);
  expect(fake.callsOf(RequestCode.HEART_BEAT)).toHaveLength(4);
  expect(c.persists).toBe(6);
  // The membership watcher holds one watch per master broker for the CLUSTERING group.
  expect(
    fake
      .callsOf(RequestCode.WATCH_CONSUMER_IDS)
      .map((x) => x.addr)
      .sort(),
  ).toEqual(['http://a:1', 'http://b:1']);
  await inst.release();
  // RocketMQ: UNREGISTER_CLIENT goes to every broker at shutdown.
  const unregs = fake.callsOf(RequestCode.UNREGISTER_CLIENT);
  expect(unregs.map((u) => u.addr).sort()).toEqual(['http://a:1', 'http://b:1']);
  expect(unregs[0]!.request.header).toEqual({ clientID: inst.clientId, consumerGroup: 'g' });
  // Held watches were aborted.
  expect(fake.callsOf(RequestCode.WATCH_CONSUMER_IDS).every((x) => x.opts.signal?.aborted)).toBe(true);
  expect(clock.pendingTimers).toBe(0);
});

test('a heartbeat failure is reported as heartbeatError and does not stop the others', async () => {
  const clock = new ManualClock();
  const fake = new FakeRemotingClient((addr, r) => {
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC)
      return ok({}, json(routeOf({ a: 'http://a:1', b: 'http://b:1' })));
    if (r.code === RequestCode.HEART_BEAT && addr === 'http://a:1') return { code: 1, header: {}, remark: 'boom' };
    return ok();
  });
  const inst = MQClientInstance.acquire(options(clock), fake);
  inst.registerProducer('pg', { groupName: () => 'pg' });
  await inst.updateTopicRouteInfo('T');
  const errors: string[] = [];
  inst.events.on('heartbeatError', (addr) => errors.push(addr));
  await inst.sendHeartbeatToAllBrokers();
  expect(errors).toEqual(['http://a:1']);
  expect(fake.callsOf(RequestCode.HEART_BEAT)).toHaveLength(2);
  await inst.release();
});

test('concurrent heartbeats coalesce into one more run', async () => {
  const clock = new ManualClock();
  const fake = new FakeRemotingClient((_a, r) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC ? ok({}, json(routeOf({ a: 'http://a:1' }))) : ok(),
  );
  const inst = MQClientInstance.acquire(options(clock), fake);
  inst.registerProducer('pg', { groupName: () => 'pg' });
  await inst.updateTopicRouteInfo('T');
  await Promise.all([
    inst.sendHeartbeatToAllBrokers(),
    inst.sendHeartbeatToAllBrokers(),
    inst.sendHeartbeatToAllBrokers(),
  ]);
  expect(fake.callsOf(RequestCode.HEART_BEAT)).toHaveLength(2);
  await inst.release();
});

test('rebalanceImmediately wakes the RebalanceService, which calls doRebalance of every consumer', async () => {
  const clock = new ManualClock();
  const fake = new FakeRemotingClient(() => ok());
  const inst = MQClientInstance.acquire(options(clock), fake);
  const c1 = consumer('g1', []);
  const c2 = consumer('g2', []);
  inst.registerConsumer('g1', c1.inner);
  inst.registerConsumer('g2', c2.inner);
  await inst.start();
  inst.rebalanceImmediately();
  await clock.advanceAsync(0);
  expect([c1.rebalances, c2.rebalances]).toEqual([1, 1]);
  await clock.advanceAsync(20_000);
  expect([c1.rebalances, c2.rebalances]).toEqual([2, 2]);
  await inst.unregisterConsumer('g2');
  await clock.advanceAsync(20_000);
  expect([c1.rebalances, c2.rebalances]).toEqual([3, 2]);
  await inst.release();
  await flush();
});

test('findConsumerIdList asks a broker of the topic; an empty group is []', async () => {
  const clock = new ManualClock();
  const fake = new FakeRemotingClient((_a, r) => {
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) return ok({}, json(routeOf({ a: 'http://a:1' })));
    if ((r.header as { consumerGroup: string }).consumerGroup === 'empty')
      return { code: 1, header: {}, remark: 'no consumer for this group, empty' };
    return ok({}, json({ consumerIdList: ['c1', 'c2'] }));
  });
  const inst = MQClientInstance.acquire(options(clock), fake);
  expect(await inst.findConsumerIdList('T', 'g')).toEqual(['c1', 'c2']);
  expect(await inst.findConsumerIdList('T', 'empty')).toEqual([]);
  expect(fake.callsOf(RequestCode.GET_CONSUMER_LIST_BY_GROUP)[0]!.addr).toBe('http://a:1');
  await inst.release();
});
