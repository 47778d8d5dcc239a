/**
 * Orderly consumption against the real broker: ordered sends, broker queue locks, per-queue and
 * per-key order, suspend and dead letters, and members sharing a group.
 */
import { Producer } from '../../../src/client/producer/producer.js';
import type { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { ConsumeOrderlyStatus } from '../../../src/client/consumer/push/consume-message-orderly-service.js';
import { SelectMessageQueueByHash } from '../../../src/client/producer/message-queue-selector.js';
import { MessageConst, type MessageExt, type MessageQueue } from '../../../src/common/message.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, uniq } from './push-consumer-support.js';

const FAST_DELAYS = Array.from({ length: 18 }, () => '1s').join(' ');

interface Delivery {
  key: string;
  seq: number;
  queueId: number;
  offset: number;
  reconsumeTimes: number;
  consumer: string;
}

/** Sends `perKey` messages for each key, each key's sends one after another (keys in parallel). */
async function sendOrdered(producer: Producer, topic: string, keys: string[], perKey: number): Promise<void> {
  await Promise.all(
    keys.map(async (key) => {
      for (let seq = 0; seq < perKey; seq++)
        await producer.send(
          { topic, body: Buffer.from(`${key}:${seq}`), properties: { seq: String(seq) } },
          { shardingKey: key },
        );
    }),
  );
}

function record(out: Delivery[], consumer: string, msgs: MessageExt[]): void {
  for (const m of msgs) {
    const [key, seq] = (m.body?.toString() ?? '').split(':');
    out.push({
      key: key ?? '',
      seq: Number(seq),
      queueId: m.queueId,
      offset: m.queueOffset,
      reconsumeTimes: m.reconsumeTimes,
      consumer,
    });
  }
}

/** Each key's first deliveries of each sequence number came in send order. */
function expectPerKeyOrder(deliveries: Delivery[], keys: string[], perKey: number): void {
  for (const key of keys) {
    const seqs = deliveries.filter((d) => d.key === key).map((d) => d.seq);
    const firstSeen: number[] = [];
    for (const s of seqs) if (!firstSeen.includes(s)) firstSeen.push(s);
    expect(firstSeen).toEqual(Array.from({ length: perKey }, (_, i) => i));
  }
}

describe('orderly consumption (RocketMQ: MessageListenerOrderly with broker queue locks)', () => {
  let fx: BrokerFixture;
  let producer: Producer;
  const open: PushConsumer[] = [];

  beforeAll(async () => {
    fx = await startBroker({ dlqReadable: true, store: { messageDelayLevel: FAST_DELAYS } });
    producer = new Producer({ endpoints: fx.broker.address, defaultTopicQueueNums: 8 });
    await producer.start();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown({ timeoutMs: 2000 })));
  });
  afterAll(async () => {
    await producer.shutdown();
    await fx.close();
  });

  const lockHolder = (group: string, mq: MessageQueue): string | undefined =>
    fx.broker.context.rebalanceLockManager.lockHolder(group, mq);

  it('a sharding key sends every message of the key to one queue, in order, and the key travels along', async () => {
    const topic = uniq('OrdSendT');
    const keys = ['order-1', 'order-2', 'order-3'];
    const results = new Map<string, { queueId: number; offset: number }[]>();
    for (const key of keys) {
      for (let i = 0; i < 10; i++) {
        const r = await producer.send({ topic, body: Buffer.from(`${key}:${i}`) }, { shardingKey: key });
        const list = results.get(key) ?? [];
        list.push({ queueId: r.messageQueue.queueId, offset: r.queueOffset });
        results.set(key, list);
      }
    }
    const mqs = await producer.fetchPublishMessageQueues(topic);
    for (const key of keys) {
      const list = results.get(key)!;
      expect(new Set(list.map((r) => r.queueId)).size).toBe(1);
      // RocketMQ: SelectMessageQueueByHash.
      expect(list[0]!.queueId).toBe(
        SelectMessageQueueByHash.select(mqs, { topic, body: Buffer.alloc(0) }, key).queueId,
      );
      const offsets = list.map((r) => r.offset);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
    }
    const seen: MessageExt[] = [];
    const c = newConsumer(fx.broker.address, uniq('gOrdSend')).subscribe(topic, '*');
    c.registerMessageListenerOrderly((msgs) => void seen.push(...msgs));
    open.push(c);
    await c.start();
    await waitFor(() => seen.length >= 30, 20_000);
    for (const m of seen) expect(m.properties?.[MessageConst.SHARDING_KEY]).toBe(m.body?.toString().split(':')[0]);
  });

  it('a selector picks the queue; a selector that returns a foreign queue is refused', async () => {
    const topic = uniq('OrdSelT');
    const r = await producer.send(
      { topic, body: Buffer.from('x') },
      { selector: (mqs, _m, arg) => mqs[(arg as number) % mqs.length]!, arg: 5 },
    );
    expect(r.messageQueue.queueId).toBe(5);
    await expect(
      producer.send(
        { topic, body: Buffer.from('y') },
        { selector: () => ({ topic: 'Other', brokerName: 'nope', queueId: 0 }) },
      ),
    ).rejects.toMatchObject({ code: 'ERR_INVALID_ARGUMENT' });
    await expect(
      producer.send({ topic, body: Buffer.from('z') }, { shardingKey: 'k', selector: () => r.messageQueue }),
    ).rejects.toThrow(/either shardingKey or selector/);
  });

  it('one member: every message once, each key in send order, queues locked by this client and released at shutdown', async () => {
    const topic = uniq('OrdT');
    const group = uniq('gOrd');
    const keys = Array.from({ length: 12 }, (_, i) => `k${i}`);
    await sendOrdered(producer, topic, keys, 15);
    const deliveries: Delivery[] = [];
    let overlap = false;
    const c = newConsumer(fx.broker.address, group, { consumeMessageBatchMaxSize: 4 }).subscribe(topic, '*');
    const perQueueActive = new Map<number, number>();
    c.registerMessageListenerOrderly(async (msgs, ctx) => {
      const q = ctx.messageQueue.queueId;
      perQueueActive.set(q, (perQueueActive.get(q) ?? 0) + 1);
      if (perQueueActive.get(q)! > 1) overlap = true;
      record(deliveries, 'c1', msgs);
      await new Promise((r) => setImmediate(r));
      perQueueActive.set(q, perQueueActive.get(q)! - 1);
    });
    open.push(c);
    await c.start();
    await waitFor(() => deliveries.length >= 12 * 15, 30_000);
    expect(overlap).toBe(false);
    expect(new Set(deliveries.map((d) => `${d.key}:${d.seq}`)).size).toBe(12 * 15);
    expectPerKeyOrder(deliveries, keys, 15);
    const queues = c.assignedQueues().filter((q) => q.topic === topic);
    expect(queues.length).toBe(8);
    for (const q of queues) expect(lockHolder(group, q)).toBe(c.clientId);
    open.splice(open.indexOf(c), 1);
    await c.shutdown();
    for (const q of queues) expect(lockHolder(group, q)).toBeUndefined();
  });

  it('two members split the queues, never hold the same lock, and keep each key in order while one joins', async () => {
    const topic = uniq('OrdGrpT');
    const group = uniq('gOrdGrp');
    const keys = Array.from({ length: 16 }, (_, i) => `key${i}`);
    const deliveries: Delivery[] = [];
    const make = (name: string): PushConsumer => {
      const c = newConsumer(fx.broker.address, group).subscribe(topic, '*');
      c.registerMessageListenerOrderly((msgs) => record(deliveries, name, msgs));
      open.push(c);
      return c;
    };
    await sendOrdered(producer, topic, keys, 10);
    const a = make('a');
    await a.start();
    await waitFor(() => deliveries.length > 0, 20_000);
    const b = make('b');
    await b.start();
    await sendOrdered(producer, topic, keys, 10).then(() => undefined); // seq 0..9 again: a second round
    await waitFor(() => {
      const qa = a.assignedQueues().filter((q) => q.topic === topic).length;
      const qb = b.assignedQueues().filter((q) => q.topic === topic).length;
      return qa === 4 && qb === 4;
    }, 30_000);
    await waitFor(() => new Set(deliveries.map((d) => `${d.queueId}:${d.offset}`)).size >= 16 * 20, 30_000);
    // No queue locked by both; each member's queues are locked by it.
    for (const c of [a, b])
      for (const q of c.assignedQueues().filter((x) => x.topic === topic))
        expect(lockHolder(group, q)).toBe(c.clientId);
    // Per queue, the offsets were first delivered in increasing order (re-deliveries after the handover
    // repeat a suffix, never skip).
    const byQueue = new Map<number, number[]>();
    for (const d of deliveries) byQueue.set(d.queueId, [...(byQueue.get(d.queueId) ?? []), d.offset]);
    for (const offsets of byQueue.values()) {
      let max = -1;
      for (const o of offsets) {
        if (o > max) {
          expect(o).toBe(max + 1);
          max = o;
        }
      }
    }
  });

  it('a queue whose final offset the broker refused stays locked by its member, and is handed over once the offset is written: nothing consumed twice', async () => {
    const topic = uniq('OrdRefT');
    const group = uniq('gOrdRef');
    const keys = Array.from({ length: 16 }, (_, i) => `key${i}`);
    await sendOrdered(producer, topic, keys, 5);
    // The broker refuses the group's UPDATE_CONSUMER_OFFSET (an error answer) and drops the offsets its
    // pulls carry, until `refusing` is cleared: the committed offsets stay where they were (none).
    let refusing = true;
    const com = fx.broker.consumerOffsetManager;
    const commitOffset = com.commitOffset.bind(com);
    com.commitOffset = (host, g, t, queueId, offset, increaseOnly) => {
      if (refusing && g === group) {
        if (/update-consumer-offset/.test(new Error().stack ?? '')) throw new Error('refused by the test');
        return;
      }
      commitOffset(host, g, t, queueId, offset, increaseOnly);
    };
    // The lock requests the broker turns down for member b (a still holds the queue).
    const lm = fx.broker.context.rebalanceLockManager;
    const tryLockBatch = lm.tryLockBatch.bind(lm);
    const refusedToB = new Map<number, number>();
    let bId = '';
    lm.tryLockBatch = (g, mqs, clientId) => {
      const locked = tryLockBatch(g, mqs, clientId);
      if (g === group && clientId === bId)
        for (const mq of mqs)
          if (!locked.some((l) => l.queueId === mq.queueId))
            refusedToB.set(mq.queueId, (refusedToB.get(mq.queueId) ?? 0) + 1);
      return locked;
    };
    try {
      const deliveries: Delivery[] = [];
      const make = (name: string): PushConsumer => {
        const c = newConsumer(fx.broker.address, group, {
          rebalanceIntervalMs: 300,
          persistConsumerOffsetIntervalMs: 300,
        }).subscribe(topic, '*');
        c.registerMessageListenerOrderly((msgs) => record(deliveries, name, msgs));
        open.push(c);
        return c;
      };
      const a = make('a');
      await a.start();
      await waitFor(() => deliveries.length >= keys.length * 5, 20_000);
      const b = make('b');
      await b.start();
      bId = b.clientId ?? '';
      // Rebalance gives b half the queues; a cannot write their offsets, so it keeps their locks and b's
      // requests for them are turned down, again and again.
      await waitFor(() => refusedToB.size >= 4 && [...refusedToB.values()].every((n) => n >= 3), 20_000);
      const brokerName = fx.broker.context.brokerName;
      const mqs = Array.from({ length: 8 }, (_, queueId) => ({ topic, brokerName, queueId }));
      for (const q of mqs) expect(lockHolder(group, q)).toBe(a.clientId);
      expect(deliveries.filter((d) => d.consumer === 'b')).toEqual([]);
      // The broker takes offsets again: a writes them, unlocks, and b takes its half from there.
      refusing = false;
      await waitFor(() => mqs.filter((q) => lockHolder(group, q) === b.clientId).length === 4, 20_000);
      await sendOrdered(producer, topic, keys, 5); // seq 0..4 again: a second round, consumed by both
      await waitFor(() => deliveries.length >= keys.length * 10, 20_000);
      expect(deliveries.filter((d) => d.consumer === 'b').length).toBeGreaterThan(0);
      // Every offset of every queue was delivered exactly once: b started where a stopped.
      const seen = deliveries.map((d) => `${d.queueId}:${d.offset}`);
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBe(keys.length * 10);
    } finally {
      com.commitOffset = commitOffset;
      lm.tryLockBatch = tryLockBatch;
    }
  });

  it('a suspended batch is retried before anything after it in the queue; past maxReconsumeTimes it goes to the DLQ', async () => {
    const topic = uniq('OrdSusT');
    const group = uniq('gOrdSus');
    await producer.send({ topic, body: Buffer.from('k:0') }, { shardingKey: 'k' });
    await producer.send({ topic, body: Buffer.from('k:1') }, { shardingKey: 'k' });
    await producer.send({ topic, body: Buffer.from('poison:0') }, { shardingKey: 'k' });
    await producer.send({ topic, body: Buffer.from('k:2') }, { shardingKey: 'k' });
    const deliveries: Delivery[] = [];
    const suspends: number[] = [];
    const c = newConsumer(fx.broker.address, group, {
      maxReconsumeTimes: 2,
      suspendCurrentQueueTimeMillis: 50,
    }).subscribe(topic, '*');
    let k1Failures = 0;
    c.registerMessageListenerOrderly((msgs) => {
      record(deliveries, 'c', msgs);
      const body = msgs[0]!.body?.toString();
      if (body === 'k:1' && k1Failures++ === 0) throw new Error('first attempt fails');
      if (body === 'poison:0') return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
      return undefined;
    });
    c.events.on('suspend', (e) => suspends.push(e.deadLettered));
    open.push(c);
    await c.start();
    const dlq = new Collector();
    const d = newConsumer(fx.broker.address, uniq('gOrdDlq')).subscribe(`%DLQ%${group}`, '*');
    d.registerMessageListener(dlq.listener);
    open.push(d);
    await d.start();
    await waitFor(() => deliveries.some((x) => x.key === 'k' && x.seq === 2), 20_000);
    expect(deliveries.map((x) => `${x.key}:${x.seq}:${x.reconsumeTimes}`)).toEqual([
      'k:0:0',
      'k:1:0',
      'k:1:1',
      'poison:0:0',
      'poison:0:1',
      'poison:0:2',
      'k:2:0',
    ]);
    expect(suspends).toEqual([0, 0, 0, 1]);
    await waitFor(() => dlq.bodies.includes('poison:0'), 20_000);
  });

  it('per-key mode: keys of one queue run in parallel, each key one message at a time in order; a failing key holds back only itself', async () => {
    const topic = uniq('OrdKeyT');
    const group = uniq('gOrdKey');
    await fx.client.call('UPDATE_AND_CREATE_TOPIC', {
      topic,
      defaultTopic: 'TBW102',
      readQueueNums: 1,
      writeQueueNums: 1,
      perm: 6,
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0,
      order: false,
    });
    const keys = Array.from({ length: 40 }, (_, i) => `u${i}`);
    await sendOrdered(producer, topic, keys, 5);
    await producer.send({ topic, body: Buffer.from('bad:0') }, { shardingKey: 'bad' });
    await producer.send({ topic, body: Buffer.from('bad:1') }, { shardingKey: 'bad' });
    const deliveries: Delivery[] = [];
    const activeKeys = new Set<string>();
    let peak = 0;
    let sameKeyOverlap = false;
    let badFailures = 0;
    const othersDone = (): number => deliveries.filter((d) => d.key !== 'bad').length;
    const c = newConsumer(fx.broker.address, group, { suspendCurrentQueueTimeMillis: 50 }).subscribe(topic, '*');
    c.registerMessageListenerOrderly(
      async (msgs) => {
        expect(msgs).toHaveLength(1);
        const key = msgs[0]!.properties?.[MessageConst.SHARDING_KEY] ?? '';
        if (activeKeys.has(key)) sameKeyOverlap = true;
        activeKeys.add(key);
        peak = Math.max(peak, activeKeys.size);
        record(deliveries, 'c', msgs);
        await new Promise((r) => setTimeout(r, 2));
        activeKeys.delete(key);
        // The failing key fails until every other key is done: they must not wait for it.
        if (key === 'bad' && othersDone() < 40 * 5) {
          badFailures++;
          throw new Error('bad key fails');
        }
      },
      { keyConcurrency: 8 },
    );
    open.push(c);
    await c.start();
    await waitFor(() => deliveries.some((d) => d.key === 'bad' && d.seq === 1), 30_000);
    expect(badFailures).toBeGreaterThan(0);
    expect(othersDone()).toBe(40 * 5);
    expect(sameKeyOverlap).toBe(false);
    expect(peak).toBeGreaterThan(1);
    expect(peak).toBeLessThanOrEqual(8);
    expectPerKeyOrder(deliveries, keys, 5);
    expectPerKeyOrder(deliveries, ['bad'], 2);
    // Everything finished: the committed offset reaches the end of the queue.
    const mq = { topic, brokerName: fx.broker.context.brokerName, queueId: 0 };
    await waitFor(() => fx.broker.consumerOffsetManager.queryOffset(group, topic, 0) === 40 * 5 + 2, 20_000);
    expect(lockHolder(group, mq)).toBe(c.clientId);
  });
});

