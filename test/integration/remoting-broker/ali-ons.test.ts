/**
 * ali-ons (a pure-JavaScript RocketMQ client nobody here wrote) consuming from the bundled broker over
 * its remoting port, which it uses as its name server: a tag subscription, long polling, offsets
 * committed to the broker, and a handler that throws retried through `%RETRY%<group>`.
 */
import { createRequire } from 'node:module';
import { ResponseCode } from '../../../src/protocol/index.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { uniqueName } from '../../support/broker-client.js';
import { describeUnless } from '../../support/rocketmq-kit.js';

interface OnsMessage {
  topic: string;
  tags: string;
  body: Buffer;
  msgId: string;
  reconsumeTimes: number;
}
interface OnsConsumer {
  subscribe(topic: string, expression: string, handler: (msg: OnsMessage) => Promise<void>): void;
  ready(): Promise<void>;
  close(): Promise<void>;
  on(event: 'error', listener: (err: Error) => void): void;
}
type OnsConsumerClass = new (options: Record<string, unknown>) => OnsConsumer;

const require = createRequire(import.meta.url);
let Consumer: OnsConsumerClass | undefined;
let missing = '';
try {
  // ali-ons's scheduled loops wait with timers (up to 30 s) that outlive close() and kept Jest's worker
  // process alive after the file ended. Its sleep is loaded first, with timers that do not hold the process.
  const onsRequire = createRequire(require.resolve('ali-ons'));
  onsRequire('mz-modules/sleep');
  const sleepModule = onsRequire.cache[onsRequire.resolve('mz-modules/sleep')];
  if (!sleepModule) throw new Error('ali-ons: its sleep module was not loaded through require');
  sleepModule.exports = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());
  Consumer = (require('ali-ons') as { Consumer: OnsConsumerClass }).Consumer;
} catch (e) {
  missing = (e as Error).message;
}

const quietLogger = { info() {}, warn() {}, error() {}, debug() {} };
/** Every delay level 200 ms, so a retry comes back quickly. */
const FAST_DELAY_LEVELS = Array.from({ length: 18 }, () => '200ms').join(' ');

describeUnless(
  Consumer ? null : `the ali-ons package is not installed (${missing})`,
  'ali-ons against the bundled broker (remoting port as name server)',
  () => {
    let fx: BrokerFixture;

    beforeAll(async () => {
      fx = await startBroker({ remotingPort: 0, store: { messageDelayLevel: FAST_DELAY_LEVELS } });
    });
    afterAll(async () => {
      await fx?.close();
    });

    test('consumes a tag subscription with long polling, commits offsets, retries a thrown handler via %RETRY%', async () => {
      const topic = uniqueName('OnsT');
      const group = uniqueName('OnsG');
      // The topic exists before the consumer starts (as with any RocketMQ cluster); 2 queues.
      const created = await fx.client.call('UPDATE_AND_CREATE_TOPIC', {
        topic,
        readQueueNums: 2,
        writeQueueNums: 2,
        perm: 6,
      });
      expect(created.code).toBe(ResponseCode.SUCCESS);
      for (let i = 0; i < 6; i++) {
        const tags = i % 2 === 0 ? 'TagA' : 'TagB';
        expect((await fx.client.send(topic, `m${i}`, { tags, queueId: i % 2 })).code).toBe(ResponseCode.SUCCESS);
      }

      const deliveries: Array<{ body: string; topic: string; tags: string; reconsumeTimes: number }> = [];
      let failedOnce = false;
      const errors: Error[] = [];
      const consumer = new (Consumer as OnsConsumerClass)({
        httpclient: {},
        nameSrv: fx.broker.remotingAddress,
        consumerGroup: group,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        logger: quietLogger,
        persistent: false,
        maxReconsumeTimes: 3,
      });
      consumer.on('error', (e) => errors.push(e));
      consumer.subscribe(topic, 'TagA', async (msg) => {
        const body = msg.body.toString();
        deliveries.push({ body, topic: msg.topic, tags: msg.tags, reconsumeTimes: msg.reconsumeTimes });
        if (body === 'm2' && !failedOnce) {
          failedOnce = true;
          throw new Error('handler failure on purpose');
        }
      });
      try {
        await consumer.ready();
        const bodies = (): string[] => [...new Set(deliveries.map((d) => d.body))].sort();
        await waitFor(() => bodies().length === 3 && deliveries.length >= 4, 25_000).catch(() => {
          throw new Error(
            `deliveries: ${JSON.stringify(deliveries)}; errors: ${errors.map((e) => e.message).join('; ')}`,
          );
        });
        expect(bodies()).toEqual(['m0', 'm2', 'm4']);
        // The thrown message came back through %RETRY%<group>, with its original topic restored.
        const retried = deliveries.filter((d) => d.body === 'm2');
        expect(retried.map((d) => d.reconsumeTimes)).toEqual([0, 1]);
        expect(retried.every((d) => d.topic === topic && d.tags === 'TagA')).toBe(true);
        expect(deliveries.some((d) => d.tags === 'TagB')).toBe(false);

        // Long polling: the consumer's pulls are held; a new message is delivered well before the 15 s hold ends.
        const sentAt = Date.now();
        expect((await fx.client.send(topic, 'late', { tags: 'TagA', queueId: 1 })).code).toBe(ResponseCode.SUCCESS);
        await waitFor(() => deliveries.some((d) => d.body === 'late'), 10_000);
        expect(Date.now() - sentAt).toBeLessThan(5_000);
      } finally {
        await consumer.close();
      }
      // close() committed the offsets: every queue of the topic is consumed to its end.
      for (const queueId of [0, 1]) {
        const max = await fx.client.call('GET_MAX_OFFSET', { topic, queueId });
        const committed = await fx.client.call('QUERY_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId });
        expect(committed.code).toBe(ResponseCode.SUCCESS);
        expect(committed.header.offset).toBe(max.header.offset);
      }
    }, 60_000);
  },
);
