/**
 * Group membership over the remoting listener under hostile load (short versions; the long one is in
 * test/soak/remoting-attacks.soak.mjs): heartbeats with ever new client ids on one connection, notices
 * coalesced per group, and the bounds on client ids per connection and members per group.
 */
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { RawSockets, heartbeatBody, heartbeatFrame, pullFrame } from '../../support/remoting-attacks.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

let fx: BrokerFixture;
const raw = new RawSockets();
const clients: RemotingTestClient[] = [];
afterEach(async () => {
  raw.closeAll();
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await fx?.close();
});
const connect = async (address: string): Promise<RemotingTestClient> => {
  const c = await RemotingTestClient.connect(address);
  clients.push(c);
  return c;
};

test('3,000 heartbeats with new client ids on one connection: refused past the per-connection bound, few notices', async () => {
  fx = await startBroker({
    remotingPort: 0,
    remotingMaxClientIdsPerConnection: 20,
    notifyConsumerIdsChangedWindowMs: 200,
  });
  const address = fx.broker.remotingAddress as string;
  const group = uniqueName('HbG');
  const topic = uniqueName('HbT');
  // A member that reads counts its notices.
  const member = await connect(address);
  expect((await member.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('m@1', group, topic) })).code).toBe(
    ResponseCode.SUCCESS,
  );
  const attacker = await connect(address);
  const answers = await Promise.all(
    Array.from({ length: 3000 }, (_, i) =>
      attacker.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody(`a@${i}`, group, topic) }),
    ),
  );
  const refused = answers.filter((a) => a.code === ResponseCode.SYSTEM_ERROR);
  expect(answers.length - refused.length).toBe(20);
  expect(refused[0]?.remark).toContain('remotingMaxClientIdsPerConnection');
  const sent = fx.broker.remotingStats()?.noticesSent ?? 0;
  // 20 joins within a window or two: each of the two connections is told a few times, not per join or per client id.
  await waitFor(() => member.pushed.length > 0);
  expect(sent).toBeLessThanOrEqual(2 * 4);
  expect(attacker.pushed.length).toBeLessThanOrEqual(4);
});

test('notices to a member that does not read are not queued', async () => {
  fx = await startBroker({
    remotingPort: 0,
    notifyConsumerIdsChangedWindowMs: 10,
    remotingMaxBufferedBytesPerConnection: 64 * 1024,
  });
  const address = fx.broker.remotingAddress as string;
  const group = uniqueName('DeafG');
  const topic = uniqueName('DeafT');
  const body = 'x'.repeat(60 * 1024);
  for (let i = 0; i < 4; i++)
    expect((await fx.client.send(topic, body, { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
  const other = await connect(address);
  expect((await other.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('j@1', group, topic) })).code).toBe(
    ResponseCode.SUCCESS,
  );
  // A member that stops reading: its pulls' answers fill its socket and then its budget.
  const deaf = await raw.open(address, false);
  deaf.write(heartbeatFrame(1, 'deaf@1', group, topic));
  // Each round queues at least one ~240 KiB answer; once the OS buffers are full they stay queued.
  let opaque = 2;
  for (let round = 0; round < 400; round++) {
    const before = fx.broker.remotingStats()?.busyAnswers ?? 0;
    deaf.write(Buffer.concat(Array.from({ length: 8 }, () => pullFrame(opaque++, group, topic))));
    await waitFor(() => (fx.broker.remotingStats()?.busyAnswers ?? 0) > before, 10_000);
    if ((fx.broker.remotingStats()?.bufferedBytes ?? 0) >= 64 * 1024) break;
  }
  expect(fx.broker.remotingStats()?.bufferedBytes).toBeGreaterThanOrEqual(64 * 1024);
  const skippedBefore = fx.broker.remotingStats()?.noticesSkipped ?? 0;
  const pushedBefore = other.pushed.length;
  const third = await connect(address);
  expect((await third.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('j@2', group, topic) })).code).toBe(
    ResponseCode.SUCCESS,
  );
  // The member that reads is told; the one that does not is skipped.
  await waitFor(() => other.pushed.length > pushedBefore);
  expect(fx.broker.remotingStats()?.noticesSkipped).toBe(skippedBefore + 1);
}, 60_000);

test('members per group are bounded, with a remark naming maxConsumersPerGroup', async () => {
  fx = await startBroker({ remotingPort: 0, maxConsumersPerGroup: 5 });
  const address = fx.broker.remotingAddress as string;
  const group = uniqueName('BigG');
  const topic = uniqueName('BigT');
  const codes: number[] = [];
  let remark: string | null = null;
  for (let i = 0; i < 8; i++) {
    const c = await connect(address);
    const r = await c.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody(`g@${i}`, group, topic) });
    codes.push(r.code);
    if (r.code !== ResponseCode.SUCCESS) remark ??= r.remark;
  }
  expect(codes.filter((c) => c === ResponseCode.SUCCESS)).toHaveLength(5);
  expect(remark).toContain('maxConsumersPerGroup');
  // A member already in the group still heartbeats.
  const again = await clients[0]?.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('g@0', group, topic) });
  expect(again?.code).toBe(ResponseCode.SUCCESS);
});
