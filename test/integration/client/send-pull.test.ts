/**
 * Producer and PullConsumer against the real broker over HTTP: send then pull, every PullStatus, tag
 * and SQL92 filters end to end, offsets, and the queue metadata calls.
 */
import { randomUUID } from 'node:crypto';
import { MessageSelector, Producer, PullConsumer, PullStatus, type MessageQueue } from '../../../src/index.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let fx: BrokerFixture;
let producer: Producer;
let consumer: PullConsumer;

const unique = (p: string): string => `${p}_${randomUUID().replaceAll('-', '').slice(0, 12)}`;

beforeAll(async () => {
  fx = await startBroker({ enablePropertyFilter: true });
  producer = new Producer({ endpoints: fx.broker.address });
  consumer = new PullConsumer({ endpoints: fx.broker.address, consumerGroup: unique('cg') });
  await producer.start();
  await consumer.start();
});

afterAll(async () => {
  await consumer?.shutdown();
  await producer?.shutdown();
  await fx?.close();
});

/** Sends `n` messages to one queue of `topic` (the first send auto-creates the topic). */
async function sendAll(
  topic: string,
  bodies: Array<{ body: string; tags?: string; properties?: Record<string, string> }>,
) {
  const results = [];
  for (const b of bodies)
    results.push(await producer.send({ topic, body: Buffer.from(b.body), tags: b.tags, properties: b.properties }));
  return results;
}

/** Pulls `mq` from `offset` until `count` messages are collected (NO_MATCHED_MSG / FOUND loops). */
async function pullUntil(mq: MessageQueue, selector: MessageSelector | string, count: number, offset = 0) {
  const out = [];
  let next = offset;
  for (let i = 0; i < 50 && out.length < count; i++) {
    const r = await consumer.pull(mq, selector, next, 32);
    out.push(...r.msgFoundList);
    next = r.nextBeginOffset;
    if (r.pullStatus === PullStatus.NO_NEW_MSG) break;
  }
  return { messages: out, next };
}

test('send then pull: the message comes back with its body, tags, keys, user properties and msgId', async () => {
  const topic = unique('T');
  const sr = await producer.send({
    topic,
    body: Buffer.from('hello'),
    tags: 'TagA',
    keys: ['k1', 'k2'],
    properties: { color: 'red' },
  });
  expect(sr.sendStatus).toBe('SEND_OK');
  expect(sr.msgId).toMatch(/^[0-9A-F]{32}$/);
  expect(sr.offsetMsgId).toMatch(/^[0-9A-F]{32}$/);
  expect(sr.messageQueue.topic).toBe(topic);
  const mq = sr.messageQueue;
  const r = await consumer.pull(mq, '*', sr.queueOffset, 32);
  expect(r.pullStatus).toBe(PullStatus.FOUND);
  expect(r.msgFoundList).toHaveLength(1);
  const m = r.msgFoundList[0]!;
  expect(m.body?.toString()).toBe('hello');
  expect(m.msgId).toBe(sr.msgId);
  expect(m.properties?.TAGS).toBe('TagA');
  expect(m.properties?.KEYS).toBe('k1 k2');
  expect(m.properties?.color).toBe('red');
  expect(m.properties?.MIN_OFFSET).toBe(String(r.minOffset));
  expect(m.properties?.MAX_OFFSET).toBe(String(r.maxOffset));
  expect(m.brokerName).toBe(mq.brokerName);
  expect(m.queueOffset).toBe(sr.queueOffset);
  expect(r.nextBeginOffset).toBe(sr.queueOffset + 1);
});

test('a large body is compressed on the wire and decompressed on pull', async () => {
  const topic = unique('T');
  const body = Buffer.alloc(64 * 1024, 'abcdefgh');
  const sr = await producer.send({ topic, body });
  const r = await consumer.pull(sr.messageQueue, '*', sr.queueOffset, 1);
  expect(r.msgFoundList[0]!.body!.equals(body)).toBe(true);
});

