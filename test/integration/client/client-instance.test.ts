/**
 * MQClientInstance against the real broker: heartbeats register the group, the membership watch
 * (WATCH_CONSUMER_IDS) tells a member of a join and of a leave within a second, UNREGISTER_CLIENT at
 * shutdown, and nothing is left running afterwards.
 */
import { randomUUID } from 'node:crypto';
import { Producer } from '../../../src/index.js';
import { MQClientInstance } from '../../../src/client/instance/mq-client-instance.js';
import type { MQConsumerInner } from '../../../src/client/instance/mq-consumer-inner.js';
import { resolvePullConsumerOptions } from '../../../src/client/consumer/pull/pull-consumer-options.js';
import { buildSubscriptionData } from '../../../src/filter/index.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

const unique = (p: string): string => `${p}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

let fx: BrokerFixture;
beforeAll(async () => {
  fx = await startBroker();
});
afterAll(() => fx.close());

function member(group: string, topic: string) {
  let rebalances = 0;
  const inner: MQConsumerInner = {
    groupName: () => group,
    messageModel: () => 'CLUSTERING',
    consumeType: () => 'CONSUME_PASSIVELY',
    consumeFromWhere: () => 'CONSUME_FROM_LAST_OFFSET',
    subscriptions: () => [buildSubscriptionData(topic, '*')],
    doRebalance: async () => {
      rebalances++;
    },
    persistConsumerOffset: async () => undefined,
    updateTopicSubscribeInfo: () => undefined,
  };
  const instance = MQClientInstance.acquire(
    resolvePullConsumerOptions({ endpoints: fx.broker.address, consumerGroup: group, instanceName: unique('i') }),
  );
  instance.registerConsumer(group, inner);
  return {
    instance,
    get rebalances() {
      return rebalances;
    },
    async join() {
      await instance.start();
      await instance.updateTopicRouteInfo(topic);
      await instance.sendHeartbeatToAllBrokers();
    },
  };
}

test('a member learns of a join and of a leave through the membership watch, within a second', async () => {
  const topic = unique('T');
  const group = unique('G');
  const producer = new Producer({ endpoints: fx.broker.address });
  await producer.start();
  await producer.send({ topic, body: Buffer.from('create the topic') });
  await producer.shutdown();

  const a = member(group, topic);
  await a.join();
  const seen: string[][] = [];
  a.instance.events.on('consumerIdsChanged', (_g, ids) => seen.push(ids));
  expect(await a.instance.findConsumerIdList(topic, group)).toEqual([a.instance.clientId]);
  // Let A's watch reach the broker and be held.
  await new Promise((r) => setTimeout(r, 200));

  const b = member(group, topic);
  // A's rebalance on the news may come before the test sees the news itself: counted from before the join.
  const rebalancesBefore = a.rebalances;
  const t0 = Date.now();
  await b.join();
  await waitFor(() => seen.some((ids) => ids.includes(b.instance.clientId)), 3000);
  expect(Date.now() - t0).toBeLessThan(1500);
  await waitFor(() => a.rebalances > rebalancesBefore, 3000);
  expect((await a.instance.findConsumerIdList(topic, group)).sort()).toEqual(
    [a.instance.clientId, b.instance.clientId].sort(),
  );

  // B leaves: UNREGISTER_CLIENT at shutdown; A hears of it.
  const t1 = Date.now();
  await b.instance.release();
  await waitFor(() => seen.at(-1)?.length === 1 && seen.at(-1)?.[0] === a.instance.clientId, 3000);
  expect(Date.now() - t1).toBeLessThan(1500);
  expect(await a.instance.findConsumerIdList(topic, group)).toEqual([a.instance.clientId]);
  await a.instance.release();
  expect(a.instance.state).toBe('SHUTDOWN');
});
