/**
 * RocketMQ 4.9.8's own `mqadmin` (the kit's, run inside one JVM by Driver.java) against the bundled
 * broker's remoting port used as its name server: the operator commands that used to fail or print
 * wrong figures. Each check reads RocketMQ's output shape and compares the figures with what the Java
 * producer sent and the Java consumer consumed. Skipped with one line without the kit or a JDK.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Broker } from '../../../src/broker/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { JavaDriver, describeWithJava, waitUntil, type JavaKit } from '../../support/java-client.js';
import { useJavaOnBroker } from '../../support/java-on-broker.js';

/** RocketMQ's getConsumerStatus sub command, which 4.9.8's mqadmin ships but does not register. */
const STATUS_SOURCE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'java', 'GetConsumerStatus.java');

describeWithJava('mqadmin operator commands against the bundled broker', () => {
  const env = useJavaOnBroker({ storePrefix: 'rmq-mqadmin-ops-', sources: [STATUS_SOURCE] });
  const { admin } = env;
  let broker: Broker;
  let java: JavaDriver;
  let ns: string;
  const topic = uniqueName('OpsT');
  const group = uniqueName('OpsG');

  beforeAll(async () => {
    if (!env.kit) return;
    ({ broker, java, ns } = env);
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

  test('updateKvConfig, deleteKvConfig, updateNamesrvConfig change the NameServer state', async () => {
    const kv = broker.context.ops.nameServer.kvConfig;
    expect(await admin('updateKvConfig', '-s', 'OPS_NS', '-k', topic, '-v', 'broker-a:2')).toContain(
      'create or update kv config to namespace success.',
    );
    expect(kv.get('OPS_NS', topic)).toBe('broker-a:2');
    expect(await admin('deleteKvConfig', '-s', 'OPS_NS', '-k', topic)).toContain(
      'delete kv config from namespace success.',
    );
    expect(kv.get('OPS_NS', topic)).toBeUndefined();
    expect(await admin('updateNamesrvConfig', '-k', 'productEnvName', '-v', 'opsTest')).toContain(
      'update name server config success!',
    );
    expect(await admin('getNamesrvConfig')).toMatch(/productEnvName\s*=\s*opsTest/);
  }, 60_000);

  test('wipeWritePerm stops a Java producer from sending; addWritePerm lets it send again', async () => {
    const topics = broker.topicConfigManager.allTopics().length;
    const wiped = await admin('wipeWritePerm', '-b', 'broker-a');
    const w = /wipe write perm of broker\[broker-a\] in name server\[(\S+)\] OK, (\d+)/.exec(wiped);
    expect([w?.[1], Number(w?.[2])]).toEqual([ns, topics]);
    // A producer that starts now finds the broker's queues read-only in every route.
    await java.command('producer', 'WP', ns);
    await expect(java.command('send', 'WP', topic, 'TagA', '', 'wiped')).rejects.toThrow(/No route info/);
    const added = await admin('addWritePerm', '-b', 'broker-a');
    expect(Number(/add write perm of broker\[broker-a\] in name server\[\S+\] OK, (\d+)/.exec(added)?.[1])).toBe(
      topics,
    );
    expect((await java.command('send', 'WP', topic, 'TagA', '', 'added')).status).toBe('SEND_OK');
    await java.command('stop', 'WP');
  }, 60_000);

  test("getConsumerStatus (RocketMQ's own command) lists the offsets the Java consumer holds", async () => {
    const group2 = uniqueName('StatusG');
    await java.command('consumer', 'OS', ns, group2, topic, 'tag', '*', 'ok', '16');
    await waitUntil(
      () => java.messages.filter((m) => m.c === 'OS').length >= 7,
      30_000,
      () => java.log.slice(-2000),
    );
    const javaKitNow = env.kit as JavaKit;
    const home = mkdtempSync(path.join(os.tmpdir(), 'rmq-status-'));
    try {
      const { stdout } = await promisify(execFile)(
        path.join(javaKitNow.dir, 'bin', 'java-client'),
        ['-Xmx128m', '-XX:TieredStopAtLevel=1', `-Duser.home=${home}`, '-cp', env.classes, 'GetConsumerStatus'].concat([
          '-g',
          group2,
          '-t',
          topic,
          '-n',
          ns,
        ]),
        { env: { ...process.env, RMQ_CLIENT_DIR: home }, cwd: home, timeout: 60_000 },
      );
      expect(stdout).toContain(`get consumer status from client. group=${group2}, topic=${topic}`);
      const rows = [...stdout.matchAll(/^(\S+)\s+broker-a\s+(\d+)\s+(\d+)\s*$/gm)];
      expect(rows.map((r) => Number(r[2])).sort()).toEqual([0, 1]);
      // Seven messages (six at start, one after addWritePerm) consumed from the topic's two queues.
      expect(rows.reduce((n, r) => n + Number(r[3]), 0)).toBe(7);
    } finally {
      rmSync(home, { recursive: true, force: true });
      await java.command('stop', 'OS');
    }
  }, 90_000);

  test('topicClusterList, producer, cleanUnusedTopic, cleanExpiredCQ, deleteExpiredCommitLog', async () => {
    expect(await admin('topicClusterList', '-t', topic)).toMatch(/^DefaultCluster$/m);
    // 4.9.8's `producer` fails on RocketMQ's own broker too: fastjson cannot build ProducerTableInfo (no
    // default constructor). It gets as far here: the answer is read, not refused as an unknown code.
    expect(await admin('producer', '-b', ns)).toBe('');
    expect(java.log).toContain(
      'default constructor not found. class org.apache.rocketmq.common.protocol.body.ProducerTableInfo',
    );
    expect(java.log).not.toMatch(/request type 328 not supported/);
    const unused = uniqueName('UnusedT');
    await java.command('send', 'OP', unused, 'TagA', '', 'gone');
    expect(broker.topicConfigManager.deleteTopicConfig(unused)).toBe(true);
    const store = broker.store;
    const queued = (t: string): number => [0, 1, 2, 3].reduce((n, q) => n + store.getMaxOffsetInQueue(t, q), 0);
    expect(queued(unused)).toBe(1);
    expect(await admin('cleanUnusedTopic', '-c', 'DefaultCluster')).toBe('success');
    expect(queued(unused)).toBe(0);
    expect(queued(topic)).toBe(7);
    // Nothing has expired: the maintenance runs and removes nothing.
    const minBefore = store.getCommitLogMinOffset();
    expect(await admin('cleanExpiredCQ', '-c', 'DefaultCluster')).toBe('success');
    expect(await admin('deleteExpiredCommitLog', '-c', 'DefaultCluster')).toBe('success');
    expect(queued(topic)).toBe(7);
    expect(store.getCommitLogMinOffset()).toBe(minBefore);
  }, 60_000);
});