test('every PullStatus: FOUND, NO_NEW_MSG, NO_MATCHED_MSG via a tag filter, OFFSET_ILLEGAL', async () => {
  const topic = unique('T');
  const [sr] = await sendAll(topic, [{ body: 'a', tags: 'TagA' }]);
  const mq = sr!.messageQueue;
  expect((await consumer.pull(mq, '*', 0, 32)).pullStatus).toBe(PullStatus.FOUND);
  // RocketMQ: OFFSET_OVERFLOW_ONE (offset == max) answers PULL_NOT_FOUND.
  const none = await consumer.pull(mq, '*', 1, 32);
  expect(none.pullStatus).toBe(PullStatus.NO_NEW_MSG);
  expect(none.msgFoundList).toEqual([]);
  const nomatch = await consumer.pull(mq, 'TagB', 0, 32);
  expect(nomatch.pullStatus).toBe(PullStatus.NO_MATCHED_MSG);
  expect(nomatch.nextBeginOffset).toBe(1);
  // RocketMQ: OFFSET_OVERFLOW_BADLY answers PULL_OFFSET_MOVED with nextBeginOffset = maxOffset.
  const illegal = await consumer.pull(mq, '*', 100, 32);
  expect(illegal.pullStatus).toBe(PullStatus.OFFSET_ILLEGAL);
  expect(illegal.nextBeginOffset).toBe(1);
});

test('tag filter end to end: only the subscribed tags come back, untagged messages are dropped', async () => {
  const topic = unique('T');
  const srs = await sendAll(topic, [
    { body: '1', tags: 'TagA' },
    { body: '2', tags: 'TagB' },
    { body: '3' },
    { body: '4', tags: 'TagC' },
    { body: '5', tags: 'TagA' },
  ]);
  const byQueue = new Map<number, MessageQueue>();
  for (const s of srs) byQueue.set(s.messageQueue.queueId, s.messageQueue);
  const got: string[] = [];
  for (const mq of byQueue.values()) {
    const { messages } = await pullUntil(mq, MessageSelector.byTag('TagA || TagC'), 5);
    got.push(...messages.map((m) => m.body!.toString()));
  }
  expect(got.sort()).toEqual(['1', '4', '5']);
});

test('SQL92 filter end to end', async () => {
  const topic = unique('T');
  const srs = await sendAll(topic, [
    { body: '1', properties: { a: '1', region: 'eu' } },
    { body: '2', properties: { a: '7', region: 'us' } },
    { body: '3', properties: { a: '9', region: 'eu' } },
    { body: '4' },
  ]);
  const queues = new Map(srs.map((s) => [s.messageQueue.queueId, s.messageQueue]));
  const got: string[] = [];
  for (const mq of queues.values()) {
    const { messages } = await pullUntil(mq, MessageSelector.bySql("a > 5 AND region = 'eu'"), 4);
    got.push(...messages.map((m) => m.body!.toString()));
  }
  expect(got).toEqual(['3']);
});

test('fetchSubscribeMessageQueues is sorted; min/max offsets; consumer offsets round-trip', async () => {
  const topic = unique('T');
  const srs = await sendAll(topic, [{ body: 'x' }, { body: 'y' }, { body: 'z' }]);
  const mqs = await consumer.fetchSubscribeMessageQueues(topic);
  expect(mqs.length).toBeGreaterThan(0);
  expect(mqs.map((q) => q.queueId)).toEqual([...mqs.map((q) => q.queueId)].sort((a, b) => a - b));
  const mq = srs[0]!.messageQueue;
  const count = srs.filter((s) => s.messageQueue.queueId === mq.queueId).length;
  expect(await consumer.minOffset(mq)).toBe(0);
  expect(await consumer.maxOffset(mq)).toBe(count);
  expect(await consumer.searchOffset(mq, 0)).toBe(0);
  await consumer.updateConsumeOffset(mq, 1);
  expect(await consumer.fetchConsumeOffset(mq)).toBe(1);
});

