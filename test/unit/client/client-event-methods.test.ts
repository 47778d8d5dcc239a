/**
 * `on` / `once` / `off` on the Producer, the PushConsumer and the LitePullConsumer: KafkaJS's
 * `consumer.on(...)`, delegating to the client's typed `events` emitter (same names, same payloads).
 */
import { LitePullConsumer, Producer, PushConsumer, type MessageQueue } from '../../../src/index.js';

const endpoints = 'http://127.0.0.1:1'; // never contacted: nothing here starts a client
const mq: MessageQueue = { topic: 'T', brokerName: 'b', queueId: 0 };

test('PushConsumer: on, once and off deliver and stop the typed events, and chain', () => {
  const consumer = new PushConsumer({ consumerGroup: 'g', endpoints });
  const seen: string[] = [];
  const onRebalance = ({ topic, added }: { topic: string; added: MessageQueue[] }): void => {
    seen.push(`on ${topic} +${added.length}`);
  };
  expect(
    consumer
      .on('rebalance', onRebalance)
      .once('pullError', ({ retryInMs }) => void seen.push(`once pullError ${retryInMs}`)),
  ).toBe(consumer);
  // @ts-expect-error an event the PushConsumer does not have
  consumer.on('noSuchEvent', () => undefined);
  // @ts-expect-error the payload's type is the event's
  consumer.on('rebalance', (e: { retryInMs: number }) => void e);

  const rebalance = { topic: 'T', added: [mq], removed: [], assigned: [mq] };
  consumer.events.emit('rebalance', rebalance);
  consumer.events.emit('pullError', { messageQueue: mq, error: new Error('x'), retryInMs: 3000 });
  consumer.events.emit('pullError', { messageQueue: mq, error: new Error('x'), retryInMs: 3000 });
  expect(consumer.off('rebalance', onRebalance)).toBe(consumer);
  consumer.events.emit('rebalance', rebalance);
  expect(seen).toEqual(['on T +1', 'once pullError 3000']);
});

test('off without a listener removes every listener of the event', () => {
  const consumer = new PushConsumer({ consumerGroup: 'g', endpoints });
  let calls = 0;
  consumer.on('lag', () => void calls++).on('lag', () => void calls++);
  consumer.events.emit('lag', { consumerGroup: 'g', queues: [], total: 0 });
  consumer.off('lag');
  consumer.events.emit('lag', { consumerGroup: 'g', queues: [], total: 0 });
  expect(calls).toBe(2);
});

test('Producer: on, once and off for sendError', () => {
  const producer = new Producer({ producerGroup: 'pg', endpoints });
  const attempts: number[] = [];
  const fn = (_err: unknown, info: { attempt: number }): void => void attempts.push(info.attempt);
  expect(producer.on('sendError', fn)).toBe(producer);
  producer.once('sendError', (_err, info) => void attempts.push(-info.attempt));
  producer.events.emit('sendError', new Error('busy'), { topic: 'T', messageQueue: mq, attempt: 1 });
  producer.off('sendError', fn);
  producer.events.emit('sendError', new Error('busy'), { topic: 'T', messageQueue: mq, attempt: 2 });
  expect(attempts).toEqual([1, -1]);
});

test('LitePullConsumer: on, once and off for its own events', () => {
  const consumer = new LitePullConsumer({ consumerGroup: 'g', endpoints });
  const seen: string[] = [];
  const fn = ({ added }: { added: MessageQueue[] }): void => void seen.push(`assigned +${added.length}`);
  expect(
    consumer.on('assignmentChanged', fn).once('offsetPersisted', ({ offset }) => void seen.push(`offset ${offset}`)),
  ).toBe(consumer);
  // @ts-expect-error the LitePullConsumer has no `rebalance` event (it is `assignmentChanged`)
  consumer.on('rebalance', () => undefined);
  consumer.events.emit('assignmentChanged', { topic: 'T', added: [mq], removed: [], assigned: [mq] });
  consumer.events.emit('offsetPersisted', { messageQueue: mq, offset: 7 });
  consumer.events.emit('offsetPersisted', { messageQueue: mq, offset: 8 });
  consumer.off('assignmentChanged', fn);
  consumer.events.emit('assignmentChanged', { topic: 'T', added: [mq], removed: [], assigned: [mq] });
  expect(seen).toEqual(['assigned +1', 'offset 7']);
});
