/**
 * TLS interoperability, both ways: our Producer, PushConsumer and AdminClient against RocketMQ 4.9.8's
 * NameServer and broker in `tls.server.mode=enforcing` (the kit's self-signed test certificate, so the
 * client does not check it), and RocketMQ's Java client with `-Dtls.enable=true` against our broker with
 * an enforcing TLS remoting port (an openssl certificate made for this file). A plain client of ours on
 * the kit's enforcing port fails fast with an error that names the address and TLS.
 * Skipped with one line when the kit, Java or openssl is missing.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { AdminClient } from '../../../src/client/admin/admin-client.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { RocketMQError } from '../../../src/common/errors.js';
import type { MessageExt } from '../../../src/common/message.js';
import { uniqueName } from '../../support/broker-client.js';
import { tempStorePath, waitFor } from '../../support/broker-fixture.js';
import { DRIVER_SOURCE, JavaDriver, compileJava, javaKit, javaKitMissing } from '../../support/java-client.js';
import { describeUnless, kitDescribe, startKit, type RocketMQKit } from '../../support/rocketmq-kit.js';
import { makeTestCert, openSslMissing, type TestCert } from '../../support/tls-certs.js';

/** RocketMQ's switches for TLS-only servers that also register (broker to NameServer) over TLS, with a test certificate. */
const KIT_TLS_OPTS = ['-Dtls.server.mode=enforcing', '-Dtls.enable=true', '-Dtls.test.mode.enable=true'];
/** The kit's certificate is self-signed and made at its start: accept it without checking. */
const TRUST_ANY = { rejectUnauthorized: false };

kitDescribe('our clients on RocketMQ 4.9.8 with TLS enforcing', () => {
  let kit: RocketMQKit;

  beforeAll(async () => {
    kit = await startKit({ javaOpts: KIT_TLS_OPTS });
  }, 300_000);

  afterAll(async () => {
    await kit?.stop();
  }, 120_000);

  test('AdminClient creates a topic, Producer sends and PushConsumer consumes, all over TLS', async () => {
    const topic = uniqueName('KitTls');
    const admin = new AdminClient({ namesrvAddr: kit.namesrvAddr, tls: TRUST_ANY, requestTimeoutMs: 10_000 });
    const producer = new Producer({
      namesrvAddr: kit.namesrvAddr,
      producerGroup: uniqueName('KitTlsP'),
      tls: TRUST_ANY,
    });
    const consumer = new PushConsumer({
      namesrvAddr: kit.namesrvAddr,
      consumerGroup: uniqueName('KitTlsC'),
      tls: TRUST_ANY,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      rebalanceIntervalMs: 1000,
      pollNameServerIntervalMs: 1000,
    });
    try {
      await admin.createTopic(topic);
      await producer.start();
      const sent: string[] = [];
      for (let i = 0; i < 10; i++) {
        const body = `kit-tls-${i}`;
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
      await waitFor(() => got.size === sent.length, 60_000);
      expect([...got].sort()).toEqual(sent.sort());
    } finally {
      await consumer.shutdown();
      await producer.shutdown();
      await admin.shutdown();
    }
  }, 120_000);

  test('a plain client is refused by the enforcing NameServer with an error naming the address and TLS', async () => {
    const producer = new Producer({ namesrvAddr: kit.namesrvAddr, producerGroup: uniqueName('KitPlainP') });
    const err = await producer
      .start()
      .then(() => producer.send({ topic: uniqueName('KitPlain'), body: Buffer.from('x') }))
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    await producer.shutdown();
    expect(err).toBeInstanceOf(RocketMQError);
    expect((err as Error).message).toContain(kit.namesrvAddr);
    expect((err as Error).message).toMatch(/TLS/);
  }, 60_000);
});

describeUnless(
  javaKit() ? openSslMissing() : javaKitMissing(),
  'RocketMQ Java client with TLS on our broker (enforcing)',
  () => {
    let cert: TestCert;
    let classes: string;
    let storePath: string;
    let broker: Broker;
    let java: JavaDriver;

    beforeAll(async () => {
      const jkit = javaKit();
      if (!jkit) return;
      cert = makeTestCert() as TestCert;
      classes = compileJava(jkit, [DRIVER_SOURCE]);
      storePath = tempStorePath('rmq-java-tls-');
      broker = await Broker.start({
        storePath,
        port: 0,
        remotingPort: 0,
        tls: { cert: cert.certFile, key: cert.keyFile, mode: 'enforcing' },
      });
      // tls.test.mode.enable makes RocketMQ's client trust any certificate (ours is self-signed).
      java = await JavaDriver.start(jkit, classes, ['-Dtls.enable=true', '-Dtls.test.mode.enable=true']);
    }, 120_000);

    afterAll(async () => {
      await java?.close();
      await broker?.shutdown();
      if (storePath) rmSync(storePath, { recursive: true, force: true });
      if (classes) rmSync(classes, { recursive: true, force: true });
      cert?.remove();
    }, 60_000);

    test('a Java producer sends and a Java push consumer consumes over TLS', async () => {
      const ns = broker.remotingAddress as string;
      const topic = uniqueName('JTls');
      const admin = new AdminClient({ namesrvAddr: ns, tls: { ca: cert.certPem } });
      try {
        await admin.createTopic(topic);
      } finally {
        await admin.shutdown();
      }
      await java.command('producer', 'TP1', ns);
      const sent: string[] = [];
      for (let i = 0; i < 5; i++) {
        const body = `java-tls-${i}`;
        const r = await java.command('send', 'TP1', topic, 'TagA', '', body);
        expect(r.status).toBe('SEND_OK');
        sent.push(body);
      }
      await java.command('consumer', 'TC1', ns, uniqueName('JTlsG'), topic, 'tag', '*', 'ok', '16');
      const bodies = (): string[] => [...new Set(java.messages.filter((m) => m.c === 'TC1').map((m) => m.body))].sort();
      await waitFor(() => bodies().length === sent.length, 60_000).catch(() => {
        throw new Error(`Java consumer got ${JSON.stringify(bodies())}\n${java.log.slice(-3000)}`);
      });
      expect(bodies()).toEqual(sent.sort());
    }, 120_000);
  },
);
