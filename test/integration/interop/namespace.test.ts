/**
 * Namespaces across clients: RocketMQ's Java client (`setNamespace`) and ours with the same namespace
 * produce to one topic and consume in one group together — on a stock RocketMQ cluster (the 4.9.8 kit,
 * then the 5.3.3 kit, each with its own Java client) and on the bundled broker's remoting port. Both
 * sides see the plain topic; the cluster holds `ns%Topic` and `ns%group`. One kit cluster and one JVM
 * serve each version's suite; each is skipped with one line when its kit or Java is missing.
 */
import { rmSync } from 'node:fs';
import { AdminClient } from '../../../src/index.js';
import { Broker as BundledBroker } from '../../../src/broker/index.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import {
  DRIVER_SOURCE,
  JavaDriver,
  compileJava,
  describeWithJavaEach,
  javaKit,
  waitUntil,
} from '../../support/java-client.js';
import { startKit, type RocketMQKit } from '../../support/rocketmq-kit.js';

describeWithJavaEach(
  (release) => `namespaces: RocketMQ ${release} Java clients with setNamespace and ours in one group`,
  (version) => {
    let classes: string;
    let java: JavaDriver;
    let kit: RocketMQKit;
    let storePath: string;
    let broker: BundledBroker;

    beforeAll(async () => {
      const jk = javaKit(version);
      if (!jk) return;
      classes = compileJava(jk, [DRIVER_SOURCE]);
      storePath = tempStorePath('rmq-ns-interop-');
      [kit, broker, java] = await Promise.all([
        startKit({ version }),
        BundledBroker.start({ storePath, port: 0, remotingPort: 0 }),
        JavaDriver.start(jk, classes),
      ]);
    }, 180_000);

    afterAll(async () => {
      await java?.close();
      await kit?.stop();
      await broker?.shutdown();
      if (storePath) rmSync(storePath, { recursive: true, force: true });
      if (classes) rmSync(classes, { recursive: true, force: true });
    }, 60_000);

    async function mixedGroup(namesrvAddr: string, label: string): Promise<void> {
      const ns = uniqueName(`ns_${label}`);
      const topic = uniqueName('NsInteropT');
      const group = uniqueName('NsInteropG');
      const nsAdmin = new AdminClient({ namesrvAddr, namespace: ns });
      const plainAdmin = new AdminClient({ namesrvAddr });
      const producer = new Producer({ namesrvAddr, producerGroup: uniqueName('NsP'), namespace: ns });
      const ours: Array<{ topic: string; body: string }> = [];
      const consumer = new PushConsumer({
        namesrvAddr,
        consumerGroup: group,
        namespace: ns,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      });
      const javaProducer = `JP_${label}`;
      const javaConsumer = `JC_${label}`;
      const javaGot = (): Array<{ topic: string; body: string }> =>
        java.messages.filter((m) => m.c === javaConsumer).map((m) => ({ topic: m.topic, body: m.body }));
      const state = (): string =>
        `ours ${JSON.stringify(ours.slice(-10))} java ${JSON.stringify(javaGot().slice(-10))}\n${java.log.slice(-2000)}`;
      try {
        await nsAdmin.createTopic(topic, { queueNums: 4 });
        expect(await plainAdmin.topicList()).toContain(`${ns}%${topic}`);
        await producer.start();
        await java.command('producer', javaProducer, namesrvAddr, `ns=${ns}`);
        await java.command('consumer', javaConsumer, namesrvAddr, group, topic, 'tag', '*', 'ok', '16', `ns=${ns}`);
        consumer.subscribe(topic, '*');
        consumer.registerMessageListener((msgs) => {
          for (const m of msgs) ours.push({ topic: m.topic, body: m.body?.toString() ?? '' });
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        });
        await consumer.start();
        // Both members in the group: ours holds half of the topic's queues.
        await waitUntil(
          () => consumer.assignedQueues().filter((q) => q.topic === topic).length === 2,
          60_000,
          () => JSON.stringify(consumer.assignedQueues()),
        );
        const conn = await nsAdmin.consumerConnection(group);
        expect(conn.group).toBe(group);
        expect(conn.connections.length).toBe(2);

        const want: string[] = [];
        for (let i = 0; i < 8; i++) {
          const r = await java.command('send', javaProducer, topic, 'T', '', `java-${i}`);
          expect(r.status).toBe('SEND_OK');
          const sent = await producer.send({ topic, tags: 'T', body: Buffer.from(`ours-${i}`) });
          expect(sent.messageQueue.topic).toBe(topic);
          want.push(`java-${i}`, `ours-${i}`);
        }
        const seen = (): Set<string> => new Set([...ours, ...javaGot()].map((m) => m.body));
        await waitUntil(() => want.every((b) => seen().has(b)), 60_000, state);
        expect(ours.length).toBeGreaterThan(0);
        expect(javaGot().length).toBeGreaterThan(0);
        // Everyone sees the plain topic; the Java producer's messages reached our member and the other way round.
        expect([...ours, ...javaGot()].every((m) => m.topic === topic)).toBe(true);
        expect(ours.some((m) => m.body.startsWith('java-'))).toBe(true);
        expect(javaGot().some((m) => m.body.startsWith('ours-'))).toBe(true);
        // The cluster keeps the group's offsets under its wire name.
        let diff = -1;
        const deadline = Date.now() + 30_000;
        while (Date.now() < deadline) {
          diff = (await plainAdmin.consumerProgress(`${ns}%${group}`, `${ns}%${topic}`)).diffTotal;
          if (diff === 0) break;
          await new Promise((r) => setTimeout(r, 200));
        }
        expect(diff).toBe(0);
        const progress = await nsAdmin.consumerProgress(group, topic);
        expect(progress.queues.every((q) => q.mq.topic === topic)).toBe(true);
      } finally {
        await java.command('stop', javaConsumer).catch(() => undefined);
        await java.command('stop', javaProducer).catch(() => undefined);
        await consumer.shutdown();
        await producer.shutdown();
        await nsAdmin.shutdown();
        await plainAdmin.shutdown();
      }
    }

    test('on the RocketMQ kit', async () => {
      await mixedGroup(kit.namesrvAddr, 'kit');
    }, 180_000);

    test('on the bundled broker (remoting)', async () => {
      await mixedGroup(broker.remotingAddress as string, 'ours');
    }, 180_000);
  },
);
