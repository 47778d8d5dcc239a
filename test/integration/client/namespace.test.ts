/**
 * Namespaces end to end on the bundled broker, over HTTP (`endpoints`) and over RocketMQ's TCP
 * remoting (`namesrvAddr`): namespaced clients see plain names while the broker holds `ns%Topic`,
 * `ns%group`, `%RETRY%ns%group` and `%DLQ%ns%group`; two namespaces with one topic name are apart.
 */
import {
  AdminClient,
  LitePullConsumer,
  Producer,
  PullConsumer,
  PushConsumer,
  TransactionProducer,
} from '../../../src/index.js';
import { SimpleConsumer } from '../../../src/client/consumer/simple/index.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import type { MessageExt } from '../../../src/common/message.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { uniq } from './push-consumer-support.js';

// Every delay level is 1 s, so a retry comes back after about a second.
const FAST_DELAYS = Array.from({ length: 18 }, () => '1s').join(' ');

let fx: BrokerFixture;
beforeAll(async () => {
  fx = await startBroker({ remotingPort: 0, dlqReadable: true, store: { messageDelayLevel: FAST_DELAYS } });
});
afterAll(async () => {
  await fx?.close();
});

type Where = { endpoints: string } | { namesrvAddr: string };
const transports: Array<[string, () => Where]> = [
  ['HTTP', () => ({ endpoints: fx.broker.address })],
  ['TCP', () => ({ namesrvAddr: fx.broker.remotingAddress ?? '' })],
];

