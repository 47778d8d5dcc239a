/**
 * TLS between our clients and our broker: the remoting port in `enforcing` and `permissive` mode
 * (RocketMQ's tls.server.mode), HTTPS on the HTTP listener, and what goes wrong said clearly — a plain
 * client on a TLS-only port, a TLS client on a plain port, an untrusted certificate, certificate files
 * that do not parse, bytes that are not TLS. The certificate is made with openssl for this file.
 */
import net from 'node:net';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Broker } from '../../../src/broker/index.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { InvalidArgumentError, RocketMQError } from '../../../src/common/errors.js';
import type { Logger } from '../../../src/common/logger.js';
import type { MessageExt } from '../../../src/common/message.js';
import { TlsError, type TlsOptions } from '../../../src/remoting/tls-options.js';
import { uniqueName } from '../../support/broker-client.js';
import { tempStorePath, waitFor } from '../../support/broker-fixture.js';
import { describeUnless } from '../../support/rocketmq-kit.js';
import { makeTestCert, openSslMissing, type TestCert } from '../../support/tls-certs.js';

/** A logger that keeps its warnings. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const noop = (): void => undefined;
  return {
    warnings,
    debug: noop,
    info: noop,
    error: noop,
    warn: (a: unknown, b?: unknown) => {
      warnings.push(typeof a === 'string' ? a : String(b));
    },
  } as Logger & { warnings: string[] };
}

/** Sends `n` messages with a fresh producer and consumes them with a fresh push consumer, both on `transport`. */
async function sendAndConsume(transport: { namesrvAddr?: string; endpoints?: string; tls?: TlsOptions }, n = 5) {
  const topic = uniqueName('Tls');
  const producer = new Producer({ ...transport, producerGroup: uniqueName('TlsP') });
  await producer.start();
  const consumer = new PushConsumer({
    ...transport,
    consumerGroup: uniqueName('TlsC'),
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    rebalanceIntervalMs: 500,
    startTimeoutMs: 20_000,
  });
  try {
    const sent: string[] = [];
    for (let i = 0; i < n; i++) {
      const body = `tls-${i}`;
      const r = await producer.send({ topic, body: Buffer.from(body) });
      expect(r.sendStatus).toBe('SEND_OK');
      sent.push(body);
    }
    const got = new Set<string>();
    consumer.subscribe(topic, '*').registerMessageListener((msgs: MessageExt[]) => {
      for (const m of msgs) got.add(m.body?.toString() ?? '');
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await consumer.start();
    await waitFor(() => got.size === n, 30_000);
    expect([...got].sort()).toEqual(sent.sort());
  } finally {
    await consumer.shutdown();
    await producer.shutdown();
  }
}

/** Resolves once `socket` is closed by the other side (or errors). */
const closed = (socket: net.Socket): Promise<void> =>
  new Promise((resolve) => {
    socket.on('error', () => undefined);
    socket.once('close', () => resolve());
  });

describeUnless(openSslMissing(), 'TLS on the bundled broker', () => {
  let cert: TestCert;
  const stores: string[] = [];
  const brokers: Broker[] = [];

  const start = async (tls: { mode: 'permissive' | 'enforcing' } | undefined, logger?: Logger): Promise<Broker> => {
    const storePath = tempStorePath('rmq-tls-');
    stores.push(storePath);
    const broker = await Broker.start({
      storePath,
      port: 0,
      remotingPort: 0,
      ...(tls ? { tls: { cert: cert.certFile, key: cert.keyFile, mode: tls.mode } } : {}),
      ...(logger ? { logger } : {}),
    });
    brokers.push(broker);
    return broker;
  };

  beforeAll(() => {
    cert = makeTestCert() as TestCert;
  });

  afterAll(async () => {
    for (const b of brokers) await b.shutdown();
    for (const s of stores) rmSync(s, { recursive: true, force: true });
    cert?.remove();
  });

  describe('enforcing', () => {
    let broker: Broker;
    let logger: ReturnType<typeof recordingLogger>;
    beforeAll(async () => {
      logger = recordingLogger();
      broker = await start({ mode: 'enforcing' }, logger);
    });

    test('a TLS client that trusts the certificate sends and consumes over the remoting port', async () => {
      await sendAndConsume({ namesrvAddr: broker.remotingAddress as string, tls: { ca: cert.certPem } });
    }, 90_000);

    test('HTTPS: the HTTP listener serves TLS with the same certificate', async () => {
      expect(broker.address).toMatch(/^https:\/\//);
      await sendAndConsume({ endpoints: broker.address, tls: { ca: cert.certPem } });
    }, 90_000);

    test('a plain client is refused with an error that names the address and TLS; the port goes on serving', async () => {
      const addr = broker.remotingAddress as string;
      const producer = new Producer({ namesrvAddr: addr, producerGroup: uniqueName('PlainP') });
      const err = await producer
        .start()
        .then(() => producer.send({ topic: uniqueName('Plain'), body: Buffer.from('x') }))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      await producer.shutdown();
      expect(err).toBeInstanceOf(RocketMQError);
      expect((err as Error).message).toContain(addr);
      expect((err as Error).message).toMatch(/TLS/);
      await waitFor(() => logger.warnings.some((w) => /plain \(non-TLS\) connection/.test(w)), 10_000);
      // Refusals are logged rarely, never per connection.
      const before = logger.warnings.length;
      for (let i = 0; i < 5; i++) {
        const s = net.connect(broker.remotingPort as number, '127.0.0.1');
        s.on('connect', () => s.write(Buffer.from([0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0, 0])));
        await closed(s);
      }
      expect(logger.warnings.length - before).toBeLessThanOrEqual(1);
      await sendAndConsume({ namesrvAddr: addr, tls: { ca: cert.certPem } }, 1);
    }, 90_000);

    test('a handshake that is not TLS after its first byte is closed, not a crash', async () => {
      const s = net.connect(broker.remotingPort as number, '127.0.0.1');
      s.on('connect', () => s.write(Buffer.concat([Buffer.from([0x16]), Buffer.alloc(64, 0xab)])));
      await closed(s);
      await waitFor(() => logger.warnings.some((w) => /TLS handshake failed/.test(w)), 10_000);
      await sendAndConsume({ namesrvAddr: broker.remotingAddress as string, tls: { ca: cert.certPem } }, 1);
    }, 60_000);

    test('a client that does not trust the certificate gets a TlsError naming the address', async () => {
      const addr = broker.remotingAddress as string;
      const producer = new Producer({
        namesrvAddr: addr,
        producerGroup: uniqueName('UntrustP'),
        tls: true,
      });
      const err = await producer
        .start()
        .then(() => producer.send({ topic: uniqueName('Untrust'), body: Buffer.from('x') }))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      await producer.shutdown();
      expect(err).toBeInstanceOf(RocketMQError);
      expect((err as Error).message).toContain(addr);
      expect((err as Error).message).toMatch(/TLS handshake with .* failed: self-signed certificate/);
      // The TlsError itself is in the cause chain, with the address and what the TLS layer said.
      const tlsError = findCause(err, (e) => e instanceof TlsError) as TlsError;
      expect(tlsError).toBeInstanceOf(TlsError);
      expect(tlsError.address).toBe(addr);
      expect(tlsError.tlsCode).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
    }, 60_000);
    test('an HTTPS client that does not trust the certificate gets a TlsError naming the URL', async () => {
      const producer = new Producer({ endpoints: broker.address, producerGroup: uniqueName('HttpsUntrustP') });
      const err = await producer
        .start()
        .then(() => producer.send({ topic: uniqueName('HttpsUntrust'), body: Buffer.from('x') }))
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      await producer.shutdown();
      expect(err).toBeInstanceOf(RocketMQError);
      expect((err as Error).message).toMatch(/TLS handshake with https:\/\/127\.0\.0\.1:\d+ failed/);
      expect((findCause(err, (e) => e instanceof TlsError) as TlsError).address).toBe(broker.address);
    }, 60_000);
  });

  test('permissive: plain and TLS clients on the same remoting port', async () => {
    const broker = await start({ mode: 'permissive' });
    const ns = broker.remotingAddress as string;
    await sendAndConsume({ namesrvAddr: ns, tls: { ca: cert.certPem } }, 3);
    await sendAndConsume({ namesrvAddr: ns }, 3);
  }, 120_000);

  test('a TLS client on a plain port gets a TlsError that says the server may not speak TLS', async () => {
    const broker = await start(undefined);
    const addr = broker.remotingAddress as string;
    const producer = new Producer({
      namesrvAddr: addr,
      producerGroup: uniqueName('TlsOnPlain'),
      tls: { ca: cert.certPem },
    });
    const err = await producer
      .start()
      .then(() => producer.send({ topic: uniqueName('TlsOnPlain'), body: Buffer.from('x') }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await producer.shutdown();
    expect(err).toBeInstanceOf(RocketMQError);
    expect((err as Error).message).toContain(addr);
    expect((err as Error).message).toMatch(/TLS handshake with .* failed.*listening with TLS/);
    expect((findCause(err, (e) => e instanceof TlsError) as TlsError).address).toBe(addr);
  }, 60_000);

  test('tls with an http:// endpoint is refused when the client is created', () => {
    expect(() => new Producer({ endpoints: 'http://127.0.0.1:1', producerGroup: 'g', tls: true })).toThrow(
      InvalidArgumentError,
    );
  });

  test('certificate files that do not parse stop the start with an error naming the file', async () => {
    const bad = path.join(cert.dir, 'bad.pem');
    writeFileSync(bad, 'not a certificate\n');
    const storePath = tempStorePath('rmq-tls-bad-');
    stores.push(storePath);
    const startWith = (tls: { cert: string; key: string }) =>
      Broker.start({ storePath, port: 0, remotingPort: 0, tls }).then(
        async (b) => {
          await b.shutdown();
          return undefined;
        },
        (e: unknown) => e as Error,
      );
    const badCert = await startWith({ cert: bad, key: cert.keyFile });
    expect(badCert).toBeInstanceOf(InvalidArgumentError);
    expect(badCert?.message).toContain(bad);
    expect(badCert?.message).toMatch(/not a PEM certificate/);
    const badKey = await startWith({ cert: cert.certFile, key: bad });
    expect(badKey?.message).toContain(bad);
    expect(badKey?.message).toMatch(/not a PEM private key/);
    const missing = await startWith({ cert: path.join(cert.dir, 'missing.pem'), key: cert.keyFile });
    expect(missing?.message).toMatch(/cannot read the certificate file .*missing\.pem/);
    const other = makeTestCert('other') as TestCert;
    try {
      const mismatch = await startWith({ cert: cert.certFile, key: other.keyFile });
      expect(mismatch?.message).toMatch(/does not go with the certificate/);
    } finally {
      other.remove();
    }
  });
});

/** The first error in `err`'s cause chain that `pred` accepts. */
function findCause(err: unknown, pred: (e: unknown) => boolean): unknown {
  for (let e = err, i = 0; e !== undefined && e !== null && i < 10; e = (e as { cause?: unknown }).cause, i++)
    if (pred(e)) return e;
  return undefined;
}
