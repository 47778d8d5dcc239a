/**
 * RocketMQ's `mqadmin`, once per kit (4.9.8, then 5.3.3), against the bundled broker's remoting port, used
 * as its name server: topicList, updateTopic, topicStatus (5.3.3's asks GET_TOPIC_CONFIG first),
 * consumerConnection, consumerProgress (lag per queue equals what the group has not consumed),
 * queryMsgById, queryMsgByKey, resetOffsetByTime. The commands run inside one JVM per kit (Driver.java
 * calls MQAdminStartup), which also runs the Java producer and consumer that feed them; each kit's suite
 * is skipped with one line when Java or that kit is missing.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Broker } from '../../../src/broker/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { JavaDriver, describeWithJavaEach, waitUntil, type DriverEvent } from '../../support/java-client.js';
import { useJavaOnBroker } from '../../support/java-on-broker.js';

describeWithJavaEach(
  (release) => `mqadmin ${release} against the bundled broker (remoting)`,
  (version) => {
    const env = useJavaOnBroker({ version, storePrefix: 'rmq-mqadmin-' });
    const { admin } = env;
    let broker: Broker;
    let java: JavaDriver;
    let ns: string;
    const topic = uniqueName('AdmT');
    const group = uniqueName('AdmG');
    const sent: DriverEvent[] = [];

    const bodies = (): string[] => [...new Set(java.messages.filter((m) => m.c === 'A1').map((m) => m.body))];

    beforeAll(() => ({ broker, java, ns } = env));

    test('updateTopic creates a topic on the cluster; topicList and topicStatus show it', async () => {
      const created = await admin('updateTopic', '-c', 'DefaultCluster', '-t', topic, '-r', '2', '-w', '2');
      expect(created).toContain(`create topic to ${ns} success.`);
      expect(broker.topicConfigManager.selectTopicConfig(topic)?.readQueueNums).toBe(2);
      expect((await admin('topicList')).split('\n')).toContain(topic);

      await java.command('producer', 'AP', ns);
      for (let i = 0; i < 6; i++) sent.push(await java.command('send', 'AP', topic, 'TagA', `key-${i}`, `adm-${i}`));
      const status = await admin('topicStatus', '-t', topic);
      const rows = status.split('\n').filter((l) => l.startsWith('broker-a'));
      expect(rows).toHaveLength(2);
      // #Broker Name  #QID  #Min Offset  #Max Offset  #Last Updated
      const maxByQueue = rows.map((r) => r.trim().split(/\s+/).slice(1, 4).map(Number));
      expect(maxByQueue.map(([q, min, max]) => [q, min, max])).toEqual([
        [0, 0, broker.store.getMaxOffsetInQueue(topic, 0)],
        [1, 0, broker.store.getMaxOffsetInQueue(topic, 1)],
      ]);
    }, 60_000);

    test('consumerConnection lists a running Java consumer; consumerProgress shows the lag it left', async () => {
      await java.command('consumer', 'A1', ns, group, topic, 'tag', '*', 'ok', '16');
      await waitUntil(
        () => bodies().length === 6,
        30_000,
        () => java.log.slice(-2000),
      );
      const connection = await admin('consumerConnection', '-g', group);
      expect(connection).toContain('CONSUME_PASSIVELY');
      expect(connection).toContain('CLUSTERING');
      expect(connection).toContain(topic);
      // Every message consumed and committed, then 3 more sent while the group is away: lag 3.
      const committedToEnd = (): boolean =>
        [0, 1].every(
          (q) =>
            broker.consumerOffsetManager.queryOffset(group, topic, q) === broker.store.getMaxOffsetInQueue(topic, q),
        );
      await waitUntil(committedToEnd, 20_000);
      await java.command('stop', 'A1');
      for (let i = 6; i < 9; i++) sent.push(await java.command('send', 'AP', topic, 'TagA', `key-${i}`, `adm-${i}`));
      const progress = await admin('consumerProgress', '-g', group);
      const rows = progress.split('\n').filter((l) => l.startsWith(topic));
      expect(rows).toHaveLength(2);
      let lag = 0;
      for (const row of rows) {
        // #Topic  #Broker Name  #QID  #Broker Offset  #Consumer Offset  #Client IP  #Diff  #LastTime
        const cols = row.trim().split(/\s+/);
        const queueId = Number(cols[2]);
        const brokerOffset = Number(cols[3]);
        const consumerOffset = Number(cols[4]);
        expect(brokerOffset).toBe(broker.store.getMaxOffsetInQueue(topic, queueId));
        expect(consumerOffset).toBe(broker.consumerOffsetManager.queryOffset(group, topic, queueId));
        lag += brokerOffset - consumerOffset;
      }
      expect(lag).toBe(3);
      expect(progress).toMatch(/Diff Total:\s*3\b/);
      if (version === 5) {
        // 5.3.3 prints #Diff then #Inflight (pulled, not committed: none once the consumer committed to the end).
        expect(rows.map((r) => Number(r.trim().split(/\s+/)[6]))).toEqual([0, 0]);
        expect(progress).toMatch(/Consume Inflight Total:\s*0\b/);
      }
    }, 60_000);

    test('queryMsgById and queryMsgByKey find a message the Java producer sent', async () => {
      const first = sent[1] as DriverEvent;
      // 5.3.3's tool finds the broker through the topic's route, so it needs the topic as well.
      const topicArg = version === 5 ? ['-t', topic] : [];
      const byId = await admin('queryMsgById', '-i', String(first.offsetMsgId), ...topicArg);
      expect(byId).toMatch(new RegExp(`Topic:\\s+${topic}`));
      // The tool writes the body to a file under /tmp/rocketmq/msgbodys: remove it.
      const bodyFile = /Message Body Path:\s+(\S+)/.exec(byId)?.[1];
      if (bodyFile) rmSync(bodyFile, { force: true });
      expect(byId).toMatch(/Keys:\s+\[key-1\]/);
      expect(byId).toMatch(new RegExp(`Queue ID:\\s+${String(first.queueId)}\\b`));
      const byKey = await admin('queryMsgByKey', '-t', topic, '-k', 'key-4');
      const rows = byKey.split('\n').filter((l) => /^[0-9A-F]{32}\s/.test(l.trim()));
      if (rows.length !== 1) throw new Error(`queryMsgByKey printed: ${byKey}\n${java.log.slice(-3000)}`);
      expect(rows[0]?.trim().split(/\s+/)[0]).toBe(String(sent[4]?.msgId));
    }, 60_000);

    test('clusterList shows the broker serving; exportMetrics reads every runtime figure it needs', async () => {
      const cluster = await admin('clusterList');
      const row = cluster.split('\n').find((l) => l.startsWith('DefaultCluster'));
      expect(row).toMatch(/^DefaultCluster\s+broker-a\s+0\s+\S+\s+V4_9_8/);
      // 5.3.3 adds #ACTIVATED (RocketMQ 5's brokerActive) as the last column.
      if (version === 5) expect(row).toMatch(/\strue$/);
      const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-export-'));
      try {
        const out = await admin('exportMetrics', '-c', 'DefaultCluster', '-f', dir);
        expect(out).toContain('success');
        const metrics = JSON.parse(readFileSync(path.join(dir, 'metrics.json'), 'utf8')) as Record<string, unknown>;
        expect(Object.keys(metrics).sort()).toEqual(['evaluateReport', 'totalData']);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }, 60_000);

    test('resetOffsetByTime moves the group back to the first message stored at or after the time', async () => {
      const out = await admin('resetOffsetByTime', '-g', group, '-t', topic, '-s', '0');
      expect(out).toContain(group);
      for (const q of [0, 1]) expect(broker.consumerOffsetManager.queryOffset(group, topic, q)).toBe(0);
    }, 60_000);
  },
);
