/**
 * The remoting listener's byte budgets under hostile load (short versions; the long ones are
 * test/soak/remoting-attacks.soak.mjs): pipelined pulls whose answers are never read, and frames
 * announced large and sent in part. Bounds are asserted on the broker's own counters
 * (Broker.remotingStats), not on RSS.
 */
import { ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { RawSockets, pullFrame } from '../../support/remoting-attacks.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';
import { RequestCode } from '../../../src/protocol/index.js';

const KiB = 1024;
const MiB = 1024 * KiB;
const PER_CONNECTION = 1 * MiB;
const BROKER_WIDE = 8 * MiB;

let fx: BrokerFixture;
const raw = new RawSockets();
afterEach(async () => {
  raw.closeAll();
  await fx?.close();
});

const start = (extra: Record<string, unknown> = {}) =>
  startBroker({
    remotingPort: 0,
    remotingMaxBufferedBytesPerConnection: PER_CONNECTION,
    maxBufferedBytes: BROKER_WIDE,
    remotingDrainTimeoutMs: 60_000,
    ...extra,
  });

/** A client that reads its answers still gets them. */
async function served(address: string, topic: string): Promise<void> {
  const c = await RemotingTestClient.connect(address);
  try {
    const r = await c.request(RequestCode.GET_MAX_OFFSET, { topic, queueId: '0' });
    expect(r.code).toBe(ResponseCode.SUCCESS);
  } finally {
    await c.close();
  }
}

test('pipelined pulls never read: each connection holds at most its budget, the broker at most its own', async () => {
  fx = await start();
  const address = fx.broker.remotingAddress as string;
  const topic = uniqueName('PipeT');
  const group = uniqueName('PipeG');
  const body = 'x'.repeat(60 * KiB);
  for (let i = 0; i < 8; i++)
    expect((await fx.client.send(topic, body, { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);

  const CONNECTIONS = 10;
  const PULLS = 200;
  const frames = Buffer.concat(Array.from({ length: PULLS }, (_, i) => pullFrame(i + 1, group, topic)));
  const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => raw.open(address, false)));
  for (const s of sockets) s.write(frames);
  // Each connection's pulls are answered with their messages, or SYSTEM_BUSY past a budget, until the
  // listener stops reading it because its answers are not read.
  await waitFor(() => (fx.broker.remotingStats()?.notReading ?? 0) >= CONNECTIONS, 30_000);
  const stats = fx.broker.remotingStats();
  if (!stats) throw new Error('no remoting stats');
  // One answer of ~240 KiB may start a connection's queue; small SYSTEM_BUSY answers may follow past it.
  expect(stats.peakConnectionBytes).toBeLessThanOrEqual(PER_CONNECTION + 256 * KiB + PULLS * 512);
  expect(stats.budgetPeakBytes).toBeLessThanOrEqual(BROKER_WIDE + CONNECTIONS * PULLS * 512);
  expect(stats.budgetUsedBytes).toBeLessThanOrEqual(CONNECTIONS * (PER_CONNECTION + PULLS * 512));
  await served(address, topic);
  raw.closeAll();
  // Everything the attackers held is given back once they are gone.
  await waitFor(() => fx.broker.remotingStats()?.budgetUsedBytes === 0, 10_000);
}, 60_000);

test('a frame larger than the connection budget is refused when its length arrives', async () => {
  fx = await start();
  const address = fx.broker.remotingAddress as string;
  const s = await raw.open(address);
  const prefix = Buffer.alloc(4);
  prefix.writeInt32BE(2 * MiB);
  s.write(prefix);
  await RawSockets.closed(s);
  const stats = fx.broker.remotingStats();
  expect(stats?.refusedFrames).toBe(1);
  expect(stats?.budgetPeakBytes).toBeLessThan(64 * KiB);
  await served(address, uniqueName('T'));
});

test('frames announced and sent in part: reserved up front within the broker budget, slow ones closed', async () => {
  fx = await start({ remotingMinFrameBytesPerSecond: 256 * KiB });
  const address = fx.broker.remotingAddress as string;
  const CONNECTIONS = 20;
  const announced = 900 * KiB;
  const sent = 800 * KiB;
  const sockets = await Promise.all(Array.from({ length: CONNECTIONS }, () => raw.open(address)));
  const part = Buffer.alloc(sent);
  part.writeInt32BE(announced - 4, 0);
  for (const s of sockets) s.write(part);
  // At most as many frames as fit the broker's budget are reserved, less its last eighth, which is kept for
  // clients that hold little; the others wait, unread.
  const heavyCap = BROKER_WIDE - BROKER_WIDE / 8;
  await waitFor(() => (fx.broker.remotingStats()?.budgetUsedBytes ?? 0) >= heavyCap - announced, 10_000);
  const during = fx.broker.remotingStats();
  expect(during?.budgetPeakBytes).toBeLessThanOrEqual(heavyCap);
  // The stalled frames fall below the minimum data rate and their connections are closed; the budget comes back.
  await waitFor(() => (fx.broker.remotingStats()?.closedSlowFrames ?? 0) > 0, 15_000);
  await waitFor(() => fx.broker.remotingStats()?.budgetUsedBytes === 0, 30_000);
  await served(address, uniqueName('T'));
}, 60_000);
