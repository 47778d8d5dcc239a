import type { ConsumeFailureEvent } from '../../../src/client/consumer/push/consume-message-concurrently-service.js';
import type { MessageExt } from '../../../src/common/message.js';
import { waitFor } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, uniq, useBrokerAndProducer } from './push-consumer-support.js';

describe('PushConsumer listener results as Node users expect', () => {
  const env = useBrokerAndProducer(2);

  it('an async listener that resolves with nothing has succeeded: offsets commit, nothing is retried', async () => {
    const topic = uniq('ResolveT');
    const group = uniq('gres');
    await sendMany(env.producer, topic, 1, 'warm');
    const seen: string[] = [];
    const failures: ConsumeFailureEvent[] = [];
    const c1 = newConsumer(env.fx.broker.address, group).subscribe(topic, '*');
    c1.registerMessageListener(async (msgs: MessageExt[]) => {
      await Promise.resolve();
      for (const m of msgs) seen.push(m.body?.toString() ?? '');
    });
    c1.events.on('consumeFailure', (e) => failures.push(e));
    await c1.start();
    const sent = await sendMany(env.producer, topic, 40, 'r');
    await waitFor(() => sent.every((b) => seen.includes(b)), 10_000);
    await c1.shutdown();
    expect(failures).toEqual([]);
    // Nothing went to the retry topic: every delivery was a first delivery.
    expect(seen.filter((b) => b.startsWith('r-')).sort()).toEqual([...sent].sort());

    // The offsets were committed: the group's next member gets only what is new.
    const second = new Collector();
    const c2 = newConsumer(env.fx.broker.address, group).subscribe(topic, '*');
    c2.registerMessageListener(second.listener);
    await c2.start();
    const fresh = await sendMany(env.producer, topic, 5, 'after');
    await waitFor(() => fresh.every((b) => second.distinct.has(b)), 10_000);
    await c2.shutdown();
    expect(second.bodies.filter((b) => b.startsWith('r-'))).toEqual([]);
  });
});
