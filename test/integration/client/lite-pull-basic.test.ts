import { OffsetOutOfRangeError } from '../../../src/client/consumer/lite/lite-pull-errors.js';
import { RocketMQError, StateError } from '../../../src/common/errors.js';
import type { MessageQueue } from '../../../src/common/message.js';
import { sendMany, uniq, useBrokerAndProducer } from './push-consumer-support.js';
import { newLiteConsumer, pollUntil } from './lite-pull-support.js';

describe('LitePullConsumer: subscribe, poll, commit, restart', () => {
  const env = useBrokerAndProducer(4);

  it('polls every message exactly once, and a restarted consumer resumes at the committed offset', async () => {
    const topic = uniq('LpT');
    const group = uniq('lpg');
    const batch1 = await sendMany(env.producer, topic, 200, 'one');
    const c1 = newLiteConsumer(env.fx.broker.address, group, { autoCommit: false });
    c1.subscribe(topic, '*');
    await c1.start();
    const polled = await pollUntil(c1, (b) => b.length >= 200);
    // Nothing more arrives: each message came once.
    expect(await c1.poll({ timeoutMs: 300 })).toEqual([]);
    expect(polled.sort()).toEqual([...batch1].sort());
    await c1.commit();
    for (const mq of c1.assignment()) {
      expect(await c1.committed(mq)).toBe(await env.fx.broker.store.getMaxOffsetInQueue(topic, mq.queueId));
    }
    await c1.shutdown();
    await c1.shutdown(); // idempotent

    const batch2 = await sendMany(env.producer, topic, 50, 'two');
    const c2 = newLiteConsumer(env.fx.broker.address, group);
    c2.subscribe(topic);
    await c2.start();
    const again = await pollUntil(c2, (b) => b.length >= 50);
    expect(await c2.poll({ timeoutMs: 300 })).toEqual([]);
    expect(again.sort()).toEqual([...batch2].sort());
    await c2.shutdown();
  });

  it('auto-commit commits what poll handed out, and shutdown persists it', async () => {
    const topic = uniq('LpAc');
    const group = uniq('lpac');
    await sendMany(env.producer, topic, 40, 'a');
    const c1 = newLiteConsumer(env.fx.broker.address, group, { pullBatchSize: 5, autoCommitIntervalMs: 1000 });
    c1.subscribe(topic);
    await c1.start();
    const first = await pollUntil(c1, (b) => b.length >= 1);
    await c1.shutdown();
    // Only what was handed out is committed: everything else comes to the next consumer.
    const c2 = newLiteConsumer(env.fx.broker.address, group);
    c2.subscribe(topic);
    await c2.start();
    const rest = await pollUntil(c2, (b) => b.length + first.length >= 40, 10_000);
    await c2.shutdown();
    expect(new Set([...first, ...rest]).size).toBe(40);
    expect(first.length + rest.length).toBeLessThanOrEqual(40 + 10); // re-delivery only of buffered, never loss
    expect(rest.filter((b) => first.includes(b))).toEqual([]);
  });

  it('rejects poll before start, mixing subscribe and assign, and assign of a missing topic', async () => {
    const c = newLiteConsumer(env.fx.broker.address, uniq('lpe'));
    await expect(c.poll()).rejects.toThrow(StateError);
    await expect(c.poll()).rejects.toThrow(/before start/);
    c.subscribe(uniq('LpE'));
    await expect(c.assign([{ topic: 'X', brokerName: 'b', queueId: 0 }])).rejects.toThrow(/mutually exclusive/);
    await c.shutdown();

    const a = newLiteConsumer(env.fx.broker.address, uniq('lpe'));
    await a.assign([{ topic: uniq('NoSuchTopic'), brokerName: 'broker-a', queueId: 0 }]);
    expect(() => a.subscribe('Other')).toThrow(/mutually exclusive/);
    await expect(a.start()).rejects.toMatchObject({ code: 'ERR_TOPIC_NOT_EXIST' });
    await a.shutdown();

    const b = newLiteConsumer(env.fx.broker.address, uniq('lpe'));
    await b.start();
    await expect(b.assign([{ topic: uniq('NoSuchTopic'), brokerName: 'broker-a', queueId: 0 }])).rejects.toThrow(
      RocketMQError,
    );
    await expect(b.fetchMessageQueues(uniq('NoSuchTopic'))).rejects.toMatchObject({ code: 'ERR_TOPIC_NOT_EXIST' });
    await b.shutdown();
    await expect(b.poll()).rejects.toThrow(StateError);
  });

  it('assign, seek, seekToBegin, seekToEnd, offsetForTimestamp, and seek out of range', async () => {
    const topic = uniq('LpS');
    await sendMany(env.producer, topic, 1, 'warm');
    const c = newLiteConsumer(env.fx.broker.address, uniq('lps'), { autoCommit: false });
    await c.start();
    const mqs = await c.fetchMessageQueues(topic);
    const mq = mqs[0] as MessageQueue;
    // Put 30 messages on that one queue.
    for (let i = 0; i < 30; i++) await env.fx.client.send(topic, `s-${i}`, { queueId: mq.queueId });
    await c.assign([mq]);
    expect(c.assignment()).toEqual([mq]);
    const max = await env.fx.broker.store.getMaxOffsetInQueue(topic, mq.queueId);
    await pollUntil(c, (b) => b.length >= max);

    await c.seek(mq, max - 3);
    const tail = await pollUntil(c, (b) => b.length >= 3);
    expect(tail).toHaveLength(3);
    expect(await c.poll({ timeoutMs: 200 })).toEqual([]);

    await c.seekToBegin(mq);
    const all = await pollUntil(c, (b) => b.length >= max);
    expect(all).toHaveLength(max);

    await c.seekToEnd(mq);
    expect(await c.poll({ timeoutMs: 200 })).toEqual([]);

    expect(await c.offsetForTimestamp(mq, 0)).toBe(0);
    const err = await c.seek(mq, max + 5).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OffsetOutOfRangeError);
    expect(err).toMatchObject({ code: 'ERR_OFFSET_OUT_OF_RANGE', minOffset: 0, maxOffset: max });
    await expect(c.seek({ ...mq, queueId: mq.queueId + 100 }, 0)).rejects.toThrow(/not assigned/);
    await c.shutdown();
  });

  it('pause holds a queue back, resume releases it', async () => {
    const topic = uniq('LpP');
    await sendMany(env.producer, topic, 1, 'warm');
    const c = newLiteConsumer(env.fx.broker.address, uniq('lpp'), { autoCommit: false });
    await c.start();
    const [q0, q1] = (await c.fetchMessageQueues(topic)) as [MessageQueue, MessageQueue];
    await c.assign([q0, q1]);
    c.pause([q0]);
    expect(c.isPaused(q0)).toBe(true);
    for (let i = 0; i < 5; i++) await env.fx.client.send(topic, `p0-${i}`, { queueId: q0.queueId });
    for (let i = 0; i < 5; i++) await env.fx.client.send(topic, `p1-${i}`, { queueId: q1.queueId });
    const got = await pollUntil(c, (b) => b.filter((x) => x.startsWith('p1-')).length >= 5);
    expect(await c.poll({ timeoutMs: 300 })).toEqual([]);
    expect(got.filter((x) => x.startsWith('p0-'))).toEqual([]);
    c.resume([q0]);
    // (The topic's first message, 'warm-0', may sit on either queue.)
    const later = await pollUntil(c, (b) => b.filter((x) => x.startsWith('p0-')).length >= 5);
    expect(later.filter((x) => x !== 'warm-0').sort()).toEqual(['p0-0', 'p0-1', 'p0-2', 'p0-3', 'p0-4']);
    await c.shutdown();
  });
});