describe('LOCK_BATCH_MQ / UNLOCK_BATCH_MQ over HTTP', () => {
  let fx: BrokerFixture;
  beforeAll(async () => {
    fx = await startBroker();
  });
  afterAll(async () => {
    await fx.close();
  });

  const body = (group: string, clientId: string, mqs: MessageQueue[]): Buffer =>
    Buffer.from(JSON.stringify({ consumerGroup: group, clientId, onlyThisBroker: false, mqSet: mqs }));

  it('locks existing queues for one client, refuses them to another, and releases them on unlock', async () => {
    const topic = uniq('LockT');
    await fx.client.send(topic, 'x');
    const brokerName = fx.broker.context.brokerName;
    const q0 = { topic, brokerName, queueId: 0 };
    const missing = { topic: uniq('NoSuchTopic'), brokerName, queueId: 0 };
    const other = { topic, brokerName: 'other-broker', queueId: 0 };
    const r1 = await fx.client.call('LOCK_BATCH_MQ', {}, body('G', 'c1', [q0, missing, other]));
    expect(r1.code).toBe(ResponseCode.SUCCESS);
    expect(JSON.parse(r1.body.toString()).lockOKMQSet).toEqual([q0]);
    const r2 = await fx.client.call('LOCK_BATCH_MQ', {}, body('G', 'c2', [q0]));
    expect(JSON.parse(r2.body.toString()).lockOKMQSet).toEqual([]);
    expect((await fx.client.call('UNLOCK_BATCH_MQ', {}, body('G', 'c1', [q0]))).code).toBe(ResponseCode.SUCCESS);
    const r3 = await fx.client.call('LOCK_BATCH_MQ', {}, body('G', 'c2', [q0]));
    expect(JSON.parse(r3.body.toString()).lockOKMQSet).toEqual([q0]);
  });

  it('a malformed body is refused with a 400 naming the field', async () => {
    const r = await fx.client.call('LOCK_BATCH_MQ', {}, Buffer.from(JSON.stringify({ consumerGroup: 'G' })));
    expect(r.status).toBe(400);
    expect(r.error?.field).toMatch(/clientId/);
  });
});
