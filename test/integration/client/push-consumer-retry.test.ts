import type { Producer } from '../../../src/client/producer/producer.js';
import type { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import type { MessageExt } from '../../../src/common/message.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, startProducer, uniq } from './push-consumer-support.js';

// Every delay level is 1 s, so a retry comes back after about a second.
const FAST_DELAYS = Array.from({ length: 18 }, () => '1s').join(' ');

describe('PushConsumer retry and dead letters (RocketMQ: %RETRY% then %DLQ%)', () => {
  let fx: BrokerFixture;
  let producer: Producer;
  const open: PushConsumer[] = [];

  beforeAll(async () => {
    fx = await startBroker({ dlqReadable: true, store: { messageDelayLevel: FAST_DELAYS } });
    producer = await startProducer(fx.broker.address, 4);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown({ timeoutMs: 1000 })));
  });
  afterAll(async () => {
    await producer.shutdown();
    await fx.close();
  });

  it.each([
    ['RECONSUME_LATER', (): ConsumeConcurrentlyStatus => ConsumeConcurrentlyStatus.RECONSUME_LATER],
    [
      'a throwing listener',
      (): ConsumeConcurrentlyStatus => {
        throw new Error('listener failed');
      },
    ],
    ['a rejected promise', (): Promise<ConsumeConcurrentlyStatus> => Promise.reject(new Error('async failure'))],
  ])('%s flows through %%RETRY%% and ends in %%DLQ%% after maxReconsumeTimes', async (_name, fail) => {
    const topic = uniq('RetryT');
    const group = uniq('gr');
    await sendMany(producer, topic, 1, 'warm');
    const deliveries: { body: string; topic: string; reconsumeTimes: number }[] = [];
    const failures: number[] = [];
    const c = newConsumer(fx.broker.address, group, { maxReconsumeTimes: 2 }).subscribe(topic, '*');
    c.registerMessageListener((msgs: MessageExt[]) => {
      for (const m of msgs)
        deliveries.push({ body: m.body?.toString() ?? '', topic: m.topic, reconsumeTimes: m.reconsumeTimes });
      if (msgs.some((m) => m.body?.toString() === 'poison')) return fail();
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    c.events.on('consumeFailure', (e) => failures.push(e.sentBack));
    open.push(c);
    await c.start();

    const dlq = new Collector();
    const d = newConsumer(fx.broker.address, uniq('gdlq')).subscribe(`%DLQ%${group}`, '*');
    d.registerMessageListener(dlq.listener);
    open.push(d);
    await d.start();

    await producer.send({ topic, body: Buffer.from('poison') });
    await waitFor(() => dlq.bodies.includes('poison'), 20_000);
    const poison = deliveries.filter((x) => x.body === 'poison');
    // The first delivery plus maxReconsumeTimes (2) retries, each with the real topic restored.
    expect(poison.map((x) => x.reconsumeTimes)).toEqual([0, 1, 2]);
    expect(poison.every((x) => x.topic === topic)).toBe(true);
    expect(failures.length).toBeGreaterThanOrEqual(3);
    expect(dlq.messages[0]?.reconsumeTimes).toBe(3);
  });

  it('ackIndex: with CONSUME_SUCCESS only the messages after ackIndex are retried', async () => {
    const topic = uniq('AckT');
    const group = uniq('ga');
    const oneQueue = await startProducer(fx.broker.address, 1);
    try {
      // All four on one queue before the consumer starts, so the first pull returns them together.
      await sendMany(oneQueue, topic, 4, 'batch', () => ({}), 1);
    } finally {
      await oneQueue.shutdown();
    }
    const seen: { body: string; reconsumeTimes: number }[] = [];
    const c = newConsumer(fx.broker.address, group, { consumeMessageBatchMaxSize: 4 }).subscribe(topic, '*');
    let first = true;
    c.registerMessageListener((msgs, ctx) => {
      for (const m of msgs) seen.push({ body: m.body?.toString() ?? '', reconsumeTimes: m.reconsumeTimes });
      if (first) {
        first = false;
        expect(msgs.map((m) => m.body?.toString())).toEqual(['batch-0', 'batch-1', 'batch-2', 'batch-3']);
        ctx.ackIndex = 1; // messages 0 and 1 succeeded, 2 and 3 are retried
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    open.push(c);
    await c.start();
    await waitFor(() => seen.filter((s) => s.reconsumeTimes === 1).length === 2, 15_000);
    expect(
      seen
        .filter((s) => s.reconsumeTimes === 1)
        .map((s) => s.body)
        .sort(),
    ).toEqual(['batch-2', 'batch-3']);
  });
});
