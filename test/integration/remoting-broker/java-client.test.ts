/**
 * RocketMQ's own Java client (4.9.8, then 5.3.3: one suite each, from the shared kits) against the bundled broker over its remoting
 * port, used as name server and broker at once: producers (SEND_MESSAGE_V2, batches), push consumers
 * with tag and SQL92 subscriptions, a CLUSTERING group of two Java members, one mixing two Java members
 * with our PushConsumer over TCP and over HTTP (every queue owned by the member RocketMQ's averaging
 * allocation names, each message consumed once, leavers taken over), RECONSUME_LATER through
 * %RETRY% to %DLQ% after maxReconsumeTimes, and committed offsets that survive a broker restart.
 * One JVM serves the whole file (Driver.java); skipped with one line when Java or the kit is missing.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { AllocateMessageQueueAveragely } from '../../../src/client/consumer/allocate-message-queue.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import type { MessageExt, MessageQueue } from '../../../src/common/message.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import {
  DRIVER_SOURCE,
  JavaDriver,
  compileJava,
  describeWithJavaEach,
  javaKit,
  waitUntil,
  type JavaMessage,
} from '../../support/java-client.js';

/** One delivery in the mixed group: which member got which message from which queue. */
interface Delivery {
  member: string;
  body: string;
  queueId: number;
}

/** Every delay level 200 ms, so retries come back quickly. */
const FAST_DELAY_LEVELS = Array.from({ length: 18 }, () => '200ms').join(' ');

