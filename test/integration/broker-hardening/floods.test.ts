/**
 * Floods, short versions (the long ones are test/soak/floods.soak.mjs): thousands of new group and topic
 * names, and connections opened by the hundred. The broker's heap stays bounded, auto-creation stops at
 * its limits with a remark naming them, and the broker serves normally afterwards.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { connect, readResponses, requestBytes } from './raw-http.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const heapMiB = (): number => {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

/** Runs `fn(i)` for i < n, `concurrency` at a time. */
async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}

let f: BrokerFixture;
afterEach(async () => {
  await f.close();
});

test('name flood: 2,000 new groups in PULL_MESSAGE, bounded heap, creation stops at the limit with a clear remark', async () => {
  f = await startBroker({ autoCreateSubscriptionGroupLimit: 1500 });
  const topic = uniqueName('NF');
  await f.client.send(topic, 'x', { queueId: 0 });
  const client = new TestBrokerClient(f.broker.address, { connections: 16 });
  const before = heapMiB();
  const codes = new Map<number, number>();
  let limitRemark: string | undefined;
  let slowestMs = 0;
  const prefix = uniqueName('flood');
  try {
    await pool(2000, 16, async (i) => {
      const t0 = Date.now();
      const r = await client.pull({ group: `${prefix}-${i}`, topic });
      slowestMs = Math.max(slowestMs, Date.now() - t0);
      codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
      if (r.code === ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST) limitRemark ??= r.remark;
    });
  } finally {
    await client.close();
  }
  const grew = heapMiB() - before;
  expect(codes.get(ResponseCode.SUCCESS)).toBe(1500);
  expect(codes.get(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST)).toBe(500);
  expect(limitRemark).toMatch(/already has 1500 subscription groups.*autoCreateSubscriptionGroupLimit 1500/);
  expect(grew).toBeLessThan(64);
  // The table reaches the disk, coalesced.
  await f.broker.subscriptionGroupManager.persist();
  const saved = JSON.parse(readFileSync(path.join(f.storePath, 'config', 'subscriptionGroup.json'), 'utf8')) as {
    subscriptionGroupTable: object;
  };
  expect(Object.keys(saved.subscriptionGroupTable).filter((g) => g.startsWith(prefix))).toHaveLength(1500);
  // An existing group is served as before.
  expect((await f.client.pull({ group: `${prefix}-0`, topic })).code).toBe(ResponseCode.SUCCESS);
}, 120_000);

test('topic flood: sends to 600 new topics stop creating at autoCreateTopicLimit with TOPIC_NOT_EXIST', async () => {
  f = await startBroker({ autoCreateTopicLimit: 300 });
  const known = f.broker.topicConfigManager.allTopics().length;
  const prefix = uniqueName('tflood');
  const codes = new Map<number, number>();
  let remark: string | undefined;
  await pool(600, 8, async (i) => {
    const r = await f.client.send(`${prefix}-${i}`, 'x');
    codes.set(r.code, (codes.get(r.code) ?? 0) + 1);
    if (r.code === ResponseCode.TOPIC_NOT_EXIST) remark ??= r.remark;
  });
  expect(codes.get(ResponseCode.SUCCESS)).toBe(300 - known);
  expect(codes.get(ResponseCode.TOPIC_NOT_EXIST)).toBe(600 - (300 - known));
  expect(remark).toMatch(/autoCreateTopicLimit 300.*UPDATE_AND_CREATE_TOPIC/);
  // An explicitly created topic still works.
  const topic = uniqueName('explicit');
  expect(
    (await f.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 1, writeQueueNums: 1, perm: 6 })).code,
  ).toBe(ResponseCode.SUCCESS);
  expect((await f.client.send(topic, 'y')).code).toBe(ResponseCode.SUCCESS);
}, 120_000);

test('connection flood: 1,000 connections opened, used once and dropped, 300 more held open past maxConnections', async () => {
  f = await startBroker({ maxConnections: 100 });
  const topic = uniqueName('CF');
  await f.client.send(topic, 'x');
  const before = heapMiB();
  const ask = requestBytes('GET_MAX_OFFSET', { topic, queueId: 0 });
  let answered = 0;
  let refused = 0;
  await pool(1000, 20, async () => {
    let s;
    try {
      s = await connect(f.broker.address);
      s.on('error', () => undefined);
      s.write(ask);
      const [a] = await readResponses(s, 1, 30_000);
      if (a?.code === ResponseCode.SUCCESS) answered++;
    } catch {
      refused++; // closed by the server: maxConnections were open
    } finally {
      s?.destroy();
    }
  });
  expect(answered + refused).toBe(1000);
  expect(answered).toBeGreaterThan(500);
  const held = await Promise.all(
    Array.from({ length: 300 }, () =>
      connect(f.broker.address).then((s) => {
        s.on('error', () => undefined);
        return s;
      }),
    ),
  );
  try {
    await waitFor(() => f.broker.connectionStats().droppedConnections >= 200, 20_000);
    expect(f.broker.connectionStats().connections).toBeLessThanOrEqual(100);
  } finally {
    for (const s of held) s.destroy();
  }
  await waitFor(() => f.broker.connectionStats().connections <= 2, 20_000);
  expect(heapMiB() - before).toBeLessThan(32);
  expect((await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 })).header.offset).toBe(1);
}, 120_000);
