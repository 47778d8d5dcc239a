import { waitFor } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, uniq, useBrokerAndProducer } from './push-consumer-support.js';

describe('changing a subscription at run time loses nothing', () => {
  const env = useBrokerAndProducer(2);

  it.each([1, 2, 3])(
    'trial %i: after subscribe(topic, newTags) resolves, every message of the new tag is delivered, none of the old',
    async () => {
      const topic = uniq('Resub');
      await sendMany(env.producer, topic, 1, 'warm');
      const got = new Collector();
      const c = newConsumer(env.fx.broker.address, uniq('gresub')).subscribe(topic, 'A');
      c.registerMessageListener(got.listener);
      await c.start();
      try {
        const a1 = await sendMany(env.producer, topic, 10, 'a1', () => ({ tags: 'A' }));
        await waitFor(() => a1.every((b) => got.distinct.has(b)), 10_000);
        // The queues' pulls are now held by the broker with the old subscription.
        await new Promise((r) => setTimeout(r, 300));
        c.subscribe(topic, 'B');
        await c.subscriptionsApplied();
        const b = await sendMany(env.producer, topic, 20, 'b', () => ({ tags: 'B' }));
        const a2 = await sendMany(env.producer, topic, 10, 'a2', () => ({ tags: 'A' }));
        await waitFor(() => b.every((x) => got.distinct.has(x)), 10_000);
        const marker = await sendMany(env.producer, topic, 4, 'end', () => ({ tags: 'B' }));
        await waitFor(() => marker.every((x) => got.distinct.has(x)), 10_000);
        expect(got.bodies.filter((x) => a2.includes(x))).toEqual([]);
      } finally {
        await c.shutdown();
      }
    },
  );

  it('unsubscribe on a running consumer resolves once the brokers know; the topic is no longer consumed', async () => {
    const t1 = uniq('Keep');
    const t2 = uniq('Drop');
    await sendMany(env.producer, t1, 1, 'warm');
    await sendMany(env.producer, t2, 1, 'warm');
    const got = new Collector();
    const c = newConsumer(env.fx.broker.address, uniq('gunsub')).subscribe(t1, '*').subscribe(t2, '*');
    c.registerMessageListener(got.listener);
    await c.start();
    try {
      await waitFor(() => c.assignedQueues().some((q) => q.topic === t2), 5000);
      c.unsubscribe(t2);
      await c.subscriptionsApplied();
      await waitFor(() => !c.assignedQueues().some((q) => q.topic === t2), 5000);
      const dropped = await sendMany(env.producer, t2, 5, 'dropped');
      const kept = await sendMany(env.producer, t1, 5, 'kept');
      await waitFor(() => kept.every((b) => got.distinct.has(b)), 10_000);
      expect(got.bodies.filter((b) => dropped.includes(b))).toEqual([]);
    } finally {
      await c.shutdown();
    }
  });
});
