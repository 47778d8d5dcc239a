/**
 * LitePullConsumer.start() against a broker it can not reach: it keeps trying until `startTimeoutMs`
 * and then rejects with a StartTimeoutError (as PushConsumer.start() does), instead of resolving and
 * leaving `poll()` empty for ever; a broker that comes up within the window is still used.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { StartTimeoutError, StateError } from '../../../src/common/errors.js';
import type { Logger } from '../../../src/common/logger.js';
import { tempStorePath, waitFor } from '../../support/broker-fixture.js';
import { sendMany, startProducer, uniq } from './push-consumer-support.js';
import { freePort, newLiteConsumer, pollUntil } from './lite-pull-support.js';

/** A silent logger that remembers its debug messages (the start's retries are logged at debug). */
function recordingLogger(): Logger & { debugs: string[] } {
  const debugs: string[] = [];
  const noop = (): void => {};
  return {
    debugs,
    debug: (_obj: unknown, msg?: string) => void debugs.push(String(msg)),
    info: noop,
    warn: noop,
    error: noop,
  } as unknown as Logger & { debugs: string[] };
}

const retried = (logger: { debugs: string[] }): boolean => logger.debugs.some((m) => m.includes('not reachable yet'));

describe('LitePullConsumer start() against an unreachable broker', () => {
  it('subscribe mode: rejects after startTimeoutMs with a retriable StartTimeoutError naming the address', async () => {
    const addr = `http://127.0.0.1:${await freePort()}`;
    const c = newLiteConsumer(addr, uniq('lsdown'), { startTimeoutMs: 600 }).subscribe('T', '*');
    const began = Date.now();
    const err = await c.start().catch((e: unknown) => e);
    const took = Date.now() - began;
    expect(err).toBeInstanceOf(StartTimeoutError);
    const e = err as StartTimeoutError;
    expect(e.code).toBe('ERR_START_TIMEOUT');
    expect(e.retriable).toBe(true);
    expect(e.address).toBe(addr);
    expect(e.message).toContain('LitePullConsumer');
    expect(e.message).toContain(addr);
    expect(e.message).toContain('within 600 ms');
    expect(e.cause).toBeDefined();
    expect(took).toBeGreaterThanOrEqual(550);
    expect(took).toBeLessThan(5000);
    expect(c.state).toBe('START_FAILED');
    await expect(c.ready).rejects.toBe(err);
    await expect(c.poll({ timeoutMs: 0 })).rejects.toBeInstanceOf(StateError);
    await c.shutdown();
    expect(c.state).toBe('SHUTDOWN');
  });

  it('assign mode: rejects with a StartTimeoutError too', async () => {
    const addr = `http://127.0.0.1:${await freePort()}`;
    const c = newLiteConsumer(addr, uniq('ladown'), { startTimeoutMs: 400 });
    await c.assign([{ topic: 'T', brokerName: 'broker-a', queueId: 0 }]);
    const err = await c.start().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartTimeoutError);
    expect((err as StartTimeoutError).address).toBe(addr);
    expect(c.state).toBe('START_FAILED');
    await c.shutdown();
  });

  it('waits for a broker that comes up within startTimeoutMs, then runs and polls', async () => {
    const port = await freePort();
    const storePath = tempStorePath();
    const addr = `http://127.0.0.1:${port}`;
    const topic = uniq('LiteLateT');
    const logger = recordingLogger();
    const c = newLiteConsumer(addr, uniq('lslate'), { startTimeoutMs: 15_000, logger }).subscribe(topic, '*');
    let settled = false;
    const started = c.start().finally(() => (settled = true));
    started.catch(() => undefined);
    let broker: Broker | undefined;
    try {
      // The start has found the broker missing at least once and is still waiting for it.
      await waitFor(() => retried(logger), 10_000);
      expect(settled).toBe(false);
      expect(c.state).toBe('STARTING');
      broker = await Broker.start({ storePath, port });
      await started;
      expect(c.state).toBe('RUNNING');
      const p = await startProducer(addr, 2);
      try {
        const sent = await sendMany(p, topic, 10, 'late');
        const polled = await pollUntil(c, (b) => sent.every((s) => b.includes(s)));
        expect(new Set(polled)).toEqual(new Set(sent));
      } finally {
        await p.shutdown();
      }
    } finally {
      await c.shutdown();
      await broker?.shutdown();
      rmSync(storePath, { recursive: true, force: true });
    }
  });

  it('shutdown() during a start that waits for its broker ends the start at once', async () => {
    const addr = `http://127.0.0.1:${await freePort()}`;
    const logger = recordingLogger();
    const c = newLiteConsumer(addr, uniq('lsabort'), { startTimeoutMs: 60_000, logger }).subscribe('T', '*');
    const started = c.start().catch((e: unknown) => e);
    try {
      await waitFor(() => retried(logger), 10_000);
    } finally {
      const began = Date.now();
      await c.shutdown();
      expect(Date.now() - began).toBeLessThan(3000);
    }
    expect(await started).toBeInstanceOf(StateError);
    expect(c.state).toBe('SHUTDOWN');
  });
});
