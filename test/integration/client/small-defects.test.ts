import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Broker, StoreLockedError } from '../../../src/broker/index.js';
import {
  BrokerResponseError,
  InvalidArgumentError,
  Producer,
  PushConsumer,
  RocketMQError,
  type SendResult,
} from '../../../src/index.js';
import { startBroker, tempStorePath, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, uniq } from './push-consumer-support.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const FAST_DELAYS = Array.from({ length: 18 }, () => '1s').join(' ');

describe('small defects found on the way', () => {
  let fx: BrokerFixture;
  beforeAll(async () => {
    fx = await startBroker({ store: { messageDelayLevel: FAST_DELAYS } });
  });
  afterAll(async () => {
    await fx.close();
  });

  it('a send whose deadline passes reports the deadline it was given, never a negative one', async () => {
    const p = new Producer({ endpoints: fx.broker.address, sendMsgTimeoutMs: 1 });
    await p.start();
    try {
      const err = await p.send({ topic: uniq('Tmo'), body: Buffer.from('x') }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(RocketMQError);
      expect((err as RocketMQError).code).toBe('ERR_TIMEOUT');
      expect((err as Error).message).toMatch(/timed out after 1 ms$/);
    } finally {
      await p.shutdown();
    }
  });

  it("a delayed send reports the real topic's queue, the one the message is delivered on", async () => {
    const topic = uniq('DelayQ');
    const p = new Producer({ endpoints: fx.broker.address, defaultTopicQueueNums: 4 });
    await p.start();
    const got = new Collector();
    const c = newConsumer(fx.broker.address, uniq('gdq')).subscribe(topic, '*');
    c.registerMessageListener(got.listener);
    try {
      await p.send({ topic, body: Buffer.from('warm') });
      await c.start();
      const sent: SendResult[] = [];
      // Level 7 parks the message on schedule queue 6, which this 4-queue topic does not have.
      for (let i = 0; i < 6; i++) sent.push(await p.send({ topic, body: Buffer.from(`d${i}`), delayTimeLevel: 7 }));
      for (const r of sent) {
        expect(r.messageQueue.topic).toBe(topic);
        expect(r.messageQueue.queueId).toBeLessThan(4);
      }
      await waitFor(() => sent.every((_, i) => got.distinct.has(`d${i}`)), 15_000);
      for (const [i, r] of sent.entries()) {
        const m = got.messages.find((x) => x.body?.toString() === `d${i}`);
        expect(m?.queueId).toBe(r.messageQueue.queueId);
        expect(m?.msgId).toBe(r.msgId);
      }
    } finally {
      await c.shutdown();
      await p.shutdown();
    }
  });

  it('an out-of-range delay level is refused with the field named', async () => {
    const p = new Producer({ endpoints: fx.broker.address });
    await p.start();
    try {
      const err = await p.send({ topic: 'T', body: Buffer.from('x'), delayTimeLevel: 19 }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).field).toBe('message.delayTimeLevel');
      expect((err as Error).message).toContain('[0, 18]');
      // A broker with more levels: say so in the options.
      expect(() => new Producer({ endpoints: fx.broker.address, maxDelayLevel: 0 })).toThrow(/maxDelayLevel/);
    } finally {
      await p.shutdown();
    }
  });

  it('endpoints without a scheme get the helpful message, not "Invalid input"', () => {
    for (const make of [
      () => new Producer({ endpoints: 'localhost:8081' }),
      () => new PushConsumer({ endpoints: 'localhost:8081', consumerGroup: 'g' }),
    ]) {
      let err: unknown;
      try {
        make();
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).field).toBe('endpoints');
      expect((err as Error).message).toContain('must be an http:// or https:// broker URL');
    }
    expect(() => new Producer({ endpoints: ['http://127.0.0.1:1', 'nope'] })).toThrow(/endpoints\.1: must be an http/);
  });

  it('BrokerResponseError and StoreLockedError are exported where docs/errors.md says', async () => {
    expect(typeof BrokerResponseError).toBe('function');
    const err = await Broker.start({ storePath: fx.storePath, port: 0 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreLockedError);
    expect((err as StoreLockedError).code).toBe('ERR_STORE_LOCKED');
    const p = new Producer({ endpoints: fx.broker.address, createTopicKey: uniq('NoSuchTemplate') });
    await p.start();
    try {
      const e2 = await p.fetchPublishMessageQueues(uniq('Missing')).catch((e: unknown) => e);
      expect(e2).toBeInstanceOf(BrokerResponseError);
      expect((e2 as BrokerResponseError).code).toBe('ERR_TOPIC_NOT_EXIST');
    } finally {
      await p.shutdown();
    }
  });

  it('a 404 from a server that is not a broker is ERR_NOT_FOUND and says the address may be wrong', async () => {
    const server: Server = createServer((_req, res) => {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const p = new Producer({ endpoints: url });
    try {
      await p.start();
      const err = await p.send({ topic: 'T', body: Buffer.from('x') }).catch((e: unknown) => e);
      expect((err as RocketMQError).code).toBe('ERR_NOT_FOUND');
      expect((err as Error).message).toContain('is this the broker address?');
    } finally {
      await p.shutdown();
      await new Promise((r) => server.close(r));
    }
  });

  it('a producer that is never shut down does not keep the process alive', async () => {
    const script = `
      import { Producer } from ${JSON.stringify(path.join(root, 'dist/index.js'))};
      const p = new Producer({ endpoints: ${JSON.stringify(fx.broker.address)}, heartbeatBrokerIntervalMs: 50 });
      await p.start();
      await p.send({ topic: 'ExitT', body: Buffer.from('x') });
      console.log('sent');
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const t = setTimeout(() => {
        child.kill('SIGKILL');
        resolve(-1);
      }, 15_000);
      child.on('close', (c) => {
        clearTimeout(t);
        resolve(c);
      });
    });
    expect(out.trim()).toBe('sent');
    expect(code).toBe(0);
  });

  it('Broker.start refuses a misspelt or unknown option, as the clients do', async () => {
    const storePath = tempStorePath();
    try {
      const bad = { storePath, port: 0, prot: 8081 } as unknown as Parameters<typeof Broker.start>[0];
      const err = await Broker.start(bad).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(InvalidArgumentError);
      expect((err as InvalidArgumentError).field).toBe('prot');
      const badStore = { storePath, port: 0, store: { mappedFileSizeCommitLogg: 1 } } as unknown as Parameters<
        typeof Broker.start
      >[0];
      const err2 = await Broker.start(badStore).catch((e: unknown) => e);
      expect(err2).toBeInstanceOf(InvalidArgumentError);
      expect((err2 as Error).message).toContain('mappedFileSizeCommitLogg');
    } finally {
      rmSync(storePath, { recursive: true, force: true });
    }
  });
});