describe.each(transports)('namespaces over %s', (_name, where) => {
  const open: Array<{ shutdown(): Promise<unknown> }> = [];
  const track = <T extends { shutdown(): Promise<unknown> }>(c: T): T => (open.push(c), c);
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown()));
  });

  async function producerIn(namespace: string): Promise<Producer> {
    const p = track(new Producer({ ...where(), producerGroup: uniq('pg'), namespace }));
    await p.start();
    return p;
  }

  test('a producer, a push consumer and an admin client see plain names; the broker holds ns%Topic', async () => {
    const ns = uniq('ns');
    const topic = uniq('NsT');
    const group = uniq('nsg');
    const plainAdmin = track(new AdminClient(where()));
    const admin = track(new AdminClient({ ...where(), namespace: ns }));
    await admin.createTopic(topic, { queueNums: 2 });
    expect(await plainAdmin.topicList()).toContain(`${ns}%${topic}`);
    expect(await plainAdmin.topicList()).not.toContain(topic);
    const listed = await admin.topicList();
    expect(listed).toContain(topic);
    expect(listed.some((t) => t.includes('%') && !t.startsWith('%'))).toBe(false);

    const producer = await producerIn(ns);
    const sent = await producer.send({ topic, tags: 'A', body: Buffer.from('one') });
    expect(sent.messageQueue.topic).toBe(topic);
    expect((await producer.fetchPublishMessageQueues(topic)).every((q) => q.topic === topic)).toBe(true);

    const got: MessageExt[] = [];
    const queueTopics = new Set<string>();
    const rebalanced: string[] = [];
    const consumer = track(
      new PushConsumer({
        ...where(),
        consumerGroup: group,
        namespace: ns,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      }),
    );
    consumer.subscribe(topic, '*');
    consumer.events.on('rebalance', (e) => rebalanced.push(e.topic, ...e.assigned.map((q) => q.topic)));
    consumer.registerMessageListener((msgs, ctx) => {
      got.push(...msgs);
      queueTopics.add(ctx.messageQueue.topic);
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await consumer.start();
    await producer.send({ topic, tags: 'A', body: Buffer.from('two') });
    await waitFor(() => got.length >= 2, 20_000);
    expect(got.map((m) => m.topic)).toEqual([topic, topic]);
    expect([...queueTopics]).toEqual([topic]);
    expect(consumer.consumerGroup).toBe(group);
    expect(consumer.assignedQueues().every((q) => q.topic === topic || q.topic === `%RETRY%${group}`)).toBe(true);
    expect(rebalanced.every((t) => !t.includes(ns))).toBe(true);

    // The broker knows the group by its wire name; the namespaced admin by the plain one.
    await waitFor(async () => (await admin.consumerProgress(group, topic)).diffTotal === 0, 20_000);
    const progress = await admin.consumerProgress(group, topic);
    expect(progress.group).toBe(group);
    expect(progress.queues.every((q) => q.mq.topic === topic)).toBe(true);
    expect((await plainAdmin.consumerProgress(`${ns}%${group}`, `${ns}%${topic}`)).diffTotal).toBe(0);
    // The heartbeat carries the group in the namespace, as RocketMQ's does.
    expect((await plainAdmin.consumerConnection(`${ns}%${group}`)).connections).toHaveLength(1);
    const conn = await admin.consumerConnection(group);
    expect(conn.subscriptions.map((s) => s.topic).sort()).toEqual([`%RETRY%${group}`, topic].sort());
    const found = await admin.queryMsgByKey(topic, 'nokey').catch(() => []);
    expect(found.every((m) => m.topic === topic)).toBe(true);
  }, 60_000);

  test('retries travel through %RETRY%ns%group and end in %DLQ%ns%group; the listener sees the plain topic', async () => {
    const ns = uniq('ns');
    const topic = uniq('NsRetryT');
    const group = uniq('nsrg');
    const admin = track(new AdminClient({ ...where(), namespace: ns }));
    const plainAdmin = track(new AdminClient(where()));
    await admin.createTopic(topic, { queueNums: 1 });
    const producer = await producerIn(ns);
    const deliveries: Array<{ topic: string; reconsumeTimes: number }> = [];
    const consumer = track(
      new PushConsumer({
        ...where(),
        consumerGroup: group,
        namespace: ns,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        maxReconsumeTimes: 1,
      }),
    );
    consumer.subscribe(topic, '*');
    consumer.registerMessageListener((msgs) => {
      for (const m of msgs) deliveries.push({ topic: m.topic, reconsumeTimes: m.reconsumeTimes });
      return ConsumeConcurrentlyStatus.RECONSUME_LATER;
    });
    await consumer.start();
    await producer.send({ topic, body: Buffer.from('poison') });
    await waitFor(() => deliveries.length >= 2, 30_000);
    expect(deliveries.slice(0, 2)).toEqual([
      { topic, reconsumeTimes: 0 },
      { topic, reconsumeTimes: 1 },
    ]);
    await waitFor(async () => (await plainAdmin.topicList()).includes(`%DLQ%${ns}%${group}`), 30_000);
    const all = await plainAdmin.topicList();
    expect(all).toContain(`%RETRY%${ns}%${group}`);
    expect(all).not.toContain(`%RETRY%${group}`);
    // The namespaced admin lists them plain.
    const mine = await admin.topicList();
    expect(mine).toEqual(expect.arrayContaining([`%RETRY%${group}`, `%DLQ%${group}`, topic]));
    const dlq = await admin.topicStatus(`%DLQ%${group}`);
    expect(dlq.reduce((n, q) => n + q.maxOffset, 0)).toBe(1);
  }, 90_000);

  test('a lite pull consumer sees plain queues and messages', async () => {
    const ns = uniq('ns');
    const topic = uniq('NsLiteT');
    const admin = track(new AdminClient({ ...where(), namespace: ns }));
    await admin.createTopic(topic, { queueNums: 2 });
    const producer = await producerIn(ns);
    for (let i = 0; i < 4; i++) await producer.send({ topic, body: Buffer.from(`m${i}`) });

    const consumer = track(
      new LitePullConsumer({
        ...where(),
        consumerGroup: uniq('nslg'),
        namespace: ns,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        autoCommit: false,
      }),
    );
    const assignments: string[] = [];
    consumer.subscribe(topic, '*', (e) => assignments.push(...e.assigned.map((q) => q.topic)));
    await consumer.start();
    await consumer.ready;
    const queues = consumer.assignment();
    expect(queues).toHaveLength(2);
    expect(queues.every((q) => q.topic === topic)).toBe(true);
    expect((await consumer.fetchMessageQueues(topic)).every((q) => q.topic === topic)).toBe(true);
    const polled: MessageExt[] = [];
    const deadline = Date.now() + 20_000;
    while (polled.length < 4 && Date.now() < deadline) polled.push(...(await consumer.poll({ timeoutMs: 200 })));
    expect(polled.map((m) => m.body?.toString()).sort()).toEqual(['m0', 'm1', 'm2', 'm3']);
    expect(polled.every((m) => m.topic === topic)).toBe(true);
    const mq = queues[0]!;
    const next = polled.filter((m) => m.queueId === mq.queueId).length;
    await consumer.commit([[mq, next]]);
    expect(await consumer.committed(mq)).toBe(next);
    await consumer.seek(mq, 0);
    expect(assignments.every((t) => t === topic)).toBe(true);
  }, 60_000);

  test('a queue selector sees plain queues; a transactional producer commits in the namespace', async () => {
    const ns = uniq('ns');
    const topic = uniq('NsSelT');
    const admin = track(new AdminClient({ ...where(), namespace: ns }));
    const plainAdmin = track(new AdminClient(where()));
    await admin.createTopic(topic, { queueNums: 4 });
    const producer = await producerIn(ns);
    const offered: string[] = [];
    const sent = await producer.send(
      { topic, body: Buffer.from('selected') },
      {
        selector: (mqs) => {
          offered.push(...mqs.map((q) => q.topic));
          return mqs[3]!;
        },
      },
    );
    expect(new Set(offered)).toEqual(new Set([topic]));
    expect(sent.messageQueue).toMatchObject({ topic, queueId: 3 });

    const executed: string[] = [];
    const tx = track(
      new TransactionProducer({
        ...where(),
        producerGroup: uniq('txg'),
        namespace: ns,
        transactionListener: {
          executeLocalTransaction: (msg) => (executed.push(msg.topic), 'COMMIT_MESSAGE'),
          checkLocalTransaction: () => 'COMMIT_MESSAGE',
        },
      }),
    );
    await tx.start();
    const r = await tx.sendMessageInTransaction({ topic, body: Buffer.from('tx') });
    expect(r.localTransactionState).toBe('COMMIT_MESSAGE');
    expect(r.messageQueue.topic).toBe(topic);
    expect(executed).toEqual([topic]);
    // The committed message lands in ns%Topic: two messages stored there now.
    await waitFor(async () => {
      const status = await plainAdmin.topicStatus(`${ns}%${topic}`);
      return status.reduce((n, q) => n + q.maxOffset, 0) === 2;
    }, 20_000);
  }, 60_000);

  test('a pull consumer and a simple consumer see plain queues and messages', async () => {
    const ns = uniq('ns');
    const topic = uniq('NsPullT');
    const admin = track(new AdminClient({ ...where(), namespace: ns }));
    await admin.createTopic(topic, { queueNums: 1 });
    const producer = await producerIn(ns);
    await producer.send({ topic, body: Buffer.from('p0') });
    await producer.send({ topic, body: Buffer.from('p1') });

    const pull = track(new PullConsumer({ ...where(), consumerGroup: uniq('nspg'), namespace: ns }));
    await pull.start();
    const [mq] = await pull.fetchSubscribeMessageQueues(topic);
    expect(mq!.topic).toBe(topic);
    expect(await pull.maxOffset(mq!)).toBe(2);
    const r = await pull.pull(mq!, '*', 0, 32);
    expect(r.msgFoundList.map((m) => `${m.topic}:${m.body?.toString() ?? ''}`)).toEqual([`${topic}:p0`, `${topic}:p1`]);
    await pull.updateConsumeOffset(mq!, 2);
    expect(await pull.fetchConsumeOffset(mq!)).toBe(2);
    expect((await pull.viewMessage(r.msgFoundList[0]!.offsetMsgId!)).topic).toBe(topic);

    const simple = track(
      new SimpleConsumer({ ...where(), consumerGroup: uniq('nssg'), namespace: ns, subscriptions: { [topic]: '*' } }),
    );
    await simple.start();
    const got: string[] = [];
    const deadline = Date.now() + 20_000;
    while (got.length < 2 && Date.now() < deadline) {
      for (const m of await simple.receive(2, 20_000)) {
        expect(m.topic).toBe(topic);
        got.push(m.body?.toString() ?? '');
        await simple.ack(m);
      }
    }
    expect(got.sort()).toEqual(['p0', 'p1']);
    expect([...simple.subscriptions.keys()]).toEqual([topic]);
  }, 60_000);

  test('two namespaces with the same topic and group names are apart', async () => {
    const [a, b] = [uniq('nsa'), uniq('nsb')];
    const topic = uniq('SharedT');
    const group = uniq('shared');
    const pa = await producerIn(a);
    const pb = await producerIn(b);
    await pa.send({ topic, body: Buffer.from('from-a') });
    await pb.send({ topic, body: Buffer.from('from-b') });
    const seen: Record<string, string[]> = { [a]: [], [b]: [] };
    for (const ns of [a, b]) {
      const c = track(
        new PushConsumer({
          ...where(),
          consumerGroup: group,
          namespace: ns,
          consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        }),
      );
      c.subscribe(topic, '*');
      c.registerMessageListener((msgs) => {
        seen[ns]!.push(...msgs.map((m) => `${m.topic}:${m.body?.toString() ?? ''}`));
      });
      await c.start();
    }
    await waitFor(() => seen[a]!.length >= 1 && seen[b]!.length >= 1, 20_000);
    await pa.send({ topic, body: Buffer.from('from-a-2') });
    await waitFor(() => seen[a]!.length >= 2, 20_000);
    expect(seen[a]).toEqual([`${topic}:from-a`, `${topic}:from-a-2`]);
    expect(seen[b]).toEqual([`${topic}:from-b`]);
  }, 60_000);
});
