/**
 * One CLUSTERING group on the bundled broker mixing RocketMQ's own Java client (two members, over the
 * remoting port used as name server) with ours (a PushConsumer over TCP through namesrvAddr and one
 * over HTTP endpoints): every queue has exactly one owner and the owners are what RocketMQ's averaging
 * allocation gives over the group's client ids (so all members agree), every message is consumed once,
 * and when members leave (a Java one, then our TCP one) the others take their queues over.
 * Skipped with one line when Java or the kit is missing.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { AllocateMessageQueueAveragely } from '../../../src/client/allocate-message-queue.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer-constants.js';
import { Producer } from '../../../src/client/producer.js';
import { PushConsumer } from '../../../src/client/push-consumer.js';
import type { MessageExt, MessageQueue } from '../../../src/common/message.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import {
  DRIVER_SOURCE,
  JavaDriver,
  compileJava,
  describeWithJava,
  javaKit,
  waitUntil,
} from '../../support/java-client.js';

const QUEUES = 8;

interface Delivery {
  member: string;
  body: string;
  queueId: number;
}

describeWithJava('a CLUSTERING group of RocketMQ Java members and ours (TCP and HTTP) on the bundled broker', () => {
  let classes: string;
  let storePath: string;
  let broker: Broker;
  let http: TestBrokerClient;
  let java: JavaDriver;
  let producer: Producer;
  const ours = new Map<string, { consumer: PushConsumer; assigned: number[]; deliveries: Delivery[] }>();

  beforeAll(async () => {
    const kit = javaKit();
    if (!kit) return;
    classes = compileJava(kit, [DRIVER_SOURCE]);
    storePath = tempStorePath('rmq-mixed-');
    broker = await Broker.start({ storePath, port: 0, remotingPort: 0 });
    http = new TestBrokerClient(broker.address);
    java = await JavaDriver.start(kit, classes);
    producer = new Producer({ endpoints: broker.address });
    await producer.start();
  }, 60_000);

  afterAll(async () => {
    for (const m of ours.values()) await m.consumer.shutdown().catch(() => undefined);
    await producer?.shutdown();
    await java?.close();
    await http?.close();
    await broker?.shutdown();
    if (storePath) rmSync(storePath, { recursive: true, force: true });
    if (classes) rmSync(classes, { recursive: true, force: true });
  }, 60_000);

  test('queues split by the shared allocation, each message consumed once, leavers taken over', async () => {
    const topic = uniqueName('JMix');
    const group = uniqueName('JMixG');
    const tag = `${process.pid}${Date.now().toString(36)}`;
    const created = await http.call('UPDATE_AND_CREATE_TOPIC', {
      topic,
      readQueueNums: QUEUES,
      writeQueueNums: QUEUES,
      perm: 6,
    });
    expect(created.code).toBe(ResponseCode.SUCCESS);

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
    const ns = broker.remotingAddress as string;
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
        await waitUntil(() => new Set(deliveredOf(bodies).map((d) => d.body)).size === bodies.length, 30_000, state);
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
  }, 240_000);
});
