import type { AssignmentChangedEvent } from '../../../src/client/consumer/lite/lite-pull-consumer.js';
import { waitFor } from '../../support/broker-fixture.js';
import { mqKey, sendMany, uniq, useBrokerAndProducer } from './push-consumer-support.js';
import { newLiteConsumer, pollUntil } from './lite-pull-support.js';

describe('LitePullConsumer: two members of one group', () => {
  const env = useBrokerAndProducer(8);

  it('share the queues of a subscription, and each message is polled by one of them once', async () => {
    const topic = uniq('LgT');
    const group = uniq('lgg');
    await sendMany(env.producer, topic, 1, 'warm');
    const events: AssignmentChangedEvent[] = [];
    const a = newLiteConsumer(env.fx.broker.address, group, { rebalanceIntervalMs: 1000 });
    a.subscribe(topic, '*', (e) => events.push(e));
    await a.start();
    await waitFor(() => a.assignment().length === 8, 10_000);
    await pollUntil(a, (b) => b.includes('warm-0'));
    // On the broker before the second member joins: a queue that moves while its offset is only in
    // memory is read again by its next owner (at-least-once, as in RocketMQ).
    await a.commit();

    const b = newLiteConsumer(env.fx.broker.address, group, { rebalanceIntervalMs: 1000 });
    b.subscribe(topic);
    await b.start();
    // Both rebalance promptly to a 4 + 4 split with no queue held twice.
    // (A queue leaves `assignment()` when it is dropped; the event follows once its removal finished.)
    await waitFor(
      () => a.assignment().length === 4 && b.assignment().length === 4 && events.flatMap((e) => e.removed).length === 4,
      15_000,
    );
    const keys = [...a.assignment(), ...b.assignment()].map(mqKey);
    expect(new Set(keys).size).toBe(8);
    // The queues handed to the second member were reported removed (in one event or several).
    expect(events.flatMap((e) => e.removed)).toHaveLength(4);
    expect(events.at(-1)?.assigned.map(mqKey).sort()).toEqual(a.assignment().map(mqKey).sort());

    const sent = await sendMany(env.producer, topic, 400, 'g');
    const gotA: string[] = [];
    const gotB: string[] = [];
    const total = (): number => gotA.length + gotB.length;
    const deadline = Date.now() + 20_000;
    const drain = async (c: typeof a, into: string[]): Promise<void> => {
      while (total() < sent.length && Date.now() < deadline) {
        for (const m of await c.poll({ timeoutMs: 100 })) into.push(m.body?.toString() ?? '');
      }
    };
    await Promise.all([drain(a, gotA), drain(b, gotB)]);
    expect(gotA.length).toBeGreaterThan(0);
    expect(gotB.length).toBeGreaterThan(0);
    expect([...gotA, ...gotB].sort()).toEqual([...sent].sort());
    expect([...(await a.poll({ timeoutMs: 200 })), ...(await b.poll({ timeoutMs: 200 }))]).toEqual([]);

    // A member leaving hands its queues back: the other takes all 8 and resumes after what was polled.
    await b.shutdown();
    await waitFor(() => a.assignment().length === 8, 15_000);
    const more = await sendMany(env.producer, topic, 40, 'h');
    const after = await pollUntil(a, (x) => x.length >= 40, 10_000);
    expect(await a.poll({ timeoutMs: 300 })).toEqual([]);
    expect(after.sort()).toEqual([...more].sort());
    await a.shutdown();
  });
});
