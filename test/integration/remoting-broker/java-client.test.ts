/**
 * RocketMQ's own Java client (4.9.8, from the shared kit) against the bundled broker over its remoting
 * port, used as name server and broker at once: producers (SEND_MESSAGE_V2, batches), push consumers
 * with tag and SQL92 subscriptions, a CLUSTERING group of two Java members, RECONSUME_LATER through
 * %RETRY% to %DLQ% after maxReconsumeTimes, and committed offsets that survive a broker restart.
 * One JVM serves the whole file (Driver.java); skipped with one line when Java or the kit is missing.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
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
  type JavaMessage,
} from '../../support/java-client.js';

/** Every delay level 200 ms, so retries come back quickly. */
const FAST_DELAY_LEVELS = Array.from({ length: 18 }, () => '200ms').join(' ');

describeWithJava('RocketMQ Java client against the bundled broker (remoting)', () => {
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
    const kit = javaKit();
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
    await java.command('consumer', 'C2', ns, uniqueName('JG'), topic, 'sql', "color = 'red' AND seq >= 2", 'ok', '16');
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
    for (let i = 0; i < 8; i++) await send();
    const all = (): Set<string> => new Set([...bodies('C3a'), ...bodies('C3b')]);
    await waitUntil(() => all().size === n, 30_000, state);
    expect(received('C3a').length).toBeGreaterThan(0);
    expect(received('C3b').length).toBeGreaterThan(0);
    // After the rebalance each queue has one owner: the later messages went to exactly one member.
    const lastQueues = (c: string): Set<number> =>
      new Set(
        received(c)
          .filter((m) => Number(m.body.slice(3)) >= n - 8)
          .map((m) => m.queueId),
      );
    const a = lastQueues('C3a');
    expect([...lastQueues('C3b')].some((q) => a.has(q))).toBe(false);
    await java.command('stop', 'C3a');
    await java.command('stop', 'C3b');
  }, 90_000);

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
        (q) => broker.consumerOffsetManager.queryOffset(group, topic, q) === broker.store.getMaxOffsetInQueue(topic, q),
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
});