test('fetchConsumeOffset is -1 when the group has no offset for an empty queue', async () => {
  const topic = unique('T');
  const [sr] = await sendAll(topic, [{ body: 'x' }]);
  const mqs = await consumer.fetchSubscribeMessageQueues(topic);
  const empty = mqs.find((q) => q.queueId !== sr!.messageQueue.queueId);
  expect(empty).toBeDefined();
  expect(await consumer.fetchConsumeOffset(empty!)).toBe(-1);
});

test('sendBatch stores the messages in order on one queue', async () => {
  const topic = unique('T');
  await producer.send({ topic, body: Buffer.from('create') });
  const sr = await producer.sendBatch([
    { topic, body: Buffer.from('b1'), tags: 'x' },
    { topic, body: Buffer.from('b2') },
    { topic, body: Buffer.from('b3') },
  ]);
  expect(sr.msgId.split(',')).toHaveLength(3);
  const r = await consumer.pull(sr.messageQueue, '*', sr.queueOffset, 32);
  expect(r.msgFoundList.map((m) => m.body!.toString())).toEqual(['b1', 'b2', 'b3']);
  expect(r.msgFoundList.map((m) => m.msgId)).toEqual(sr.msgId.split(','));
});

test('autoBatch: sends made together are stored together; each result names its own stored message', async () => {
  const topic = unique('T');
  await producer.send({ topic, body: Buffer.from('create') });
  const results = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      producer.send({ topic, body: Buffer.from(`auto-${i}`), tags: `t${i % 2}`, keys: `k${i}` }),
    ),
  );
  // One turn's sends went as one batch: one queue, consecutive offsets.
  expect(new Set(results.map((r) => r.messageQueue.queueId)).size).toBe(1);
  expect(results.map((r) => r.queueOffset - results[0]!.queueOffset)).toEqual([0, 1, 2, 3, 4, 5]);
  const r = await consumer.pull(results[0]!.messageQueue, '*', results[0]!.queueOffset, 32);
  expect(r.msgFoundList.map((m) => m.body!.toString())).toEqual([0, 1, 2, 3, 4, 5].map((i) => `auto-${i}`));
  r.msgFoundList.forEach((m, i) => {
    expect(m.msgId).toBe(results[i]!.msgId);
    expect(m.queueOffset).toBe(results[i]!.queueOffset);
    expect(m.properties).toMatchObject({ TAGS: `t${i % 2}`, KEYS: `k${i}` });
  });
  const fourth = await consumer.viewMessage(results[4]!.offsetMsgId);
  expect(fourth.body!.toString()).toBe('auto-4');
});

test('viewMessage finds a message by its offset message id', async () => {
  const topic = unique('T');
  const sr = await producer.send({ topic, body: Buffer.from('view me') });
  const m = await consumer.viewMessage(sr.offsetMsgId);
  expect(m.body!.toString()).toBe('view me');
  expect(m.topic).toBe(topic);
});

test('bad options and bad arguments are rejected with errors naming them; a bad SQL selector fails before any call', async () => {
  const { InvalidArgumentError } = await import('../../../src/index.js');
  const { Sql92ParseError } = await import('../../../src/filter/index.js');
  expect(
    () => new PullConsumer({ endpoints: fx.broker.address, consumerGroup: 'g', consumerPullTimeoutMs: -5 }),
  ).toThrow(/consumerPullTimeoutMs/);
  expect(() => new Producer({ endpoints: 'not a url' })).toThrow(InvalidArgumentError);
  const topic = unique('T');
  const sr = await producer.send({ topic, body: Buffer.from('x') });
  await expect(consumer.pull(sr.messageQueue, '*', -1, 32)).rejects.toMatchObject({ field: 'offset' });
  await expect(consumer.pull(sr.messageQueue, '*', 0, 0)).rejects.toMatchObject({ field: 'maxNums' });
  expect(() => MessageSelector.bySql('a >')).toThrow(Sql92ParseError);
  await expect(producer.send({ topic: 'bad/topic', body: Buffer.from('x') })).rejects.toMatchObject({
    field: 'message.topic',
  });
});
