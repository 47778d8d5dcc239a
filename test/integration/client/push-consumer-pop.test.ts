/**
 * PushConsumer with consumeMode 'POP' on the bundled broker: a backlog drained exactly once (TCP and
 * HTTP), prompt start, a member killed mid-batch (its transport closed with listeners still running)
 * whose messages come back to the survivor after their invisible time, eight members started together on
 * a four-queue topic all receiving without a duplicate, shutdown waiting for listeners and acknowledgements, retries through the broker's revive (the POP
 * retry topic) up to the dead-letter queue, and the options and listeners POP refuses.
 */
import type { Broker } from '../../../src/broker/index.js';
import { InvalidArgumentError } from '../../../src/common/errors.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import type { PushConsumerOptions } from '../../../src/client/consumer/push/push-consumer-options.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Seen, body, eightTogether, killedMidBatch } from '../../support/pop-scenarios.js';
import { uniq } from './push-consumer-support.js';

type Transport = 'http' | 'tcp';
const addressing = (t: Transport, b: Broker): Partial<PushConsumerOptions> =>
  t === 'http' ? { endpoints: b.address } : { namesrvAddr: b.remotingAddress ?? '' };

async function sendAll(b: Broker, topic: string, bodies: string[], queues = 4): Promise<void> {
  const p = new Producer({ endpoints: b.address, defaultTopicQueueNums: queues });
  await p.start();
  try {
    await Promise.all(bodies.map((s) => p.send({ topic, body: Buffer.from(s), tags: 'T' })));
  } finally {
    await p.shutdown();
  }
}

describe('PushConsumer POP: options and listeners it refuses', () => {
  const base = { endpoints: 'http://127.0.0.1:1', consumerGroup: 'PopBadInput', consumeMode: 'POP' as const };
  it.each([0, -1, 13 * 3600 * 1000, 1.5])('popInvisibleTimeMs %p is refused with an InvalidArgumentError', (v) => {
    expect(() => new PushConsumer({ ...base, popInvisibleTimeMs: v })).toThrow(InvalidArgumentError);
    expect(() => new PushConsumer({ ...base, popInvisibleTimeMs: v })).toThrow(/popInvisibleTimeMs/);
  });

  it('refuses an unknown consumeMode, POP with BROADCASTING, a bad batch size and an orderly listener', () => {
    expect(() => new PushConsumer({ ...base, consumeMode: 'PUSH' as 'POP' })).toThrow(/consumeMode/);
    expect(() => new PushConsumer({ ...base, messageModel: 'BROADCASTING' })).toThrow(InvalidArgumentError);
    expect(() => new PushConsumer({ ...base, popBatchNums: 33 })).toThrow(/popBatchNums/);
    expect(() => new PushConsumer({ ...base, popRetryDelaysMs: [] })).toThrow(/popRetryDelaysMs/);
    const c = new PushConsumer(base);
    expect(() => c.registerMessageListenerOrderly(() => undefined)).toThrow(InvalidArgumentError);
    expect(() => c.registerMessageListenerOrderly(() => undefined)).toThrow(/concurrent listener/);
    // The default stays pull.
    expect(new PushConsumer({ ...base, consumeMode: undefined }).options.consumeMode).toBe('PULL');
  });
});

