/**
 * AdminClient and the admin CLI with `namesrvAddr` (mqadmin's `-n`), against the bundled broker's
 * remoting port, which answers as a NameServer and as a broker over RocketMQ's TCP remoting: the list
 * of brokers comes from the NameServer, and the figures match what a producer and a push consumer —
 * both over namesrvAddr too — produced and consumed.
 */
import { AdminClient, InvalidArgumentError, Producer } from '../../../src/index.js';
import { countingConsumer, rocketmq } from '../../support/admin-fixtures.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;
let namesrvAddr: string;
let admin: AdminClient;

beforeAll(async () => {
  f = await startBroker({ remotingPort: 0, flushConsumerOffsetIntervalMs: 60_000 });
  namesrvAddr = f.broker.remotingAddress ?? '';
  admin = new AdminClient({ namesrvAddr });
});
afterAll(async () => {
  await admin.shutdown();
  await f.close();
});

test('exactly one of endpoints and namesrvAddr; no access token with namesrvAddr', () => {
  expect(() => new AdminClient({})).toThrow(InvalidArgumentError);
  expect(() => new AdminClient({ endpoints: f.broker.address, namesrvAddr })).toThrow(/namesrvAddr/);
  expect(() => new AdminClient({ namesrvAddr: 'no-port' })).toThrow(/host:port/);
  expect(() => new AdminClient({ namesrvAddr, accessToken: 't' })).toThrow(/accessToken/);
});

test('the brokers come from the NameServer; topics are created, listed, read and deleted there', async () => {
  expect(await admin.brokerAddresses()).toEqual([namesrvAddr]);
  const topic = uniqueName('NsAdminT');
  await admin.createTopic(topic, { queueNums: 2 });
  expect(await admin.topicList()).toContain(topic);
  expect((await admin.topicStatus(topic)).map((r) => [r.mq.queueId, r.minOffset, r.maxOffset])).toEqual([
    [0, 0, 0],
    [1, 0, 0],
  ]);
  await admin.deleteTopic(topic);
  expect(await admin.topicList()).not.toContain(topic);
});

test('a NameServer that cannot be reached is skipped for the next one', async () => {
  const failover = new AdminClient({ namesrvAddr: `127.0.0.1:1;${namesrvAddr}`, requestTimeoutMs: 2000 });
  try {
    expect(await failover.brokerAddresses()).toEqual([namesrvAddr]);
  } finally {
    await failover.shutdown();
  }
});

test('progress, connections, queries and reset over namesrvAddr, and the CLI with -n', async () => {
  const topic = uniqueName('NsAdminFlow');
  const group = uniqueName('ns_admin_group');
  await admin.createTopic(topic, { queueNums: 2 });
  const producer = new Producer({ producerGroup: uniqueName('p'), namesrvAddr });
  await producer.start();
  const sent = [];
  for (let i = 0; i < 6; i++)
    sent.push(await producer.send({ topic, tags: 'A', keys: `order-${i}`, body: Buffer.from(`m${i}`) }));
  const { consumer, consumed } = await countingConsumer({ namesrvAddr }, group, topic);
  try {
    await waitFor(() => consumed() >= 6, 20_000);
    await waitFor(async () => (await admin.consumerProgress(group, topic)).diffTotal === 0, 20_000);
    const progress = await admin.consumerProgress(group, topic);
    expect([progress.brokerOffsetTotal, progress.consumerOffsetTotal]).toEqual([6, 6]);

    const conn = await admin.consumerConnection(group);
    expect(conn.connections.map((c) => c.clientId)).toEqual([consumer.clientId]);
    expect(conn.subscriptions.find((s) => s.topic === topic)?.subString).toBe('A');

    expect((await admin.queryMsgByKey(topic, 'order-4')).map((m) => String(m.body))).toEqual(['m4']);
    const first = sent[0];
    if (!first?.offsetMsgId) throw new Error('the send result has no offset message id');
    expect(String((await admin.queryMsgById(first.offsetMsgId)).body)).toBe('m0');
    expect(String((await admin.queryMsgById(first.msgId, topic)).body)).toBe('m0');

    // the CLI, as mqadmin is called: -n host:port
    const cli = await rocketmq(['consumerProgress', '-n', namesrvAddr, '-g', group, '-t', topic, '--json']);
    expect(cli.stderr).toBe('');
    expect(cli.code).toBe(0);
    expect(JSON.parse(cli.stdout)).toMatchObject({ group, brokerOffsetTotal: 6, consumerOffsetTotal: 6, diffTotal: 0 });
    const list = await rocketmq(['topicList', '-n', namesrvAddr]);
    expect(list.code).toBe(0);
    expect(list.stdout.split('\n')).toContain(topic);
    const both = await rocketmq(['topicList', '-n', namesrvAddr, '--endpoints', f.broker.address]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/not both/);

    const before = consumed();
    expect((await admin.resetOffsetByTime(group, topic, 0)).map((r) => r.offset)).toEqual([0, 0]);
    await waitFor(() => consumed() >= before + 6, 30_000);
  } finally {
    await consumer.shutdown();
    await producer.shutdown();
  }
}, 90_000);
