/**
 * AdminClient.resetOffsetByTime on a live group over RocketMQ's TCP remoting: the broker sends
 * RESET_CONSUMER_CLIENT_OFFSET to each member (RocketMQ: Broker2Client.resetOffset), and a running push
 * consumer and a running lite pull consumer consume again from the reset point at once, not after a held
 * pull has ended and their next pull's answer has told them. A member that is not ours gets the request
 * too, and nothing breaks.
 */
import { AdminClient, LitePullConsumer, Producer } from '../../../src/index.js';
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import { countingConsumer } from '../../support/admin-fixtures.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { heartbeatBody } from '../../support/remoting-attacks.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';
import { bodyOf } from './lite-pull-support.js';

/** Well under the ~20 s a consumer took to learn of a reset from its pulls' answers. */
const PROMPT_MS = 5000;

let f: BrokerFixture;
let namesrvAddr: string;
let admin: AdminClient;
let producer: Producer;

beforeAll(async () => {
  f = await startBroker({ remotingPort: 0 });
  namesrvAddr = f.broker.remotingAddress ?? '';
  admin = new AdminClient({ namesrvAddr });
  producer = new Producer({ producerGroup: uniqueName('p'), namesrvAddr });
  await producer.start();
});
afterAll(async () => {
  await producer?.shutdown();
  await admin?.shutdown();
  await f?.close();
});

async function topicWithMessages(prefix: string, count: number): Promise<string> {
  const topic = uniqueName(prefix);
  await admin.createTopic(topic, { queueNums: 2 });
  for (let i = 0; i < count; i++) await producer.send({ topic, tags: 'A', body: Buffer.from(`m${i}`) });
  return topic;
}

test('a running push consumer consumes again from the reset point at once', async () => {
  const topic = await topicWithMessages('ResetPushT', 6);
  const group = uniqueName('reset_push');
  const { consumer, consumed } = await countingConsumer({ namesrvAddr }, group, topic);
  try {
    await waitFor(() => consumed() >= 6, 20_000);
    await waitFor(async () => (await admin.consumerProgress(group, topic)).diffTotal === 0, 20_000);
    const before = consumed();
    expect((await admin.resetOffsetByTime(group, topic, 0)).map((r) => r.offset)).toEqual([0, 0]);
    await waitFor(() => consumed() >= before + 6, PROMPT_MS);
    // It goes on from there: the commits after the reset are its own again.
    await waitFor(async () => (await admin.consumerProgress(group, topic)).diffTotal === 0, 10_000);
  } finally {
    await consumer.shutdown();
  }
}, 60_000);

test('a running lite pull consumer (subscribe) polls again from the reset point at once', async () => {
  const topic = await topicWithMessages('ResetLiteT', 6);
  const group = uniqueName('reset_lite');
  const consumer = new LitePullConsumer({
    namesrvAddr,
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    pollTimeoutMs: 200,
  });
  consumer.subscribe(topic, '*');
  await consumer.start();
  try {
    const polled: string[] = [];
    const pollFor = async (n: number, timeoutMs: number): Promise<void> => {
      const deadline = Date.now() + timeoutMs;
      while (polled.length < n) {
        if (Date.now() > deadline) throw new Error(`polled ${polled.length} of ${n} in time`);
        for (const m of await consumer.poll({ timeoutMs: 100 })) polled.push(bodyOf(m));
      }
    };
    await pollFor(6, 20_000);
    await consumer.commit();
    await waitFor(async () => (await admin.consumerProgress(group, topic)).diffTotal === 0, 20_000);
    expect((await admin.resetOffsetByTime(group, topic, 0)).map((r) => r.offset)).toEqual([0, 0]);
    await pollFor(12, PROMPT_MS);
    expect(polled.slice(6).sort()).toEqual(polled.slice(0, 6).sort());
  } finally {
    await consumer.shutdown();
  }
}, 60_000);

test('a member that is not ours gets RESET_CONSUMER_CLIENT_OFFSET and the reset goes through', async () => {
  const topic = await topicWithMessages('ResetRawT', 2);
  const group = uniqueName('reset_raw');
  // The group needs offsets on the topic to be reset.
  for (const queueId of [0, 1])
    await f.client.call(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: group, topic, queueId, commitOffset: 1 });
  const raw = await RemotingTestClient.connect(namesrvAddr);
  try {
    const hb = await raw.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('10.0.0.9@raw', group, topic) });
    expect(hb.code).toBe(ResponseCode.SUCCESS);
    expect((await admin.resetOffsetByTime(group, topic, 0)).map((r) => r.offset)).toEqual([0, 0]);
    await waitFor(() => raw.pushed.some((c) => c.code === RequestCode.RESET_CONSUMER_CLIENT_OFFSET), PROMPT_MS);
    const reset = raw.pushed.find((c) => c.code === RequestCode.RESET_CONSUMER_CLIENT_OFFSET);
    expect(reset?.extFields).toMatchObject({ topic, group, timestamp: '0', isForce: 'true' });
    expect((reset?.flag ?? 0) & 2).toBe(2);
    expect(String(reset?.body)).toContain('"offsetTable"');
    // The broker goes on serving the member.
    const again = await raw.request(RequestCode.HEART_BEAT, null, {
      body: heartbeatBody('10.0.0.9@raw', group, topic),
    });
    expect(again.code).toBe(ResponseCode.SUCCESS);
  } finally {
    await raw.close();
  }
});
