import { createServer } from 'node:net';
import { Broker } from '../../../src/broker/index.js';
import { InvalidArgumentError, MessageSelector, StartTimeoutError, StateError } from '../../../src/index.js';
import type { Logger } from '../../../src/common/logger.js';
import type { BrokerDisconnectionEvent } from '../../../src/client/consumer/push/push-consumer-events.js';
import { startBroker, tempStorePath, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, startProducer, uniq } from './push-consumer-support.js';
import { rmSync } from 'node:fs';

/** A port nothing listens on (taken from the OS, then released). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const noop = (): void => {};
  return {
    warnings,
    debug: noop,
    info: noop,
    error: noop,
    warn: (_obj: unknown, msg?: string) => void warnings.push(String(msg)),
  } as unknown as Logger & { warnings: string[] };
}

describe('PushConsumer start() tells the truth', () => {
  let fx: BrokerFixture;
  beforeAll(async () => {
    fx = await startBroker();
  });
  afterAll(async () => {
    await fx.close();
  });

  it('rejects after startTimeoutMs with a retriable StartTimeoutError naming the address and the cause', async () => {
    const addr = `http://127.0.0.1:${await freePort()}`;
    const c = newConsumer(addr, uniq('gdown'), { startTimeoutMs: 600 }).subscribe('T', '*');
    c.registerMessageListener(() => undefined);
    const began = Date.now();
    const err = await c.start().catch((e: unknown) => e);
    const took = Date.now() - began;
    expect(err).toBeInstanceOf(StartTimeoutError);
    const e = err as StartTimeoutError;
    expect(e.code).toBe('ERR_START_TIMEOUT');
    expect(e.retriable).toBe(true);
    expect(e.address).toBe(addr);
    expect(e.message).toContain(addr);
    expect(e.message).toContain('within 600 ms');
    expect(e.cause).toBeDefined();
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(5000);
    expect(c.state).toBe('START_FAILED');
    await c.shutdown();
  });

  it('waits for a broker that comes up within startTimeoutMs, then runs and consumes', async () => {
    const port = await freePort();
    const storePath = tempStorePath();
    const addr = `http://127.0.0.1:${port}`;
    const topic = uniq('LateT');
    const got = new Collector();
    const c = newConsumer(addr, uniq('glate'), { startTimeoutMs: 15_000 }).subscribe(topic, '*');
    c.registerMessageListener(got.listener);
    const connected: string[] = [];
    c.events.on('connected', (e) => connected.push(e.brokerAddr));
    let settled = false;
    const started = c.start().finally(() => (settled = true));
    await new Promise((r) => setTimeout(r, 400));
    expect(settled).toBe(false);
    expect(c.state).toBe('STARTING');
    const broker = await Broker.start({ storePath, port });
    try {
      await started;
      expect(c.state).toBe('RUNNING');
      expect(connected).toContain(addr);
      const p = await startProducer(addr, 2);
      const sent = await sendMany(p, topic, 10, 'late');
      await waitFor(() => sent.every((b) => got.distinct.has(b)), 10_000);
      await p.shutdown();
    } finally {
      await c.shutdown();
      await broker.shutdown();
      rmSync(storePath, { recursive: true, force: true });
    }
  });

  it('start() after shutdown() rejects, also when the consumer had run', async () => {
    const never = newConsumer(fx.broker.address, uniq('gsd')).subscribe('T', '*');
    never.registerMessageListener(() => undefined);
    await never.shutdown();
    await expect(never.start()).rejects.toBeInstanceOf(StateError);

    const ran = newConsumer(fx.broker.address, uniq('gsd2')).subscribe('T', '*');
    ran.registerMessageListener(() => undefined);
    await ran.start();
    await ran.shutdown();
    await expect(ran.start()).rejects.toBeInstanceOf(StateError);
    expect(ran.state).toBe('SHUTDOWN');
  });

  it('shutdown() during a start that waits for its broker ends the start at once', async () => {
    const addr = `http://127.0.0.1:${await freePort()}`;
    const c = newConsumer(addr, uniq('gabort'), { startTimeoutMs: 60_000 }).subscribe('T', '*');
    c.registerMessageListener(() => undefined);
    const started = c.start().catch((e: unknown) => e);
    await new Promise((r) => setTimeout(r, 200));
    const began = Date.now();
    await c.shutdown();
    expect(await started).toBeInstanceOf(StateError);
    expect(Date.now() - began).toBeLessThan(3000);
    expect(c.state).toBe('SHUTDOWN');
  });

  it('a SQL92 subscription on a broker that does not serve it fails start() (RocketMQ: CHECK_CLIENT_CONFIG)', async () => {
    const noSql = await startBroker({ enablePropertyFilter: false });
    try {
      const p = await startProducer(noSql.broker.address, 2);
      const topic = uniq('SqlT');
      await sendMany(p, topic, 1, 'warm');
      await p.shutdown();
      const c = newConsumer(noSql.broker.address, uniq('gsql')).subscribe(topic, MessageSelector.bySql('a > 1'));
      c.registerMessageListener(() => undefined);
      const err = await c.start().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).field).toBe('subscription');
      expect((err as Error).message).toContain('does not support consumer to filter message by SQL92');
      expect((err as Error).message).toContain(topic);
      await c.shutdown();

      // A tag subscription on the same broker starts.
      const ok = newConsumer(noSql.broker.address, uniq('gtag')).subscribe(topic, 'A || B');
      ok.registerMessageListener(() => undefined);
      await ok.start();
      await ok.shutdown();
    } finally {
      await noSql.close();
    }
  });

  it('emits connected / disconnected per broker and warns when one stays unreachable', async () => {
    const own = await startBroker();
    const port = Number(new URL(own.broker.address).port);
    const logger = recordingLogger();
    const topic = uniq('DiscT');
    const p = await startProducer(own.broker.address, 2);
    await sendMany(p, topic, 1, 'warm');
    await p.shutdown();
    const c = newConsumer(own.broker.address, uniq('gdisc'), {
      brokerUnreachableWarnMs: 300,
      heartbeatBrokerIntervalMs: 100,
      logger,
    }).subscribe(topic, '*');
    c.registerMessageListener(() => undefined);
    const connected: string[] = [];
    const disconnected: BrokerDisconnectionEvent[] = [];
    c.events.on('connected', (e) => connected.push(e.brokerAddr));
    c.events.on('disconnected', (e) => disconnected.push(e));
    let again: Broker | undefined;
    try {
      await c.start();
      expect(connected).toEqual([own.broker.address]);
      await own.broker.shutdown();
      await waitFor(() => disconnected.length === 1, 10_000);
      expect(disconnected[0]?.brokerAddr).toBe(own.broker.address);
      await waitFor(() => logger.warnings.includes('broker unreachable'), 10_000);
      again = await Broker.start({ storePath: own.storePath, port });
      await waitFor(() => connected.length === 2, 10_000);
      expect(disconnected).toHaveLength(1);
    } finally {
      await c.shutdown();
      await again?.shutdown();
      await own.close().catch(() => undefined);
    }
  });
});