describeWithJavaEach(
  (release) => `RocketMQ Java client ${release} against the bundled broker (remoting)`,
  (version) => {
    let classes: string;
    let storePath: string;
    let broker: Broker;
    let http: TestBrokerClient;
    let java: JavaDriver;
    let ns: string;

    const startBroker = (ports: { port?: number; remotingPort?: number } = {}): Promise<Broker> =>
      Broker.start({
        storePath,
        port: ports.port ?? 0,
        remotingPort: ports.remotingPort ?? 0,
        store: { messageDelayLevel: FAST_DELAY_LEVELS },
      });

    const createTopic = async (topic: string, queues: number): Promise<void> => {
      const r = await http.call('UPDATE_AND_CREATE_TOPIC', {
        topic,
        readQueueNums: queues,
        writeQueueNums: queues,
        perm: 6,
      });
      expect(r.code).toBe(ResponseCode.SUCCESS);
    };

    const received = (consumer: string): JavaMessage[] => java.messages.filter((m) => m.c === consumer);
    const bodies = (consumer: string): string[] => [...new Set(received(consumer).map((m) => m.body))].sort();
    const state = (): string => `messages ${JSON.stringify(java.messages.slice(-20))}\n${java.log.slice(-3000)}`;

    beforeAll(async () => {
      const kit = javaKit(version);
      if (!kit) return;
      classes = compileJava(kit, [DRIVER_SOURCE]);
      storePath = tempStorePath('rmq-java-');
      broker = await startBroker();
      http = new TestBrokerClient(broker.address);
      ns = broker.remotingAddress as string;
      java = await JavaDriver.start(kit, classes);
      await java.command('producer', 'P1', ns);
    }, 60_000);

    afterAll(async () => {
      await java?.close();
      await http?.close();
      await broker?.shutdown();
      if (storePath) rmSync(storePath, { recursive: true, force: true });
      if (classes) rmSync(classes, { recursive: true, force: true });
    }, 60_000);

    test('a Java producer sends single and batch messages; a Java push consumer receives by tag', async () => {
      const topic = uniqueName('JT');
      await createTopic(topic, 4);
      const sent: string[] = [];
      for (let i = 0; i < 8; i++) {
        const tag = i % 2 === 0 ? 'TagA' : 'TagB';
        const r = await java.command('send', 'P1', topic, tag, `k${i}`, `tag-${i}`, `seq=${i}`);
        expect(r.status).toBe('SEND_OK');
        expect(String(r.offsetMsgId)).toMatch(/^[0-9A-F]{32}$/);
        sent.push(`tag-${i}`);
      }
      const batch = await java.command('batch', 'P1', topic, 'TagA', '3', 'batch-');
      expect(batch.status).toBe('SEND_OK');
      // Our HTTP pull sees the Java producer's messages with their tags.
      const max = await http.call('GET_MAX_OFFSET', { topic, queueId: Number(batch.queueId) });
      expect(Number(max.header.offset)).toBeGreaterThanOrEqual(3);

      await java.command('consumer', 'C1', ns, uniqueName('JG'), topic, 'tag', 'TagA', 'ok', '16');
      const want = ['batch-0', 'batch-1', 'batch-2', 'tag-0', 'tag-2', 'tag-4', 'tag-6'];
      await waitUntil(() => bodies('C1').length >= want.length, 30_000, state);
      expect(bodies('C1')).toEqual(want);
      expect(received('C1').every((m) => m.tags === 'TagA' && m.topic === topic)).toBe(true);
      await java.command('stop', 'C1');
    }, 60_000);

    test('a Java consumer with an SQL92 subscription gets only the matching messages', async () => {
      const topic = uniqueName('JSql');
      await createTopic(topic, 2);
      for (let i = 0; i < 6; i++) {
        const color = i % 2 === 0 ? 'red' : 'blue';
        await java.command('send', 'P1', topic, 'TagS', '', `sql-${i}`, `color=${color}`, `seq=${i}`);
      }
      await java.command(
        'consumer',
        'C2',
        ns,
        uniqueName('JG'),
        topic,
        'sql',
        "color = 'red' AND seq >= 2",
        'ok',
        '16',
      );
      await waitUntil(() => bodies('C2').length >= 2, 30_000, state);
      await java.command('stop', 'C2');
      expect(bodies('C2')).toEqual(['sql-2', 'sql-4']);
    }, 60_000);

    test('CLUSTERING: two Java members of one group share the queues and together get every message', async () => {
      const topic = uniqueName('JCl');
      const group = uniqueName('JG');
      await createTopic(topic, 4);
      await java.command('consumer', 'C3a', ns, group, topic, 'tag', '*', 'ok', '16');
      await java.command('consumer', 'C3b', ns, group, topic, 'tag', '*', 'ok', '16');
      await waitUntil(
        () => broker.consumerManager.getConsumerGroupInfo(group)?.getAllClientIds().length === 2,
        20_000,
        state,
      );
      // Send until both members have had a message (they rebalance on NOTIFY_CONSUMER_IDS_CHANGED), then more.
      let n = 0;
      const send = async (): Promise<void> => {
        await java.command('send', 'P1', topic, 'TagC', '', `cl-${n}`);
        n++;
      };
      while (n < 200 && (received('C3a').length === 0 || received('C3b').length === 0)) {
        await send();
        await new Promise((r) => setTimeout(r, 50));
      }
      // A change within a group's notice window is announced at the window's end: let it go out first.
      await waitUntil(() => broker.remotingStats()?.noticesPending === 0, 10_000, state);
      const all = (): Set<string> => new Set([...bodies('C3a'), ...bodies('C3b')]);
      // After the rebalance each queue has one owner: a round of 8 messages goes to exactly one member per
      // queue. Rounds repeat until one does, as each Java member applies the notice on its own thread, which
      // a busy machine may delay past the first round.
      let shared: number[] = [];
      for (let round = 0; round < 10; round++) {
        const from = n;
        for (let i = 0; i < 8; i++) await send();
        await waitUntil(() => all().size === n, 30_000, state);
        const queuesSince = (c: string): Set<number> =>
          new Set(
            received(c)
              .filter((m) => Number(m.body.slice(3)) >= from)
              .map((m) => m.queueId),
          );
        const a = queuesSince('C3a');
        shared = [...queuesSince('C3b')].filter((q) => a.has(q));
        if (shared.length === 0) break;
      }
      expect(shared).toEqual([]);
      expect(received('C3a').length).toBeGreaterThan(0);
      expect(received('C3b').length).toBeGreaterThan(0);
      await java.command('stop', 'C3a');
      await java.command('stop', 'C3b');
    }, 90_000);

    test('a CLUSTERING group of two Java members and ours (TCP and HTTP): queues split by the shared allocation, each message consumed once, leavers taken over', async () => {
      const ours = new Map<string, { consumer: PushConsumer; assigned: number[]; deliveries: Delivery[] }>();
      const producer = new Producer({ endpoints: broker.address });
      await producer.start();
      try {
        const QUEUES = 8;
        const topic = uniqueName('JMix');
        const group = uniqueName('JMixG');
        const tag = `${process.pid}${Date.now().toString(36)}`;
        await createTopic(topic, QUEUES);

        // Member name -> its client id suffix (clientIP@instanceName).
        const instance = {
          javaA: `javaA${tag}`,
          javaB: `javaB${tag}`,
          tcp: `tsTcp${tag}`,
          http: `tsHttp${tag}`,
        };
        const startOurs = async (name: 'tcp' | 'http'): Promise<void> => {
          const transport =
            name === 'tcp' ? { namesrvAddr: broker.remotingAddress as string } : { endpoints: broker.address };
          const consumer = new PushConsumer({
            ...transport,
            consumerGroup: group,
            instanceName: instance[name],
            consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
            persistConsumerOffsetIntervalMs: 1000,
            rebalanceIntervalMs: 1000,
          });
          const entry = { consumer, assigned: [] as number[], deliveries: [] as Delivery[] };
          consumer.events.on('rebalance', (e) => {
            if (e.topic === topic) entry.assigned = e.assigned.map((q) => q.queueId).sort((a, b) => a - b);
          });
          consumer.subscribe(topic, '*').registerMessageListener((msgs: MessageExt[]) => {
            for (const m of msgs)
              entry.deliveries.push({ member: name, body: m.body?.toString() ?? '', queueId: m.queueId });
            return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
          });
          ours.set(name, entry);
          await consumer.start();
        };
        await java.command('consumer', instance.javaA, ns, group, topic, 'tag', '*', 'ok', '16');
        await java.command('consumer', instance.javaB, ns, group, topic, 'tag', '*', 'ok', '16');
        await startOurs('tcp');
        await startOurs('http');

        const memberOf = (instanceName: string): string =>
          Object.entries(instance).find(([, v]) => v === instanceName)?.[0] ?? instanceName;
        const deliveries = (): Delivery[] => [
          ...java.messages
            .filter((m) => m.topic === topic)
            .map((m) => ({ member: memberOf(m.c), body: m.body, queueId: m.queueId })),
          ...[...ours.values()].flatMap((o) => o.deliveries),
        ];
        const clientIds = (): string[] => broker.consumerManager.getConsumerGroupInfo(group)?.getAllClientIds() ?? [];
        /** RocketMQ's averaging allocation over the broker's member list, per member. */
        const expectedOwners = (): Map<number, string> => {
          const mqAll: MessageQueue[] = Array.from({ length: QUEUES }, (_, queueId) => ({
            topic,
            brokerName: broker.options.brokerName,
            queueId,
          }));
          const cids = [...clientIds()].sort();
          const owners = new Map<number, string>();
          for (const cid of cids)
            for (const q of new AllocateMessageQueueAveragely().allocate(group, cid, mqAll, cids))
              owners.set(q.queueId, memberOf(cid.slice(cid.indexOf('@') + 1)));
          return owners;
        };
        const state = (): string =>
          `members ${JSON.stringify(clientIds())}, ours ${JSON.stringify(
            [...ours].map(([k, v]) => [k, v.assigned]),
          )}, last ${JSON.stringify(deliveries().slice(-20))}\n${java.log.slice(-2000)}`;

        let sent = 0;
        /** Sends `n` messages with the prefix, message i to queue i % QUEUES; resolves with their bodies. */
        const sendRound = async (prefix: string, n: number): Promise<string[]> => {
          const bodies = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
          for (let i = 0; i < n; i++)
            await producer.send(
              { topic, body: Buffer.from(bodies[i] as string) },
              { selector: (queues) => queues.find((q) => q.queueId === i % QUEUES) as MessageQueue },
            );
          sent += n;
          return bodies;
        };
        const deliveredOf = (bodies: string[]): Delivery[] => {
          const want = new Set(bodies);
          return deliveries().filter((d) => want.has(d.body));
        };
        /**
         * Sends probe rounds until one shows the steady state for `members`: every probe delivered once, each
         * queue served by exactly the member the shared allocation names, and ours assigned exactly those queues.
         */
        let probe = 0;
        const settle = async (members: string[]): Promise<Map<number, string>> => {
          const deadline = Date.now() + 60_000;
          for (;;) {
            if (Date.now() > deadline) throw new Error(`no steady allocation for ${members.join(',')}: ${state()}`);
            if (clientIds().length !== members.length) {
              await new Promise((r) => setTimeout(r, 50));
              continue;
            }
            const bodies = await sendRound(`probe${probe++}`, QUEUES * 2);
            await waitUntil(
              () => new Set(deliveredOf(bodies).map((d) => d.body)).size === bodies.length,
              30_000,
              state,
            );
            const got = deliveredOf(bodies);
            const expected = expectedOwners();
            const servedBy = new Map<number, Set<string>>();
            for (const d of got)
              (servedBy.get(d.queueId) ?? servedBy.set(d.queueId, new Set()).get(d.queueId))?.add(d.member);
            const agrees =
              got.length === bodies.length &&
              [...Array(QUEUES).keys()].every((q) => {
                const s = servedBy.get(q);
                return s?.size === 1 && s.has(expected.get(q) as string);
              }) &&
              [...ours].every(
                ([name, o]) =>
                  !members.includes(name) ||
                  JSON.stringify(o.assigned) ===
                    JSON.stringify(
                      [...expected]
                        .filter(([, m]) => m === name)
                        .map(([q]) => q)
                        .sort((a, b) => a - b),
                    ),
              ) &&
              new Set(expected.values()).size === members.length &&
              members.every((m) => [...expected.values()].includes(m));
            if (agrees) return expected;
          }
        };
        /** A measured round: every message delivered exactly once, each by its queue's owner. */
        const measured = async (prefix: string, owners: Map<number, string>): Promise<void> => {
          const bodies = await sendRound(prefix, 120);
          await waitUntil(() => new Set(deliveredOf(bodies).map((d) => d.body)).size === bodies.length, 30_000, state);
          const got = deliveredOf(bodies);
          expect(got.length).toBe(bodies.length);
          for (const d of got) expect(d.member).toBe(owners.get(d.queueId));
        };

        // Four members: two queues each, allocated as RocketMQ's averaging strategy says, by all of them alike.
        const four = await settle(['javaA', 'javaB', 'tcp', 'http']);
        expect([...four.values()].filter((m) => m === 'tcp')).toHaveLength(2);
        await measured('four', four);

        // A Java member leaves (it commits its offsets and unregisters): the other three take its queues.
        await java.command('stop', instance.javaB);
        const three = await settle(['javaA', 'tcp', 'http']);
        await measured('three', three);

        // Our TCP member leaves: the Java member and our HTTP member take over.
        await ours.get('tcp')?.consumer.shutdown();
        const two = await settle(['javaA', 'http']);
        expect([...two.values()].filter((m) => m === 'http')).toHaveLength(4);
        await measured('two', two);

        // Nothing lost overall: every message sent (probes included) was consumed by the group.
        await waitUntil(() => new Set(deliveries().map((d) => d.body)).size === sent, 10_000, state);
        await java.command('stop', instance.javaA);
      } finally {
        for (const m of ours.values()) await m.consumer.shutdown().catch(() => undefined);
        await producer.shutdown();
      }
    }, 240_000);

    test('RECONSUME_LATER goes to %RETRY% and, after maxReconsumeTimes, to %DLQ%', async () => {
      const topic = uniqueName('JRt');
      const group = uniqueName('JG');
      await createTopic(topic, 1);
      await java.command('consumer', 'C4', ns, group, topic, 'tag', '*', 'later', '2');
      await java.command('send', 'P1', topic, 'TagR', '', 'retry-me');
      const dlq = `%DLQ%${group}`;
      const dlqCount = (): number => broker.store.getMaxOffsetInQueue(dlq, 0);
      await waitUntil(() => received('C4').length >= 3 && dlqCount() === 1, 40_000, state);
      await java.command('stop', 'C4');
      expect(received('C4').map((m) => m.reconsumeTimes)).toEqual([0, 1, 2]);
      expect(received('C4').every((m) => m.body === 'retry-me' && m.topic === topic)).toBe(true);
    }, 60_000);

    test('committed offsets survive a broker restart: the group resumes where it stopped', async () => {
      const topic = uniqueName('JRs');
      const group = uniqueName('JG');
      await createTopic(topic, 2);
      for (let i = 0; i < 4; i++) await java.command('send', 'P1', topic, 'TagO', '', `before-${i}`);
      await java.command('consumer', 'C5', ns, group, topic, 'tag', '*', 'ok', '16');
      await waitUntil(() => bodies('C5').length === 4, 30_000, state);
      // The consumer persists its offsets every second (and at shutdown): wait until the broker has them all.
      const committedToEnd = (): boolean =>
        [0, 1].every(
          (q) =>
            broker.consumerOffsetManager.queryOffset(group, topic, q) === broker.store.getMaxOffsetInQueue(topic, q),
        );
      await waitUntil(committedToEnd, 20_000, state);
      await java.command('stop', 'C5');

      const ports = { port: broker.port, remotingPort: broker.remotingPort };
      await broker.shutdown();
      await http.close();
      broker = await startBroker(ports);
      http = new TestBrokerClient(broker.address);
      for (let i = 0; i < 3; i++) await java.command('send', 'P1', topic, 'TagO', '', `after-${i}`);
      await java.command('consumer', 'C5b', ns, group, topic, 'tag', '*', 'ok', '16');
      await waitUntil(() => bodies('C5b').length >= 3, 40_000, state);
      await java.command('stop', 'C5b');
      expect(bodies('C5b')).toEqual(['after-0', 'after-1', 'after-2']);
    }, 90_000);
  },
);
