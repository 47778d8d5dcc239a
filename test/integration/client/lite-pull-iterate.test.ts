import type { LitePullConsumer } from '../../../src/client/consumer/lite/lite-pull-consumer.js';
import { waitFor } from '../../support/broker-fixture.js';
import { sendMany, uniq, useBrokerAndProducer } from './push-consumer-support.js';
import { bodyOf, newLiteConsumer, pollUntil } from './lite-pull-support.js';

/** Every queue's committed offset, summed. */
async function committedTotal(c: LitePullConsumer): Promise<number> {
  let sum = 0;
  for (const mq of c.assignment()) sum += Math.max(0, await c.committed(mq));
  return sum;
}

describe('LitePullConsumer: for await, batches, and bounded buffers', () => {
  const env = useBrokerAndProducer(4);

  it('for await drains a backlog; a break does not commit the message being processed', async () => {
    const topic = uniq('LiT');
    const group = uniq('lig');
    const sent = await sendMany(env.producer, topic, 120, 'i');
    const c1 = newLiteConsumer(env.fx.broker.address, group);
    c1.subscribe(topic);
    await c1.start();
    const seen: string[] = [];
    let breakingOn = '';
    for await (const m of c1) {
      if (seen.length === 50) {
        breakingOn = bodyOf(m);
        break;
      }
      seen.push(bodyOf(m));
    }
    // 50 processed, and only those are committed.
    await c1.commit();
    expect(await committedTotal(c1)).toBe(50);
    // The message the loop broke on is the first thing the next reader gets.
    const again = await c1.poll({ timeoutMs: 1000 });
    expect(again.length).toBeGreaterThan(0);
    expect(bodyOf(again[0]!)).toBe(breakingOn);
    seen.push(...again.map(bodyOf));
    await c1.shutdown();

    // A fresh consumer of the group gets everything not processed, nothing twice.
    const c2 = newLiteConsumer(env.fx.broker.address, group);
    c2.subscribe(topic);
    await c2.start();
    const rest: string[] = [];
    for await (const m of c2) {
      rest.push(bodyOf(m));
      if (rest.length + seen.length === sent.length) break;
    }
    await c2.shutdown();
    expect([...seen, ...rest].sort()).toEqual([...sent].sort());
  });

  it('a for await loop ends on an aborted signal and on shutdown, committing exactly what was processed', async () => {
    const topic = uniq('LiA');
    const group = uniq('lia');
    const sent = await sendMany(env.producer, topic, 80, 'a');
    const c1 = newLiteConsumer(env.fx.broker.address, group, { autoCommit: false });
    c1.subscribe(topic);
    await c1.start();
    const ac = new AbortController();
    const seen: string[] = [];
    for await (const m of c1.messages({ signal: ac.signal })) {
      seen.push(bodyOf(m));
      if (seen.length === 30) ac.abort();
    }
    expect(seen).toHaveLength(30);
    await c1.commit();
    expect(await committedTotal(c1)).toBe(30);

    // The batch form, ended by shutdown from inside the loop: the batch whose body ran to its end
    // counts; nothing after it.
    let batches = 0;
    for await (const batch of c1.batches()) {
      for (const m of batch) seen.push(bodyOf(m));
      if (++batches === 2) void c1.shutdown();
    }
    await c1.shutdown();

    const c2 = newLiteConsumer(env.fx.broker.address, group);
    c2.subscribe(topic);
    await c2.start();
    const first30 = seen.slice(0, 30);
    const expected = sent.filter((b) => !first30.includes(b)).sort();
    const rest = await pollUntil(c2, (b) => b.length >= expected.length);
    expect(await c2.poll({ timeoutMs: 300 })).toEqual([]);
    await c2.shutdown();
    // Only the 30 were committed: the batches read after them (not committed, autoCommit is off) come
    // again, with everything else, each once.
    expect(rest.sort()).toEqual(expected);
  });

  it('a throw in the loop body leaves the message for the next loop', async () => {
    const topic = uniq('LiX');
    await sendMany(env.producer, topic, 5, 'x');
    const c = newLiteConsumer(env.fx.broker.address, uniq('lix'));
    c.subscribe(topic);
    await c.start();
    let failed = '';
    await expect(
      (async () => {
        for await (const m of c) {
          failed = bodyOf(m);
          throw new Error('boom');
        }
      })(),
    ).rejects.toThrow('boom');
    const again: string[] = [];
    for await (const m of c) {
      again.push(bodyOf(m));
      if (again.length === 5) break;
    }
    expect(again).toContain(failed);
    expect(new Set(again).size).toBe(5);
    await c.shutdown();
  });

  it('keeps its buffer bounded while nobody polls (pullThresholdForQueue, pullThresholdForAll)', async () => {
    const topic = uniq('LiB');
    const perQueue = 25;
    const batch = 10;
    await sendMany(env.producer, topic, 600, 'b');
    const c = newLiteConsumer(env.fx.broker.address, uniq('lib'), {
      pullBatchSize: batch,
      pullThresholdForQueue: perQueue,
    });
    c.subscribe(topic);
    await c.start();
    const queues = 4;
    // RocketMQ checks the bound before a pull, so a queue may overshoot it by one batch.
    const bound = queues * (perQueue + batch);
    await waitFor(() => c.bufferedMessageCount >= queues * perQueue, 10_000);
    const samples: number[] = [];
    for (let i = 0; i < 10; i++) {
      samples.push(c.bufferedMessageCount);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(Math.max(...samples)).toBeLessThanOrEqual(bound);
    // Polling frees room and the pulls go on.
    const got = await pollUntil(c, (b) => b.length >= 600, 20_000);
    expect(new Set(got).size).toBe(600);
    await c.shutdown();

    const all = newLiteConsumer(env.fx.broker.address, uniq('lib'), { pullBatchSize: batch, pullThresholdForAll: 30 });
    all.subscribe(topic);
    await all.start();
    await waitFor(() => all.bufferedMessageCount > 30, 10_000);
    await new Promise((r) => setTimeout(r, 300));
    // Checked before each queue's pull: at most one batch per queue beyond the consumer-wide bound.
    expect(all.bufferedMessageCount).toBeLessThanOrEqual(30 + queues * batch);
    await all.shutdown();
  });
});