describe.each<Transport>(['tcp', 'http'])('PushConsumer POP over %s', (t) => {
  let fx: BrokerFixture;
  const open: PushConsumer[] = [];
  const consumer = (group: string, topic: string, extra: Partial<PushConsumerOptions> = {}): PushConsumer => {
    const c = new PushConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: group,
      consumeMode: 'POP',
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      popInvisibleTimeMs: 5000,
      brokerSuspendMaxTimeMs: 1000,
      ...extra,
    });
    c.subscribe(topic, '*');
    open.push(c);
    return c;
  };
  /** Nothing popped and unacknowledged is left: nothing will be delivered again. */
  const allAcked = (): boolean => fx.broker.popService.state.inflightCount === 0;
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0, popReviveIntervalMs: 50, dlqReadable: true });
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown({ timeoutMs: 1000 })));
  });
  afterAll(async () => {
    await fx.close();
  });

  it('drains a backlog exactly once, and delivers what is sent after ready without waiting for a rebalance', async () => {
    const topic = uniq('PopPushT');
    const bodies = Array.from({ length: 120 }, (_, i) => `b${i}`);
    await sendAll(fx.broker, topic, bodies);
    const seen = new Seen();
    const c = consumer(uniq('PopPushG'), topic, { popBatchNums: 16 });
    c.registerMessageListener((msgs) => seen.add(msgs));
    await c.start();
    await c.ready;
    expect(c.assignedQueues()).toEqual([{ topic, brokerName: expect.any(String), queueId: -1 }]);
    await waitFor(() => seen.count.size === bodies.length, 15_000);
    // Sent after ready: delivered long before the 20 s rebalance period.
    await sendAll(fx.broker, topic, ['late']);
    await waitFor(() => seen.count.has('late'), 8000);
    await waitFor(allAcked, 5000);
    expect(seen.duplicates()).toEqual([]);
    expect(seen.count.size).toBe(bodies.length + 1);
  }, 40_000);

  if (t === 'tcp') {
    it('a member killed mid-batch loses nothing: its messages come back to the survivor after their invisible time', async () => {
      const topic = uniq('PopPushT');
      const group = uniq('PopPushG');
      await killedMidBatch(
        {
          member: (extra) => consumer(group, topic, extra),
          send: (bodies) => sendAll(fx.broker, topic, bodies),
          timeoutMs: 10_000,
          allAcked,
        },
        { messages: 30, invisibleMs: 1500, survivorInvisibleMs: 5000 },
      );
    }, 40_000);

    it('eight members started together on a four-queue topic all receive, with no duplicate', async () => {
      const topic = uniq('PopPushT');
      const group = uniq('PopPushG');
      await sendAll(fx.broker, topic, ['warm'], 4);
      await eightTogether(
        {
          member: (extra) => consumer(group, topic, extra),
          send: (bodies) => sendAll(fx.broker, topic, bodies, 4),
          timeoutMs: 10_000,
          allAcked,
        },
        { messages: 400, workMs: 5 },
      );
    }, 40_000);

    it('delivers only what the tag subscription names, and leaves nothing in flight', async () => {
      const topic = uniq('PopPushT');
      const p = new Producer({ endpoints: fx.broker.address, defaultTopicQueueNums: 4 });
      await p.start();
      try {
        for (const tags of ['A', 'B', 'A', 'C']) await p.send({ topic, body: Buffer.from(`${tags}-msg`), tags });
      } finally {
        await p.shutdown();
      }
      const seen = new Seen();
      const c = consumer(uniq('PopPushG'), topic);
      c.subscribe(topic, 'A || C');
      c.registerMessageListener((msgs) => seen.add(msgs));
      await c.start();
      await waitFor(() => seen.count.size === 2 && seen.count.get('A-msg') === 2, 10_000);
      await waitFor(allAcked, 5000);
      expect([...seen.count.keys()].sort()).toEqual(['A-msg', 'C-msg']);
    }, 30_000);

    it('shutdown waits for running listeners and their acknowledgements', async () => {
      const topic = uniq('PopPushT');
      let release!: () => void;
      const gate = new Promise<void>((r) => (release = r));
      let running = 0;
      const c = consumer(uniq('PopPushG'), topic, { consumeThreadMax: 4 });
      c.registerMessageListener(async () => {
        running++;
        await gate;
      });
      await c.start();
      await c.ready;
      await sendAll(fx.broker, topic, ['s1', 's2', 's3', 's4']);
      await waitFor(() => running === 4, 10_000);
      const report = c.shutdown({ timeoutMs: 10_000 });
      await waitFor(() => c.state === 'SHUTTING_DOWN');
      release();
      expect(await report).toEqual({ unfinishedListeners: 0, droppedConsumeRequests: 0, errors: [] });
      // Acknowledged before shutdown resolved: nothing is left in flight on the broker.
      expect(allAcked()).toBe(true);
    }, 30_000);

    it('a failing message is retried through the revive (POP retry topic, reconsumeTimes growing), then sent to the DLQ', async () => {
      const topic = uniq('PopPushT');
      const group = uniq('PopPushG');
      const attempts: number[] = [];
      const failures: number[] = [];
      const c = consumer(group, topic, { maxReconsumeTimes: 2, popRetryDelaysMs: [100] });
      c.on('consumeFailure', (e) => failures.push(e.messages.length));
      c.registerMessageListener((msgs) => {
        for (const m of msgs) if (body(m) === 'poison') attempts.push(m.reconsumeTimes);
        if (msgs.some((m) => body(m) === 'poison')) throw new Error('poison');
      });
      await c.start();
      await c.ready;
      await sendAll(fx.broker, topic, ['poison', 'fine']);
      await waitFor(() => fx.broker.store.getMaxOffsetInQueue(`%DLQ%${group}`, 0) === 1, 15_000).catch((e) => {
        throw new Error(`${String(e)} attempts=${attempts.join()} failures=${failures.join()}`);
      });
      expect(attempts).toEqual([0, 1, 2]);
      expect(failures).toEqual([1, 1, 1]);
      // The retries went through the group's POP retry topic.
      expect(fx.broker.store.getMaxOffsetInQueue(`%RETRY%${group}_${topic}`, 0)).toBeGreaterThanOrEqual(1);
      await waitFor(allAcked, 5000);
    }, 40_000);
  }
});
