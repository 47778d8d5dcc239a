import type { Producer } from '../../../src/client/producer.js';
import type { ConsumeFailureEvent } from '../../../src/client/consume-message-concurrently-service.js';
import type { MessageExt } from '../../../src/common/message.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, startProducer, uniq } from './push-consumer-support.js';

describe('PushConsumer listener results as Node users expect', () => {
  let fx: BrokerFixture;
  let producer: Producer;

  beforeAll(async () => {
    fx = await startBroker();
    producer = await startProducer(fx.broker.address, 2);
  });
  afterAll(async () => {
    await producer.shutdown();
    await fx.close();
  });

  it('an async listener that resolves with nothing has succeeded: offsets commit, nothing is retried', async () => {
    const topic = uniq('ResolveT');
    const group = uniq('gres');
    await sendMany(producer, topic, 1, 'warm');
    const seen: string[] = [];
    const failures: ConsumeFailureEvent[] = [];
    const c1 = newConsumer(fx.broker.address, group).subscribe(topic, '*');
    c1.registerMessageListener(async (msgs: MessageExt[]) => {
      await Promise.resolve();
      for (const m of msgs) seen.push(m.body?.toString() ?? '');
    });
    c1.events.on('consumeFailure', (e) => failures.push(e));
    await c1.start();
    const sent = await sendMany(producer, topic, 40, 'r');
    await waitFor(() => sent.every((b) => seen.includes(b)), 10_000);
    await c1.shutdown();
    expect(failures).toEqual([]);
    // Nothing went to the retry topic: every delivery was a first delivery.
    expect(seen.filter((b) => b.startsWith('r-')).sort()).toEqual([...sent].sort());

    // The offsets were committed: the group's next member gets only what is new.
    const second = new Collector();
    const c2 = newConsumer(fx.broker.address, group).subscribe(topic, '*');
    c2.registerMessageListener(second.listener);
    await c2.start();
    const fresh = await sendMany(producer, topic, 5, 'after');
    await waitFor(() => fresh.every((b) => second.distinct.has(b)), 10_000);
    await c2.shutdown();
    expect(second.bodies.filter((b) => b.startsWith('r-'))).toEqual([]);
  });
});
