/**
 * SimpleConsumer over POP on the bundled broker, over HTTP endpoints and over TCP remoting (namesrvAddr):
 * receive / ack, redelivery after the invisible time with reconsumeTimes growing, the DLQ after the
 * group's retryMaxTimes, changeInvisibleDuration, eight members on four queues without a duplicate, a
 * member dropped mid-batch, and a broker restart with receipts outstanding.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { SimpleConsumer, type ReceivedMessage, type SimpleConsumerOptions } from '../../../src/index.js';
import { InvalidArgumentError } from '../../../src/common/errors.js';
import { startBroker, tempStorePath, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { uniq } from './push-consumer-support.js';

type Transport = 'http' | 'tcp';
const addressing = (t: Transport, b: Broker): Partial<SimpleConsumerOptions> =>
  t === 'http' ? { endpoints: b.address } : { namesrvAddr: b.remotingAddress ?? '' };

const body = (m: ReceivedMessage): string => m.body?.toString() ?? '';

async function sendAll(b: Broker, topic: string, bodies: string[], queues = 4): Promise<void> {
  const p = new Producer({ endpoints: b.address, defaultTopicQueueNums: queues });
  await p.start();
  try {
    for (const s of bodies) await p.send({ topic, body: Buffer.from(s), tags: 'T' });
  } finally {
    await p.shutdown();
  }
}

/** Receives until `n` messages came or `timeoutMs` passed. */
async function receiveN(
  c: SimpleConsumer,
  n: number,
  invisibleMs: number,
  timeoutMs = 10_000,
): Promise<ReceivedMessage[]> {
  const out: ReceivedMessage[] = [];
  const deadline = Date.now() + timeoutMs;
  while (out.length < n && Date.now() < deadline)
    out.push(...(await c.receive(Math.min(32, n - out.length), invisibleMs)));
  return out;
}

async function setRetryMaxTimes(fx: BrokerFixture, group: string, retryMaxTimes: number): Promise<void> {
  const answer = await fx.client.call(
    'UPDATE_AND_CREATE_SUBSCRIPTIONGROUP',
    {},
    Buffer.from(JSON.stringify({ groupName: group, retryMaxTimes })),
  );
  expect(answer.code).toBe(0);
}

