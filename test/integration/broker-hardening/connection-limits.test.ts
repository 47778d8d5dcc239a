/**
 * The HTTP server bounds what one client can make it hold: requests in flight per connection (HTTP/1.1
 * pipelining), answer bytes waiting to be read per connection, and the number of connections.
 */
import { ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { connect, pullHeader, readResponses, requestBytes } from './raw-http.js';

let f: BrokerFixture;
afterEach(async () => {
  await f.close();
});

describe('requests in flight per connection', () => {
  test('pipelined held pulls past maxInFlightRequestsPerConnection are answered SYSTEM_BUSY, not handled', async () => {
    f = await startBroker({ maxInFlightRequestsPerConnection: 4 });
    const topic = uniqueName('CL');
    await f.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 1, writeQueueNums: 1, perm: 6 });
    const socket = await connect(f.broker.address);
    try {
      const one = requestBytes('PULL_MESSAGE', pullHeader(uniqueName('g'), topic, 500));
      socket.write(Buffer.concat(Array.from({ length: 20 }, () => one)));
      await waitFor(() => f.broker.connectionStats().refusedRequests === 16, 10_000);
      expect(f.broker.connectionStats().inFlight).toBeLessThanOrEqual(4);
      const answers = await readResponses(socket, 20);
      expect(answers.map((a) => a.code)).toEqual([
        ...Array.from({ length: 4 }, () => ResponseCode.PULL_NOT_FOUND),
        ...Array.from({ length: 16 }, () => ResponseCode.SYSTEM_BUSY),
      ]);
      expect(answers[4]?.remark).toMatch(/\[REJECTREQUEST\]system busy.*maxInFlightRequestsPerConnection/);
    } finally {
      socket.destroy();
    }
  });

  test('pulls pipelined and never read: buffered answers stay bounded, the rest is refused', async () => {
    f = await startBroker({ maxInFlightRequestsPerConnection: 64, maxBufferedResponseBytesPerConnection: 256 * 1024 });
    const topic = uniqueName('CL');
    const body = Buffer.alloc(4000, 'x');
    for (let i = 0; i < 32; i++) expect((await f.client.send(topic, body, { queueId: 0 })).code).toBe(0);
    const sockets = await Promise.all(Array.from({ length: 10 }, () => connect(f.broker.address)));
    try {
      const start = f.broker.connectionStats();
      const before = start.admittedRequests + start.refusedRequests;
      const pull = requestBytes('PULL_MESSAGE', pullHeader(uniqueName('g'), topic));
      for (const s of sockets) s.write(Buffer.concat(Array.from({ length: 100 }, () => pull)));
      // Every request is either handled (its answer written, waiting to be read) or refused.
      let peak = 0;
      await waitFor(() => {
        const st = f.broker.connectionStats();
        peak = Math.max(peak, st.bufferedBytes);
        return st.admittedRequests + st.refusedRequests - before === 1000;
      }, 40_000);
      const st = f.broker.connectionStats();
      // Per connection: the limit plus what was in flight when it was reached (each answer ~128 KiB).
      expect(st.bufferedBytes).toBeLessThan(10 * (256 * 1024 + 64 * 140 * 1024));
      expect(peak).toBeLessThan(10 * (256 * 1024 + 64 * 140 * 1024));
      expect(st.refusedRequests).toBeGreaterThan(500);
    } finally {
      for (const s of sockets) s.destroy();
    }
    // The attacker's connections are gone, and with them everything counted for them.
    await waitFor(() => {
      const st = f.broker.connectionStats();
      return st.inFlight === 0 && st.bufferedBytes === 0;
    });
    expect((await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 })).header.offset).toBe(32);
  }, 60_000);
});

describe('connections', () => {
  test('connections past maxConnections are closed at once; the broker serves again when they go', async () => {
    f = await startBroker({ maxConnections: 10 });
    const sockets = await Promise.all(Array.from({ length: 30 }, () => connect(f.broker.address)));
    let closedByServer = 0;
    for (const s of sockets) {
      s.on('error', () => undefined);
      s.on('close', () => closedByServer++);
    }
    try {
      await waitFor(() => closedByServer >= 20, 10_000);
      const st = f.broker.connectionStats();
      expect(st.connections).toBeLessThanOrEqual(10);
      expect(st.droppedConnections).toBeGreaterThanOrEqual(20);
    } finally {
      for (const s of sockets) s.destroy();
    }
    await waitFor(() => f.broker.connectionStats().connections === 0);
    expect((await f.client.send(uniqueName('CL'), 'after the flood')).code).toBe(ResponseCode.SUCCESS);
  });
});
