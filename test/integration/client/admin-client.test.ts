/**
 * AdminClient against a real broker, with a real producer and push consumer: the figures it reports
 * match what was produced and consumed, and it never joins the group it watches.
 */
import { AdminClient, InvalidArgumentError, Producer, RocketMQError } from '../../../src/index.js';
import { countingConsumer } from '../../support/admin-fixtures.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;
let admin: AdminClient;

beforeAll(async () => {
  f = await startBroker({ flushConsumerOffsetIntervalMs: 60_000 });
  admin = new AdminClient({ endpoints: f.broker.address });
});
afterAll(async () => {
  await admin.shutdown();
  await f.close();
});

test('bad options and arguments name the field', async () => {
  expect(() => new AdminClient({ endpoints: 'ftp://x' })).toThrow(InvalidArgumentError);
  await expect(admin.topicStatus('bad topic!')).rejects.toThrow(/topic/);
  await expect(admin.consumerProgress('')).rejects.toThrow(InvalidArgumentError);
  await expect(admin.queryMsgById('xyz')).rejects.toThrow(/msgId/);
});

test('topic list, create, status, delete', async () => {
  const topic = uniqueName('AdminT');
  await admin.createTopic(topic, { queueNums: 3 });
  expect(await admin.topicList()).toContain(topic);
  const status = await admin.topicStatus(topic);
  expect(status.map((r) => [r.mq.queueId, r.minOffset, r.maxOffset])).toEqual([
    [0, 0, 0],
    [1, 0, 0],
    [2, 0, 0],
  ]);
  await admin.deleteTopic(topic);
  expect(await admin.topicList()).not.toContain(topic);
  await expect(admin.topicStatus(topic)).rejects.toMatchObject({ code: 'ERR_TOPIC_NOT_EXIST' });
});

test('progress, connections, queries and reset match what was produced and consumed', async () => {
  const topic = uniqueName('AdminFlow');
  const group = uniqueName('admin_group');
  await admin.createTopic(topic, { queueNums: 2 });
  const producer = new Producer({ producerGroup: uniqueName('p'), endpoints: f.broker.address });
  await producer.start();
  const sent = [];
  for (let i = 0; i < 10; i++) {
    sent.push(await producer.send({ topic, tags: 'A', keys: `order-${i}`, body: Buffer.from(`m${i}`) }));
  }
  const { consumer, consumed } = await countingConsumer({ endpoints: f.broker.address }, group, topic);
  try {
    await waitFor(() => consumed() >= 10, 20_000);
    // committed offsets reach the broker's table in memory (file flush is 60 s here)
    await waitFor(async () => (await admin.consumerProgress(group, topic)).diffTotal === 0, 20_000);
    const progress = await admin.consumerProgress(group, topic);
    expect(progress.brokerOffsetTotal).toBe(10);
    expect(progress.consumerOffsetTotal).toBe(10);
    expect(progress.queues.every((q) => q.lag === 0 && q.lastTimestamp > 0)).toBe(true);

    // the member's own view: lag() and the lag event agree with the group's progress
    const events: number[] = [];
    consumer.events.on('lag', (e) => events.push(e.total));
    await waitFor(async () => (await consumer.lag()).total === 0, 20_000);
    const own = await consumer.lag();
    expect(own.queues.filter((q) => q.mq.topic === topic).reduce((s, q) => s + q.brokerOffset, 0)).toBe(10);
    expect(events.at(-1)).toBe(0);

    const conn = await admin.consumerConnection(group);
    expect(conn.connections.map((c) => c.clientId)).toEqual([consumer.clientId]);
    expect(conn.subscriptions.find((s) => s.topic === topic)?.subString).toBe('A');
    expect(conn.messageModel).toBe('CLUSTERING');

    const byKey = await admin.queryMsgByKey(topic, 'order-3');
    expect(byKey.map((m) => String(m.body))).toEqual(['m3']);
    const first = sent[0];
    if (!first) throw new Error('nothing sent');
    const byId = await admin.queryMsgById(first.msgId, topic);
    expect(String(byId.body)).toBe('m0');
    if (first.offsetMsgId) expect(String((await admin.queryMsgById(first.offsetMsgId)).body)).toBe('m0');

    // the admin client never joined the group
    expect((await admin.consumerConnection(group)).connections).toHaveLength(1);

    // reset to the beginning: the live consumer is told on its next pull and consumes everything again
    const before = consumed();
    const reset = await admin.resetOffsetByTime(group, topic, 0);
    expect(reset.map((r) => r.offset)).toEqual([0, 0]);
    await waitFor(() => consumed() >= before + 10, 30_000);
  } finally {
    await consumer.shutdown();
    await producer.shutdown();
  }
  await expect(admin.consumerConnection(group)).rejects.toBeInstanceOf(RocketMQError);
}, 60_000);