describe.each<Transport>(['http', 'tcp'])('SimpleConsumer over %s', (t) => {
  let fx: BrokerFixture;
  const consumers: SimpleConsumer[] = [];
  const consumer = (group: string, topic: string, extra: Partial<SimpleConsumerOptions> = {}): SimpleConsumer => {
    const c = new SimpleConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: group,
      awaitDurationMs: 1000,
      ...extra,
    });
    c.subscribe(topic, '*');
    consumers.push(c);
    return c;
  };
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0, popReviveIntervalMs: 50, dlqReadable: true });
  });
  afterEach(async () => {
    await Promise.all(consumers.splice(0).map((c) => c.shutdown()));
  });
  afterAll(async () => {
    await fx.close();
  });

  it('receives, acks, and refuses bad arguments with typed errors', async () => {
    const topic = uniq('PopT');
    const c = consumer(uniq('PopG'), topic);
    await c.start();
    await sendAll(fx.broker, topic, ['a', 'b', 'c']);
    const got = await receiveN(c, 3, 10_000);
    expect(got.map(body).sort()).toEqual(['a', 'b', 'c']);
    for (const m of got) {
      expect(m.topic).toBe(topic);
      expect(m.deliveryAttempt).toBe(1);
      expect(m.receiptHandle.split(' ')).toHaveLength(8);
      await c.ack(m);
    }
    // An acknowledged message cannot be acknowledged again.
    await expect(c.ack(got[0]!)).rejects.toThrow(/already acknowledged/);
    await expect(c.receive(0, 1000)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.receive(33, 1000)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.receive(1, 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.receive(1, -5)).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(c.changeInvisibleDuration(got[1]!, 0)).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(await c.receive(1, 1000)).toEqual([]);
  }, 30_000);

  it('redelivers an unacknowledged message after its invisible time with reconsumeTimes growing, then sends it to the DLQ', async () => {
    const topic = uniq('PopT');
    const group = uniq('PopG');
    await setRetryMaxTimes(fx, group, 2);
    const c = consumer(group, topic);
    await c.start();
    await sendAll(fx.broker, topic, ['poison']);
    const attempts: number[] = [];
    for (let i = 0; i < 3; i++) {
      const [m] = await receiveN(c, 1, 300);
      expect(m && body(m)).toBe('poison');
      attempts.push(m!.reconsumeTimes);
      expect(m!.deliveryAttempt).toBe(i + 1);
    }
    expect(attempts).toEqual([0, 1, 2]);
    // Past retryMaxTimes the message goes to %DLQ%<group> and is not delivered again.
    await waitFor(() => fx.broker.store.getMaxOffsetInQueue(`%DLQ%${group}`, 0) === 1, 5000);
    expect(await c.receive(1, 300)).toEqual([]);
  }, 30_000);

  it('for await acknowledges each message whose loop body finished', async () => {
    const topic = uniq('PopT');
    const c = consumer(uniq('PopG'), topic, { invisibleDurationMs: 300, batchSize: 2 });
    await c.start();
    await sendAll(fx.broker, topic, ['f1', 'f2', 'f3']);
    const seen: string[] = [];
    const stop = new AbortController();
    for await (const m of c.messages({ signal: stop.signal })) {
      seen.push(body(m));
      if (seen.length === 3) stop.abort();
    }
    expect(seen.sort()).toEqual(['f1', 'f2', 'f3']);
    // Every one was acknowledged: nothing comes back after the invisible duration.
    expect(await c.receive(3, 300)).toEqual([]);
  }, 30_000);

  it('changeInvisibleDuration keeps a message hidden longer and gives it a new receipt handle', async () => {
    const topic = uniq('PopT');
    const c = consumer(uniq('PopG'), topic);
    await c.start();
    await sendAll(fx.broker, topic, ['x']);
    const [m] = await receiveN(c, 1, 300);
    const oldHandle = m!.receiptHandle;
    await c.changeInvisibleDuration(m!, 10_000);
    expect(m!.receiptHandle).not.toBe(oldHandle);
    // Well past the first invisible time, nothing comes back.
    expect(await c.receive(1, 1000)).toEqual([]);
    await expect(c.ack({ ...m!, receiptHandle: oldHandle })).rejects.toThrow(/stale/);
    await c.ack(m!);
  }, 30_000);

  it('eight members on a four-queue topic all receive, with no duplicate', async () => {
    const topic = uniq('PopT');
    const group = uniq('PopG');
    const members = Array.from({ length: 8 }, () => consumer(group, topic, { awaitDurationMs: 500 }));
    await Promise.all(members.map((c) => c.start()));
    const bodies = Array.from({ length: 200 }, (_, i) => `m${i}`);
    await sendAll(fx.broker, topic, bodies, 4);
    const seen = new Map<string, number>();
    const per = members.map(() => 0);
    await Promise.all(
      members.map(async (c, i) => {
        const deadline = Date.now() + 15_000;
        while (seen.size < bodies.length && Date.now() < deadline) {
          for (const m of await c.receive(4, 30_000)) {
            seen.set(body(m), (seen.get(body(m)) ?? 0) + 1);
            per[i]!++;
            await c.ack(m);
            await new Promise((r) => setTimeout(r, 1));
          }
        }
      }),
    );
    expect(seen.size).toBe(bodies.length);
    expect([...seen.values()].filter((n) => n > 1)).toEqual([]);
    expect(per.filter((n) => n > 0).length).toBeGreaterThan(1);
  }, 40_000);

  it('a member dropped mid-batch loses nothing: its messages come back after their invisible time', async () => {
    const topic = uniq('PopT');
    const group = uniq('PopG');
    const dying = consumer(group, topic);
    const survivor = consumer(group, topic);
    await Promise.all([dying.start(), survivor.start()]);
    const bodies = Array.from({ length: 10 }, (_, i) => `k${i}`);
    await sendAll(fx.broker, topic, bodies);
    const taken = await receiveN(dying, 10, 500);
    await dying.ack(taken[0]!);
    await dying.shutdown();
    const got = new Set([body(taken[0]!)]);
    const deadline = Date.now() + 10_000;
    while (got.size < bodies.length && Date.now() < deadline) {
      for (const m of await survivor.receive(32, 10_000)) {
        got.add(body(m));
        await survivor.ack(m);
      }
    }
    expect([...got].sort()).toEqual([...bodies].sort());
  }, 30_000);

  it('receipts outstanding over a broker restart stay valid, and nothing is revived twice', async () => {
    const storePath = tempStorePath();
    let b = await Broker.start({ port: 0, remotingPort: 0, storePath, popReviveIntervalMs: 50 });
    const topic = uniq('PopT');
    const group = uniq('PopG');
    try {
      await sendAll(b, topic, ['r1', 'r2']);
      let c = new SimpleConsumer({ ...addressing(t, b), consumerGroup: group, awaitDurationMs: 500 });
      c.subscribe(topic);
      await c.start();
      const got = await receiveN(c, 2, 60_000);
      expect(got.map(body).sort()).toEqual(['r1', 'r2']);
      await c.shutdown();
      await b.shutdown();
      b = await Broker.start({ port: 0, remotingPort: 0, storePath, popReviveIntervalMs: 50 });
      c = new SimpleConsumer({ ...addressing(t, b), consumerGroup: group, awaitDurationMs: 500 });
      c.subscribe(topic);
      await c.start();
      consumers.push(c);
      // The handles issued before the restart still ack (one), and still change the invisible time (the other).
      await c.ack(got[0]!);
      await c.changeInvisibleDuration(got[1]!, 200);
      const again = await receiveN(c, 1, 60_000, 5000);
      expect(again.map(body)).toEqual([body(got[1]!)]);
      expect(again[0]!.reconsumeTimes).toBe(1);
      await c.ack(again[0]!);
      expect(await c.receive(2, 1000)).toEqual([]);
    } finally {
      await b.shutdown();
      rmSync(storePath, { recursive: true, force: true });
    }
  }, 40_000);
});
