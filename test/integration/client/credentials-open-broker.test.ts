/**
 * Signed requests on a broker without ACL: the bundled broker takes the AccessKey, SecurityToken and
 * Signature fields and serves the request as if they were not there, over HTTP and over its remoting
 * port, as a RocketMQ broker without `aclEnable` does.
 */
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;
beforeAll(async () => {
  f = await startBroker({ remotingPort: 0 });
});
afterAll(() => f.close());

const credentials = { accessKey: 'appUser', secretKey: 'appSecret123', securityToken: 'sts-token' };

test.each(['endpoints', 'namesrvAddr'] as const)(
  'over %s: a signed send and a signed consumer work',
  async (via) => {
    const where =
      via === 'endpoints' ? { endpoints: f.broker.address } : { namesrvAddr: f.broker.remotingAddress ?? '' };
    const topic = `CredOpen_${via}`;
    const producer = new Producer({ ...where, producerGroup: `pg_${via}`, credentials });
    const consumer = new PushConsumer({
      ...where,
      consumerGroup: `cg_${via}`,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      credentials: async () => credentials,
    });
    const got = new Set<string>();
    try {
      await producer.start();
      for (let i = 0; i < 4; i++)
        expect((await producer.send({ topic, body: Buffer.from(`m${i}`) })).sendStatus).toBe('SEND_OK');
      consumer.subscribe(topic, '*').registerMessageListener((msgs) => {
        for (const m of msgs) got.add(m.body!.toString());
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      });
      await consumer.start();
      await waitFor(() => got.size === 4, 30_000);
    } finally {
      await consumer.shutdown();
      await producer.shutdown();
    }
  },
  60_000,
);
