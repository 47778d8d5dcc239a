/**
 * The admin CLI (`rocketmq-ts topicList ...`, mqadmin's names and flags) from the compiled package,
 * against an in-process broker fed by a real producer: tables by default, one JSON document with
 * --json, non-zero exit codes on failure.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Producer } from '../../../src/index.js';
import { rocketmq } from '../../support/admin-fixtures.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

let f: BrokerFixture;
const topic = uniqueName('CliT');
const sent: Array<{ msgId: string }> = [];

beforeAll(async () => {
  f = await startBroker();
  const producer = new Producer({ producerGroup: uniqueName('p'), endpoints: f.broker.address });
  await producer.start();
  try {
    for (let i = 0; i < 4; i++)
      sent.push(await producer.send({ topic, keys: `k${i}`, tags: 'A', body: Buffer.from(`b${i}`) }));
  } finally {
    await producer.shutdown();
  }
});
afterAll(async () => {
  await f.close();
});

const ep = (): string[] => ['--endpoints', f.broker.address];

test('--version, topicList, updateTopic, topicStatus, deleteTopic', async () => {
  const t = uniqueName('CliNew');
  const [created, status, jsonStatus, version] = await Promise.all([
    rocketmq(['updateTopic', '-t', t, '-r', '2', '-w', '2', ...ep()]),
    rocketmq(['topicStatus', '-t', topic, ...ep()]),
    rocketmq(['topicStatus', '-t', topic, '--json', ...ep()]),
    rocketmq(['--version']),
  ]);
  expect(created.code).toBe(0);
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  expect(version.stdout.trim()).toBe(pkg.version);
  const list = JSON.parse((await rocketmq(['topicList', '--json', ...ep()])).stdout) as { topicList: string[] };
  expect(list.topicList).toEqual(expect.arrayContaining([t, topic]));
  expect(status.code).toBe(0);
  expect(status.stdout).toMatch(/#Broker Name\s+#QID\s+#Min Offset\s+#Max Offset/);
  const json = JSON.parse(jsonStatus.stdout) as { queues: Array<{ maxOffset: number }> };
  expect(json.queues.reduce((s, q) => s + q.maxOffset, 0)).toBe(4);
  expect((await rocketmq(['deleteTopic', '-t', t, ...ep()])).code).toBe(0);
  const gone = await rocketmq(['topicStatus', '-t', t, ...ep()]);
  expect(gone.code).toBe(1);
  expect(gone.stderr).toMatch(/not exist/);
}, 60_000);

test('consumerProgress, resetOffsetByTime, consumerConnection, queries and usage errors', async () => {
  const group = uniqueName('cli_g');
  const first = sent[0];
  if (!first) throw new Error('nothing sent');
  // child processes start slowly on a busy machine: run the independent ones together
  const [reset, offline, progress, byKey, byId, missing, usage, badTime, down] = await Promise.all([
    rocketmq(['resetOffsetByTime', '-g', group, '-t', topic, '-s', '0', ...ep()]),
    rocketmq(['consumerConnection', '-g', group, ...ep()]),
    rocketmq(['consumerProgress', '-g', group, '--json', ...ep()]),
    rocketmq(['queryMsgByKey', '-t', topic, '-k', 'k2', ...ep()]),
    rocketmq(['queryMsgById', '-i', first.msgId, '-t', topic, '--json', ...ep()]),
    rocketmq(['queryMsgByKey', '-t', topic, '-k', 'nope', '--json', ...ep()]),
    rocketmq(['topicStatus', ...ep()]),
    rocketmq(['resetOffsetByTime', '-g', 'g', '-t', topic, '-s', 'yesterday-ish', ...ep()]),
    rocketmq(['topicList', '--endpoints', 'http://127.0.0.1:1']),
  ]);
  expect(reset.code).toBe(1); // the group has no offsets yet: RocketMQ's "consumer group not exist"
  expect(offline.code).toBe(1);
  expect(offline.stderr).toMatch(/not online/);
  expect(progress.code).toBe(0);
  expect(JSON.parse(progress.stdout)).toMatchObject({ group, diffTotal: 0, queues: [] });
  expect(byKey.code).toBe(0);
  expect(byKey.stdout).toMatch(/#MessageId/);
  expect(byKey.stdout).toMatch(/b2/);
  expect((JSON.parse(byId.stdout) as { messages: unknown[] }).messages).toEqual([
    expect.objectContaining({ body: 'b0', keys: 'k0' }),
  ]);
  expect(JSON.parse(missing.stdout)).toEqual({ messages: [] });
  expect(usage.code).toBe(2);
  expect(usage.stderr).toMatch(/-t is required/);
  expect(badTime.code).toBe(2);
  expect(down.code).toBe(1);
}, 60_000);
