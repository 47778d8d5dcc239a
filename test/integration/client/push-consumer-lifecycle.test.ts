import { Broker } from '../../../src/broker/index.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import { startBroker, waitFor } from '../../support/broker-fixture.js';
import {
  Collector,
  newConsumer,
  sendMany,
  startProducer,
  uniq,
  useBrokerAndProducer,
} from './push-consumer-support.js';

/** How long a condition may take on a loaded 2-core machine before the test fails (not a sleep). */
const CONDITION_MS = 45_000;

const timeouts = (): number => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;

describe('PushConsumer offsets and shutdown', () => {
  const env = useBrokerAndProducer(4);

  it(
    'offsets survive a consumer restart: the next member resumes where the last one stopped',
    async () => {
      const topic = uniq('OffT');
      const group = uniq('go');
      await sendMany(env.producer, topic, 1, 'warm');
      const first = new Collector();
      const c1 = newConsumer(env.fx.broker.address, group).subscribe(topic, '*');
      c1.registerMessageListener(first.listener);
      await c1.start();
      const batch1 = await sendMany(env.producer, topic, 100, 'one');
      await waitFor(() => batch1.every((b) => first.distinct.has(b)), CONDITION_MS);
      const report = await c1.shutdown();
      expect(report).toEqual({ unfinishedListeners: 0, droppedConsumeRequests: 0, errors: [] });

      const batch2 = await sendMany(env.producer, topic, 100, 'two');
      const second = new Collector();
      const c2 = newConsumer(env.fx.broker.address, group).subscribe(topic, '*');
      c2.registerMessageListener(second.listener);
      await c2.start();
      // A queue is pulled in offset order: a message of the first batch consumed again would have come
      // before that queue's messages of the second batch, so once all of those are in, none can follow.
      await waitFor(() => batch2.every((b) => second.distinct.has(b)), CONDITION_MS);
      await c2.shutdown();
      // Graceful shutdown persisted everything: nothing of the first batch comes again.
      expect(second.bodies.filter((b) => b.startsWith('one-'))).toEqual([]);
    },
    3 * CONDITION_MS,
  );

  it('offsets survive a broker restart', async () => {
    const own = await startBroker();
    const storePath = own.storePath;
    const topic = uniq('BrT');
    const group = uniq('gbr');
    let broker: Broker | undefined = own.broker;
    try {
      const p1 = await startProducer(broker.address, 4);
      await sendMany(p1, topic, 1, 'warm');
      const first = new Collector();
      const c1 = newConsumer(broker.address, group).subscribe(topic, '*');
      c1.registerMessageListener(first.listener);
      await c1.start();
      const batch1 = await sendMany(p1, topic, 60, 'one');
      await waitFor(() => batch1.every((b) => first.distinct.has(b)), 10_000);
      await c1.shutdown();
      await p1.shutdown();
      await broker.shutdown();

      broker = await Broker.start({ storePath, port: 0 });
      const p2 = await startProducer(broker.address, 4);
      const batch2 = await sendMany(p2, topic, 60, 'two');
      const second = new Collector();
      const c2 = newConsumer(broker.address, group).subscribe(topic, '*');
      c2.registerMessageListener(second.listener);
      await c2.start();
      await waitFor(() => batch2.every((b) => second.distinct.has(b)), 10_000);
      await new Promise((r) => setTimeout(r, 200));
      await c2.shutdown();
      await p2.shutdown();
      expect(second.bodies.filter((b) => b.startsWith('one-'))).toEqual([]);
    } finally {
      await broker?.shutdown();
      await own.close().catch(() => undefined);
    }
  });

  it('shutdown waits for slow in-flight listeners, then commits their progress', async () => {
    const topic = uniq('SlowT');
    const group = uniq('gs');
    await sendMany(env.producer, topic, 1, 'warm');
    let started = 0;
    let finished = 0;
    const c = newConsumer(env.fx.broker.address, group, { consumeThreadMax: 4 }).subscribe(topic, '*');
    c.registerMessageListener(async () => {
      started++;
      await new Promise((r) => setTimeout(r, 300));
      finished++;
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await c.start();
    await sendMany(env.producer, topic, 8, 'slow');
    await waitFor(() => started >= 2, 10_000);
    const t0 = Date.now();
    const report = await c.shutdown({ timeoutMs: 5000 });
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(report.unfinishedListeners).toBe(0);
    expect(finished).toBeGreaterThanOrEqual(2);
    // The same promise every time.
    expect(c.shutdown()).toBe(c.shutdown());
  });

  it('a listener that never finishes: shutdown returns at the deadline and reports it; the message is delivered again', async () => {
    const topic = uniq('HangT');
    const group = uniq('gh');
    await sendMany(env.producer, topic, 1, 'warm');
    const got: string[] = [];
    const c = newConsumer(env.fx.broker.address, group).subscribe(topic, '*');
    c.registerMessageListener(async (msgs) => {
      got.push(...msgs.map((m) => m.body?.toString() ?? ''));
      if (msgs.some((m) => m.body?.toString() === 'hang-0')) await new Promise(() => {});
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await c.start();
    await sendMany(env.producer, topic, 1, 'hang');
    await waitFor(() => got.includes('hang-0'), 10_000);
    const t0 = Date.now();
    const report = await c.shutdown({ timeoutMs: 300 });
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(report.unfinishedListeners).toBe(1);

    const again = new Collector();
    const c2 = newConsumer(env.fx.broker.address, group).subscribe(topic, '*');
    c2.registerMessageListener(again.listener);
    await c2.start();
    await waitFor(() => again.distinct.has('hang-0'), 10_000);
    await c2.shutdown();
  });

  it('an AbortSignal shuts the consumer down; Symbol.asyncDispose too; a throwing event handler changes nothing', async () => {
    const topic = uniq('SigT');
    await sendMany(env.producer, topic, 1, 'warm');
    const ac = new AbortController();
    const col = new Collector();
    const c = newConsumer(env.fx.broker.address, uniq('gsig'), { signal: ac.signal }).subscribe(topic, '*');
    c.registerMessageListener(col.listener);
    c.events.on('rebalance', () => {
      throw new Error('handler bug');
    });
    await c.start();
    await waitFor(() => c.assignedQueues().length > 0, 10_000);
    const sent = await sendMany(env.producer, topic, 10, 's');
    await waitFor(() => sent.every((b) => col.distinct.has(b)), 10_000);
    ac.abort();
    await waitFor(() => c.state === 'SHUTDOWN', 5000);

    const d = newConsumer(env.fx.broker.address, uniq('gdisp')).subscribe(topic, '*');
    d.registerMessageListener(col.listener);
    await d.start();
    await d[Symbol.asyncDispose]();
    expect(d.state).toBe('SHUTDOWN');
  });

  it('start() checks the listener and subscriptions; bad options name the field', () => {
    expect(() => newConsumer(env.fx.broker.address, 'g', { pullBatchSize: 0 })).toThrow(/pullBatchSize/);
    expect(() => newConsumer(env.fx.broker.address, 'DEFAULT_CONSUMER')).toThrow(/consumerGroup/);
    expect(() => newConsumer(env.fx.broker.address, 'g', { consumeTimestamp: '2024' })).toThrow(/consumeTimestamp/);
    const c = newConsumer(env.fx.broker.address, uniq('gchk'));
    return expect(c.start()).rejects.toThrow(/listener/);
  });

  it('leaves no timers behind after shutdown', async () => {
    const before = timeouts();
    const topic = uniq('TimerT');
    await sendMany(env.producer, topic, 1, 'warm');
    const c = newConsumer(env.fx.broker.address, uniq('gt')).subscribe(topic, '*');
    c.registerMessageListener(new Collector().listener);
    await c.start();
    await waitFor(() => c.assignedQueues().length > 0, 10_000);
    expect(timeouts()).toBeGreaterThan(before);
    await c.shutdown();
    await waitFor(() => timeouts() <= before, 2000);
  });
});
