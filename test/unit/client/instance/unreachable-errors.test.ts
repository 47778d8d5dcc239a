/**
 * When a client cannot reach what it needs, the final error names what could not be reached (the
 * NameServer list, or the broker's name and address) and the failure underneath, without the
 * transport's reconnect schedule ("next attempt in ... ms"), which is stale once the error is reported.
 */
import { createServer } from 'node:net';
import { Producer, PushConsumer, StartTimeoutError, TransportError } from '../../../../src/index.js';
import { reachBrokers } from '../../../../src/client/instance/client-start.js';
import { MQClientInstance } from '../../../../src/client/instance/mq-client-instance.js';
import { resolvePushConsumerOptions } from '../../../../src/client/consumer/push/push-consumer-options.js';
import { RequestCode } from '../../../../src/protocol/index.js';
import { systemClock } from '../../../../src/common/clock.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { FakeRemotingClient, json, ok, routeOf } from '../core-fakes.js';

/** A port nothing listens on (taken from the OS, then released). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

let seq = 0;

test('namesrvAddr: a start timeout names the NameServer and the connect failure, with no stale retry note', async () => {
  const namesrv = `127.0.0.1:${await freePort()}`;
  const c = new PushConsumer({
    namesrvAddr: namesrv,
    consumerGroup: `g-ns-${++seq}`,
    instanceName: `unreachable-${seq}`,
    startTimeoutMs: 700,
  }).subscribe('T', '*');
  c.registerMessageListener(() => undefined);
  const err = await c.start().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(StartTimeoutError);
  const e = err as StartTimeoutError;
  expect(e.address).toBe(namesrv);
  expect(e.message).toContain(`NameServer ${namesrv}`);
  expect(e.message).toContain('ECONNREFUSED');
  expect(e.message).not.toContain('next attempt');
  expect(e.message).not.toMatch(/broker\s+within/);
  await c.shutdown();
});

test('namesrvAddr: Producer.send to a dead NameServer names it and the connect failure, with no stale retry note', async () => {
  const namesrv = `127.0.0.1:${await freePort()}`;
  const p = new Producer({ namesrvAddr: namesrv, instanceName: `unreachable-p-${++seq}` });
  await p.start();
  try {
    const err = await p.send({ topic: 'T', body: Buffer.from('x') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    const e = err as TransportError;
    expect(e.retriable).toBe(true);
    expect(e.message).toContain(`NameServer ${namesrv}`);
    expect(e.message).toContain('ECONNREFUSED');
    expect(e.message).not.toContain('next attempt');
  } finally {
    await p.shutdown();
  }
});

test('a start timeout on a broker that cannot be reached names the broker and its address', async () => {
  const brokerAddr = '10.0.0.9:10911';
  const connectErr = Object.assign(new Error(`connect ECONNREFUSED ${brokerAddr}`), { code: 'ECONNREFUSED' });
  const remoting = new FakeRemotingClient((_addr, req) => {
    if (req.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) return ok({}, json(routeOf({ 'broker-a': brokerAddr })));
    // What TcpRemotingClient says while it waits out its reconnect backoff.
    throw new TransportError(`cannot connect to ${brokerAddr} (${connectErr.message}); next attempt in 1120 ms`, {
      cause: connectErr,
    });
  });
  const options = resolvePushConsumerOptions({
    namesrvAddr: '127.0.0.1:9876',
    consumerGroup: 'g-broker',
    instanceName: `unreachable-b-${++seq}`,
  });
  const instance = MQClientInstance.acquire(options, remoting);
  try {
    const err = await reachBrokers({
      instance,
      what: 'PushConsumer',
      group: 'g-broker',
      subscriptions: () => [{ topic: 'T', subString: '*', tagsSet: [], codeSet: [], subVersion: 1 }],
      startTimeoutMs: 300,
      clock: systemClock,
      logger: silentLogger,
      signal: new AbortController().signal,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartTimeoutError);
    const e = err as StartTimeoutError;
    expect(e.address).toBe(brokerAddr);
    expect(e.message).toContain(`broker broker-a (${brokerAddr})`);
    expect(e.message).toContain(`connect ECONNREFUSED ${brokerAddr}`);
    expect(e.message).not.toContain('next attempt');
  } finally {
    await instance.release();
  }
});

test('Producer.send to a broker that cannot be reached names the broker and its address, with no stale retry note', async () => {
  const brokerAddr = '10.0.0.9:10911';
  const connectErr = Object.assign(new Error(`connect ECONNREFUSED ${brokerAddr}`), { code: 'ECONNREFUSED' });
  const remoting = new FakeRemotingClient((_addr, req) => {
    if (req.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) return ok({}, json(routeOf({ 'broker-a': brokerAddr })));
    throw new TransportError(`cannot connect to ${brokerAddr} (${connectErr.message}); next attempt in 1120 ms`, {
      cause: connectErr,
    });
  });
  const p = new Producer({ namesrvAddr: '127.0.0.1:9876', instanceName: `unreachable-s-${++seq}` });
  // The producer's start finds this instance (same client id), so its sends go through the fake transport.
  const instance = MQClientInstance.acquire(p.options, remoting);
  await p.start();
  try {
    const err = await p.send({ topic: 'T', body: Buffer.from('x') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    const e = err as TransportError;
    expect(e.message).toContain(`broker broker-a (${brokerAddr})`);
    expect(e.message).toContain(`connect ECONNREFUSED ${brokerAddr}`);
    expect(e.message).not.toContain('next attempt');
  } finally {
    await p.shutdown();
    await instance.release();
  }
});
