import type { UndecodableMessageEvent } from '../../../src/client/consumer/push/push-consumer-events.js';
import { waitFor } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, uniq, useBrokerAndProducer } from './push-consumer-support.js';

/** A zlib header followed by bytes that do not inflate. */
const POISON_BODY = Buffer.concat([Buffer.from([0x78, 0x9c]), Buffer.from('this is not zlib data')]);

describe('one bad message never blocks a queue', () => {
  const env = useBrokerAndProducer(1);

  it('a stored body flagged compressed but not inflatable: the good messages around it are delivered, the bad one flagged', async () => {
    const topic = uniq('Poison');
    const before = await sendMany(env.producer, topic, 5, 'before', undefined, 1);
    // A record flagged compressed (sysFlag bit 0) whose body is not compressed. The broker's send path
    // refuses such a message now, so it is put into the store directly, as a damaged or older store
    // (or another broker) would hold it; the queue must still deliver what surrounds it. The body starts
    // with a zlib header (the store serves only bodies flagged compressed that start like compressed
    // data) and fails to inflate after it.
    const bad = await env.fx.broker.store.putMessage({
      topic,
      queueId: 0,
      flag: 0,
      body: POISON_BODY,
      properties: { UNIQ_KEY: 'POISON0000000000000000000000000', TAGS: 'x' },
      sysFlag: 1,
      bornTimestamp: Date.now(),
      bornHost: { ip: '127.0.0.1', port: 1 },
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
    expect(bad.status).toBe('PUT_OK');
    const after = await sendMany(env.producer, topic, 5, 'after', undefined, 1);

    const got = new Collector();
    const flagged: UndecodableMessageEvent[] = [];
    const c = newConsumer(env.fx.broker.address, uniq('gpoison')).subscribe(topic, '*');
    c.registerMessageListener(got.listener);
    c.events.on('undecodableMessage', (e) => flagged.push(e));
    await c.start();
    try {
      await waitFor(() => [...before, ...after].every((b) => got.distinct.has(b)), 10_000);
      expect(flagged).toHaveLength(1);
      expect(flagged[0]?.message.msgId).toBe('POISON0000000000000000000000000');
      const delivered = got.messages.find((m) => m.msgId === 'POISON0000000000000000000000000');
      expect(delivered?.properties?.DECODE_ERROR).toBeDefined();
      expect(delivered?.body).toEqual(POISON_BODY);
    } finally {
      await c.shutdown();
    }
  });
});
