/**
 * RocketMQ 4.9.8's own `mqadmin` (the kit's, run inside one JVM by Driver.java) against the bundled
 * broker's remoting port used as its name server: the operator commands that used to fail or print
 * wrong figures. Each check reads RocketMQ's output shape and compares the figures with what the Java
 * producer sent and the Java consumer consumed. Skipped with one line without the kit or a JDK.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import {
  DRIVER_SOURCE,
  JavaDriver,
  compileJava,
  describeWithJava,
  javaKit,
  waitUntil,
} from '../../support/java-client.js';

describeWithJava('mqadmin operator commands against the bundled broker', () => {
  let classes: string;
  let storePath: string;
  let broker: Broker;
  let java: JavaDriver;
  let ns: string;
  const topic = uniqueName('OpsT');
  const group = uniqueName('OpsG');
  const admin = (...args: string[]): Promise<string> => java.admin(...args, '-n', ns);

  beforeAll(async () => {
    const kit = javaKit();
    if (!kit) return;
    classes = compileJava(kit, [DRIVER_SOURCE]);
    storePath = tempStorePath('rmq-mqadmin-ops-');
    broker = await Broker.start({ storePath, port: 0, remotingPort: 0 });
    ns = broker.remotingAddress as string;
    java = await JavaDriver.start(kit, classes);
    await admin('updateTopic', '-c', 'DefaultCluster', '-t', topic, '-r', '2', '-w', '2');
    await java.command('producer', 'OP', ns);
    for (let i = 0; i < 6; i++) await java.command('send', 'OP', topic, 'TagA', `k${i}`, `ops-${i}`);
    await java.command('consumer', 'OC', ns, group, topic, 'tag', '*', 'ok', '16');
    await waitUntil(
      () => java.messages.filter((m) => m.c === 'OC').length >= 6,
      30_000,
      () => java.log.slice(-2000),
    );
  }, 120_000);

  afterAll(async () => {
    await java?.close();
    await broker?.shutdown();
    if (storePath) rmSync(storePath, { recursive: true, force: true });
    if (classes) rmSync(classes, { recursive: true, force: true });
  }, 60_000);

  test('clusterList and brokerStatus print RocketMQ runtime figures', async () => {
    const cluster = await admin('clusterList');
    expect(cluster).not.toMatch(/Exception|null,null/);
    expect(cluster).toMatch(/DefaultCluster\s+broker-a\s+0\s+\S+\s+V4_9_8/);
    const status = await admin('brokerStatus', '-b', ns);
    for (const key of [
      'putTps',
      'getTransferedTps',
      'msgPutTotalTodayNow',
      'commitLogDiskRatio',
      'earliestMessageTimeStamp',
    ])
      expect(status).toMatch(new RegExp(`^${key}\\s*:`, 'm'));
    expect(Number(/^msgPutTotalTodayNow\s*:\s*(\d+)/m.exec(status)?.[1])).toBeGreaterThanOrEqual(6);
  }, 60_000);

  test('consumerConnection shows JAVA and V4_9_8; consumerStatus reaches the consumer; producerConnection lists the producer', async () => {
    const conn = await admin('consumerConnection', '-g', group);
    expect(conn).toMatch(/JAVA\s+V4_9_8/);
    const status = await admin('consumerStatus', '-g', group);
    expect(status).not.toMatch(/not supported/);
    expect(status).toMatch(/V4_9_8/);
    const prod = await admin('producerConnection', '-g', 'OP', '-t', topic);
    expect(prod).not.toMatch(/not supported|Exception/);
  }, 60_000);

  test('statsAll counts what was sent and consumed; brokerConsumeStats lists the group', async () => {
    const stats = await admin('statsAll', '-t', topic);
    const row = stats.split('\n').find((l) => l.startsWith(topic) && l.includes(group));
    expect(row).toBeDefined();
    const cols = (row ?? '').trim().split(/\s+/);
    // #Topic #Consumer Group #Accumulation #InTPS #OutTPS #InMsg24Hour #OutMsg24Hour
    expect([Number(cols[5]), Number(cols[6])]).toEqual([6, 6]);
    // The Java consumer commits its offsets every few seconds; brokerConsumeStats reads committed ones.
    await waitUntil(() => broker.consumerOffsetManager.whichTopicByConsumer(group).includes(topic), 20_000);
    const bcs = await admin('brokerConsumeStats', '-b', ns);
    expect(bcs).toContain(group);
  }, 60_000);

  test('getBrokerConfig, updateBrokerConfig, getNamesrvConfig, getConsumerConfig, queryCq, cloneGroupOffset, deleteSubGroup', async () => {
    expect(await admin('getBrokerConfig', '-b', ns)).toMatch(/brokerClusterName\s*=\s*DefaultCluster/);
    expect(await admin('updateBrokerConfig', '-b', ns, '-k', 'shortPollingTimeMills', '-v', '800')).toMatch(
      /update broker config success/,
    );
    // A store-layout key is refused (the tool prints the failure on stderr, no success line).
    expect(await admin('updateBrokerConfig', '-b', ns, '-k', 'mappedFileSizeCommitLog', '-v', '4096')).not.toMatch(
      /success/,
    );
    const conf = await admin('getBrokerConfig', '-b', ns);
    expect(conf).toMatch(/shortPollingTimeMills\s*=\s*800/);
    expect(conf).not.toMatch(/mappedFileSizeCommitLog\s*=\s*4096/);
    expect(await admin('getNamesrvConfig')).toMatch(/listenPort/);
    expect(await admin('getConsumerConfig', '-g', group)).toContain(group);
    expect(await admin('queryCq', '-t', topic, '-q', '0', '-i', '0', '-c', '1')).not.toMatch(/not supported/);
    await java.command('stop', 'OC');
    const dest = uniqueName('Clone');
    expect(await admin('cloneGroupOffset', '-s', group, '-d', dest, '-t', topic)).toContain(
      'clone group offset success',
    );
    expect(broker.consumerOffsetManager.queryOffset(dest, topic, 0)).toBe(
      broker.consumerOffsetManager.queryOffset(group, topic, 0),
    );
    expect(await admin('deleteSubGroup', '-c', 'DefaultCluster', '-g', dest)).not.toMatch(/not supported/);
    expect(broker.subscriptionGroupManager.containsSubscriptionGroup(dest)).toBe(false);
  }, 90_000);
});
