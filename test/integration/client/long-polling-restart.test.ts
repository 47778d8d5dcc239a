/**
 * Held pulls (pullBlockIfNotFound) over real HTTP: woken by a send, aborted through a signal (the
 * connection stays usable), cut by shutdown; and a broker restart on the same port in the middle of a
 * session (the client recovers).
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { AbortError, Producer, PullConsumer, PullStatus, TransportError } from '../../../src/index.js';
import { tempStorePath } from '../../support/broker-fixture.js';

const unique = (p: string): string => `${p}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

const cleanups: Array<() => Promise<void>> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c().catch(() => undefined);
});

async function setup(storePath = tempStorePath('rmq-client-')) {
  const broker = await Broker.start({ storePath, port: 0 });
  const state = { broker };
  cleanups.push(async () => {
    await state.broker.shutdown();
    rmSync(storePath, { recursive: true, force: true });
  });
  const producer = new Producer({ endpoints: broker.address });
  const consumer = new PullConsumer({ endpoints: broker.address, consumerGroup: unique('cg') });
  await producer.start();
  await consumer.start();
  cleanups.push(() => producer.shutdown());
  cleanups.push(() => consumer.shutdown());
  return { state, storePath, producer, consumer };
}

test('a held pull (pullBlockIfNotFound) is woken by a send, long before the suspend time', async () => {
  const { producer, consumer } = await setup();
  const topic = unique('T');
  const first = await producer.send({ topic, body: Buffer.from('first') });
  const mq = first.messageQueue;
  const startedAt = Date.now();
  const held = consumer.pullBlockIfNotFound(mq, '*', first.queueOffset + 1, 32);
  // Let the pull reach the broker and be suspended, then send to the same queue.
  await new Promise((r) => setTimeout(r, 200));
  let sent;
  for (let i = 0; i < 16; i++) {
    sent = await producer.send({ topic, body: Buffer.from(`second-${i}`) });
    if (sent.messageQueue.queueId === mq.queueId) break;
  }
  const r = await held;
  expect(r.pullStatus).toBe(PullStatus.FOUND);
  expect(r.msgFoundList[0]!.body!.toString()).toMatch(/^second-/);
  expect(Date.now() - startedAt).toBeLessThan(5000);
});

test('a held pull with a tag filter is not answered by a message of another tag', async () => {
  const { producer, consumer } = await setup();
  const topic = unique('T');
  const first = await producer.send({ topic, body: Buffer.from('x'), tags: 'A' });
  const mq = first.messageQueue;
  const held = consumer.pullBlockIfNotFound(mq, 'B', 1, 32);
  await new Promise((r) => setTimeout(r, 200));
  let settled = false;
  void held.then(
    () => (settled = true),
    () => (settled = true),
  );
  // Tag A messages to the same queue do not wake it (RocketMQ: hash mismatch at consume-queue level).
  for (let sentToQueue = 0, i = 0; sentToQueue < 1 && i < 32; i++) {
    const s = await producer.send({ topic, body: Buffer.from('a'), tags: 'A' });
    if (s.messageQueue.queueId === mq.queueId) sentToQueue++;
  }
  await new Promise((r) => setTimeout(r, 300));
  expect(settled).toBe(false);
  for (let i = 0; i < 32; i++) {
    const s = await producer.send({ topic, body: Buffer.from('b'), tags: 'B' });
    if (s.messageQueue.queueId === mq.queueId) break;
  }
  const r = await held;
  expect(r.msgFoundList.map((m) => m.properties?.TAGS)).toContain('B');
  expect(r.msgFoundList.every((m) => m.properties?.TAGS === 'B')).toBe(true);
});

test('a held pull aborted through its signal rejects quickly with AbortError; the client stays usable', async () => {
  const { producer, consumer } = await setup();
  const topic = unique('T');
  const first = await producer.send({ topic, body: Buffer.from('x') });
  const mq = first.messageQueue;
  const ac = new AbortController();
  const held = consumer.pullBlockIfNotFound(mq, '*', 1, 32, { signal: ac.signal });
  await new Promise((r) => setTimeout(r, 200));
  const abortedAt = Date.now();
  ac.abort();
  await expect(held).rejects.toBeInstanceOf(AbortError);
  await expect(held).rejects.toMatchObject({ code: 'ERR_ABORTED', name: 'AbortError' });
  expect(Date.now() - abortedAt).toBeLessThan(1000);
  // The same consumer (same connection pool) keeps working.
  const r = await consumer.pull(mq, '*', 0, 32);
  expect(r.pullStatus).toBe(PullStatus.FOUND);
  // An already aborted signal fails before anything is sent.
  await expect(consumer.pull(mq, '*', 0, 32, { signal: AbortSignal.abort() })).rejects.toBeInstanceOf(AbortError);
});

test('shutdown aborts a held pull at once', async () => {
  const { producer, consumer } = await setup();
  const topic = unique('T');
  const first = await producer.send({ topic, body: Buffer.from('x') });
  const held = consumer.pullBlockIfNotFound(first.messageQueue, '*', 1, 32).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 200));
  const t0 = Date.now();
  await consumer.shutdown();
  expect(await held).toBeInstanceOf(AbortError);
  expect(Date.now() - t0).toBeLessThan(2000);
});

test('a broker restart on the same port in the middle: calls fail retriably, then the client recovers', async () => {
  const { state, storePath, producer, consumer } = await setup();
  const topic = unique('T');
  const sr = await producer.send({ topic, body: Buffer.from('before') });
  const mq = sr.messageQueue;
  const port = Number(new URL(state.broker.address).port);
  await state.broker.shutdown();
  // While the broker is down: a retriable transport error, not a crash.
  const down = await consumer.pull(mq, '*', 0, 32).catch((e: unknown) => e);
  expect(down).toBeInstanceOf(TransportError);
  expect((down as TransportError).retriable).toBe(true);
  state.broker = await Broker.start({ storePath, port });
  // The next calls reconnect; the acknowledged message survived the restart.
  const r = await consumer.pull(mq, '*', 0, 32);
  expect(r.pullStatus).toBe(PullStatus.FOUND);
  expect(r.msgFoundList[0]!.body!.toString()).toBe('before');
  const after = await producer.send({ topic, body: Buffer.from('after') });
  expect(after.sendStatus).toBe('SEND_OK');
  const r2 = await consumer.pull(after.messageQueue, '*', after.queueOffset, 32);
  expect(r2.msgFoundList[0]!.body!.toString()).toBe('after');
});

test('a broker restart while a pull is held: the held pull fails retriably and the next one is served', async () => {
  const { state, storePath, producer, consumer } = await setup();
  const topic = unique('T');
  const sr = await producer.send({ topic, body: Buffer.from('x') });
  const mq = sr.messageQueue;
  const port = Number(new URL(state.broker.address).port);
  const held = consumer.pullBlockIfNotFound(mq, '*', 1, 32).catch((e: unknown) => e);
  await new Promise((r) => setTimeout(r, 200));
  await state.broker.shutdown();
  const outcome = await held;
  // The broker answers held pulls at shutdown (NO_NEW_MSG) or drops them (a retriable TransportError).
  if (outcome instanceof Error) expect((outcome as TransportError).retriable).toBe(true);
  else expect((outcome as { pullStatus: string }).pullStatus).toBe(PullStatus.NO_NEW_MSG);
  state.broker = await Broker.start({ storePath, port });
  const r = await consumer.pull(mq, '*', 0, 32);
  expect(r.pullStatus).toBe(PullStatus.FOUND);
});
