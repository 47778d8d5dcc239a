import type { Producer } from '../../../src/client/producer.js';
import type { UndecodableMessageEvent } from '../../../src/client/push-consumer-events.js';
import { messageProperties2String } from '../../../src/common/codec/index.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, startProducer, uniq } from './push-consumer-support.js';

describe('one bad message never blocks a queue', () => {
  let fx: BrokerFixture;
  let producer: Producer;
  beforeAll(async () => {
    fx = await startBroker();
    producer = await startProducer(fx.broker.address, 1);
  });
  afterAll(async () => {
    await producer.shutdown();
    await fx.close();
  });

  it('a stored body flagged compressed but not inflatable: the good messages around it are delivered, the bad one flagged', async () => {
    const topic = uniq('Poison');
    const before = await sendMany(producer, topic, 5, 'before', undefined, 1);
    // A producer that set the compressed flag (sysFlag bit 0) on a body that is not compressed.
    const bad = await fx.client.call(
      'SEND_MESSAGE',
      {
        producerGroup: 'bad-producer',
        topic,
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: 1,
        queueId: 0,
        sysFlag: 1,
        bornTimestamp: Date.now(),
        flag: 0,
        properties: messageProperties2String({ UNIQ_KEY: 'POISON0000000000000000000000000', TAGS: 'x' }),
        reconsumeTimes: 0,
        unitMode: false,
      },
      Buffer.from('this is not zlib data'),
    );
    expect(bad.code).toBe(0);
    const after = await sendMany(producer, topic, 5, 'after', undefined, 1);

    const got = new Collector();
    const flagged: UndecodableMessageEvent[] = [];
    const c = newConsumer(fx.broker.address, uniq('gpoison')).subscribe(topic, '*');
    c.registerMessageListener(got.listener);
    c.events.on('undecodableMessage', (e) => flagged.push(e));
    await c.start();
    try {
      await waitFor(() => [...before, ...after].every((b) => got.distinct.has(b)), 10_000);
      expect(flagged).toHaveLength(1);
      expect(flagged[0]?.message.msgId).toBe('POISON0000000000000000000000000');
      const delivered = got.messages.find((m) => m.msgId === 'POISON0000000000000000000000000');
      expect(delivered?.properties?.DECODE_ERROR).toBeDefined();
      expect(delivered?.body?.toString()).toBe('this is not zlib data');
    } finally {
      await c.shutdown();
    }
  });
});
