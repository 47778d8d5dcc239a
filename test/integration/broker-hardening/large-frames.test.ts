/**
 * Large request frames over the remoting listener. A frame longer than one socket read is gathered, while
 * it arrives, into a slot of the listener's buffer pool, which later frames reuse once their request is
 * answered: sends of bodies between 64 KiB and 1 MiB, several on one connection at once and then one after
 * another, must each be stored byte for byte; a large request of another kind keeps a copy of its own body
 * and is served as well.
 */
import { randomBytes } from 'node:crypto';
import { Producer } from '../../../src/index.js';
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

const KiB = 1024;

let fx: BrokerFixture | undefined;
let producer: Producer | undefined;
afterEach(async () => {
  await producer?.shutdown();
  producer = undefined;
  await fx?.close();
  fx = undefined;
});

test('sends of 64 KiB to 1 MiB bodies, concurrent and one after another, are stored byte for byte', async () => {
  fx = await startBroker({ remotingPort: 0 });
  const topic = uniqueName('LargeFrameT');
  producer = new Producer({
    namesrvAddr: fx.broker.remotingAddress ?? '',
    producerGroup: uniqueName('LargeFrameP'),
    compressMsgBodyOverBytes: 8 * 1024 * KiB, // the bodies travel as they are
    autoBatch: false,
  });
  await producer.start();
  const sizes = [65 * KiB, 100 * KiB, 200 * KiB, 513 * KiB, 1000 * KiB];
  const bodies = [...sizes, ...sizes, ...sizes].map((n) => randomBytes(n));
  // Concurrent: many frames in flight on one connection, each in a slot of its own.
  const concurrent = await Promise.all(bodies.map((body) => producer!.send({ topic, body })));
  // One after another: each frame takes a slot the previous one gave back.
  const sequential = [];
  for (const body of bodies) sequential.push(await producer.send({ topic, body }));
  const sent = [...concurrent, ...sequential];
  const expected = [...bodies, ...bodies];
  for (const [i, r] of sent.entries()) {
    const stored = await fx.broker.store.lookMessageByMsgId(r.offsetMsgId);
    expect(stored?.body?.equals(expected[i] as Buffer)).toBe(true);
  }
});

test('a large request of another kind is served with its own body', async () => {
  fx = await startBroker({ remotingPort: 0 });
  const group = uniqueName('LargeFrameG');
  // A heartbeat naming enough subscriptions to take several socket reads.
  const subscriptionDataSet = Array.from({ length: 900 }, (_, i) => ({
    topic: `${uniqueName('LargeFrameSubT')}_${i}`,
    subString: '*',
    tagsSet: [],
    codeSet: [],
    subVersion: Date.now(),
    expressionType: 'TAG',
    classFilterMode: false,
  }));
  const heartbeat = {
    clientID: uniqueName('LargeFrameC'),
    producerDataSet: [],
    consumerDataSet: [
      {
        groupName: group,
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        subscriptionDataSet,
        unitMode: false,
      },
    ],
  };
  const body = Buffer.from(JSON.stringify(heartbeat));
  expect(body.length).toBeGreaterThan(64 * KiB);
  const c = await RemotingTestClient.connect(fx.broker.remotingAddress as string);
  try {
    for (let i = 0; i < 3; i++) {
      const r = await c.request(RequestCode.HEART_BEAT, {}, { body });
      expect(r.code).toBe(ResponseCode.SUCCESS);
    }
    const info = fx.broker.consumerManager.getConsumerGroupInfo(group);
    expect(info?.getSubscribeTopics().length).toBe(subscriptionDataSet.length);
  } finally {
    await c.close();
  }
});
