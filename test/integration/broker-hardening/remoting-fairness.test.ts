/**
 * Connection fairness on the remoting listener (short versions; the long ones are in
 * test/soak/remoting-attacks.soak.mjs): a flood of idle connections does not lock out a new client,
 * trickling and silent connections are closed, and a valid request followed by a bad frame is answered.
 */
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import { encodeRemotingCommand } from '../../../src/remoting/remoting-command.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { RawSockets } from '../../support/remoting-attacks.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

let fx: BrokerFixture;
const raw = new RawSockets();
afterEach(async () => {
  raw.closeAll();
  await fx?.close();
});

async function served(address: string): Promise<void> {
  const c = await RemotingTestClient.connect(address);
  try {
    const r = await c.request(RequestCode.GET_MAX_OFFSET, { topic: uniqueName('T'), queueId: '0' });
    expect([ResponseCode.SUCCESS, ResponseCode.TOPIC_NOT_EXIST]).toContain(r.code);
  } finally {
    await c.close();
  }
}

test('idle connections up to the limit: a new client still gets in (the oldest silent one makes room)', async () => {
  fx = await startBroker({ remotingPort: 0, remotingMaxConnections: 60, remotingMaxConnectionsPerAddress: 50 });
  const address = fx.broker.remotingAddress as string;
  const idle = await Promise.all(Array.from({ length: 50 }, () => raw.open(address)));
  await waitFor(() => fx.broker.remotingConnectionCount === 50);
  await served(address);
  await served(address);
  const stats = fx.broker.remotingStats();
  expect(stats?.evictedConnections).toBe(2);
  await RawSockets.closed(idle[0] as (typeof idle)[number]);
  await RawSockets.closed(idle[1] as (typeof idle)[number]);
});

test('a connection that sends no complete request in time is closed', async () => {
  fx = await startBroker({ remotingPort: 0, remotingFirstRequestTimeoutMs: 300 });
  const s = await raw.open(fx.broker.remotingAddress as string);
  const t0 = Date.now();
  await RawSockets.closed(s);
  expect(Date.now() - t0).toBeLessThan(5000);
  expect(fx.broker.remotingStats()?.closedNoRequest).toBe(1);
});

test('a frame trickled one byte at a time is closed by the minimum data rate', async () => {
  fx = await startBroker({ remotingPort: 0, remotingMinFrameBytesPerSecond: 1024 });
  const address = fx.broker.remotingAddress as string;
  const s = await raw.open(address);
  // One complete request first, so only the data rate can close it.
  s.write(
    encodeRemotingCommand({ code: RequestCode.GET_MAX_OFFSET, opaque: 1, extFields: { topic: 'T', queueId: '0' } }),
  );
  const frame = encodeRemotingCommand({
    code: RequestCode.GET_MAX_OFFSET,
    opaque: 2,
    extFields: { topic: 'T', queueId: '0' },
  });
  let i = 0;
  const timer = setInterval(() => {
    if (i < frame.length && !s.destroyed) s.write(frame.subarray(i, ++i));
  }, 100);
  try {
    await RawSockets.closed(s);
  } finally {
    clearInterval(timer);
  }
  expect(fx.broker.remotingStats()?.closedSlowFrames).toBe(1);
}, 20_000);

test('a valid request followed by a bad frame in the same write is answered before the connection closes', async () => {
  fx = await startBroker({ remotingPort: 0 });
  const c = await RemotingTestClient.connect(fx.broker.remotingAddress as string);
  try {
    const garbage = Buffer.from([0, 0, 0, 8, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);
    const valid = encodeRemotingCommand({
      code: RequestCode.GET_MAX_OFFSET,
      opaque: 77,
      extFields: { topic: uniqueName('T'), queueId: '0' },
    });
    c.writeRaw(Buffer.concat([valid, garbage]));
    await c.closed;
    expect(c.responses.map((r) => r.opaque)).toEqual([77]);
  } finally {
    await c.close();
  }
});

test('a connection with no traffic and nothing in flight is closed as idle; a held pull keeps its connection', async () => {
  fx = await startBroker({ remotingPort: 0, remotingIdleTimeoutMs: 300 });
  const address = fx.broker.remotingAddress as string;
  const topic = uniqueName('Idle');
  await fx.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 1, writeQueueNums: 1, perm: 6 });
  const quiet = await raw.open(address);
  quiet.write(
    encodeRemotingCommand({ code: RequestCode.GET_MAX_OFFSET, opaque: 1, extFields: { topic, queueId: '0' } }),
  );
  const held = await raw.open(address);
  let heldAnswer = 0;
  held.on('data', (chunk: Buffer) => (heldAnswer += chunk.length));
  // Held for 1.5 s on an empty queue (suspend and subscription flags): far past the idle timeout.
  held.write(
    encodeRemotingCommand({
      code: RequestCode.PULL_MESSAGE,
      opaque: 2,
      extFields: {
        consumerGroup: uniqueName('g'),
        topic,
        queueId: '0',
        queueOffset: '0',
        maxMsgNums: '32',
        sysFlag: '6',
        commitOffset: '0',
        suspendTimeoutMillis: '1500',
        subscription: '*',
        subVersion: '0',
        expressionType: 'TAG',
      },
    }),
  );
  await RawSockets.closed(quiet);
  expect(fx.broker.remotingStats()?.closedIdle).toBe(1);
  // Its connection is closed only once the pull is answered and the idle time has passed again.
  await RawSockets.closed(held);
  expect(heldAnswer).toBeGreaterThan(0);
  expect(fx.broker.remotingStats()?.closedIdle).toBe(2);
});
