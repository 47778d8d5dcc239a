/**
 * SimpleConsumer's own dead-letter step (what RocketMQ 5's brokers leave to the consumer): a message
 * received with more reconsumeTimes than the consumer's maxReconsumeTimes is moved to %DLQ%<group> with
 * CONSUMER_SEND_MSG_BACK and acknowledged, never returned. Here the bundled broker's group allows more
 * retries (retryMaxTimes 16) than the consumer does, so the consumer's step is the one that acts.
 */
import { Producer } from '../../../src/client/producer/producer.js';
import { SimpleConsumer, type ReceivedMessage } from '../../../src/index.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { uniq } from './push-consumer-support.js';

describe('SimpleConsumer maxReconsumeTimes', () => {
  let fx: BrokerFixture;
  let c: SimpleConsumer | undefined;
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0, popReviveIntervalMs: 50, dlqReadable: true });
  });
  afterAll(async () => {
    await c?.shutdown();
    await fx.close();
  });

  it('moves a message received past maxReconsumeTimes to %DLQ% and acknowledges it instead of returning it', async () => {
    const topic = uniq('PopDlqT');
    const group = uniq('PopDlqG');
    c = new SimpleConsumer({
      endpoints: fx.broker.address,
      consumerGroup: group,
      awaitDurationMs: 500,
      maxReconsumeTimes: 1,
    });
    c.subscribe(topic, '*');
    await c.start();
    const p = new Producer({ endpoints: fx.broker.address, defaultTopicQueueNums: 2 });
    await p.start();
    await p.send({ topic, body: Buffer.from('poison') });
    await p.shutdown();
    const attempts: number[] = [];
    const deadline = Date.now() + 20_000;
    while (attempts.length < 2 && Date.now() < deadline) {
      const got: ReceivedMessage[] = await c.receive(1, 300);
      for (const m of got) attempts.push(m.reconsumeTimes);
    }
    expect(attempts).toEqual([0, 1]);
    // Revived once more (reconsumeTimes 2 > 1): the consumer moves it to the DLQ and returns nothing.
    const after: ReceivedMessage[] = [];
    await waitFor(async () => {
      after.push(...(await c!.receive(1, 300)));
      return fx.broker.store.getMaxOffsetInQueue(`%DLQ%${group}`, 0) === 1;
    }, 20_000);
    expect(after).toEqual([]);
    // Acknowledged: it is not revived again.
    expect(await c.receive(1, 300)).toEqual([]);
    expect(await c.receive(1, 1000)).toEqual([]);
  }, 40_000);
});
