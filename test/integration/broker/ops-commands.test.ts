/**
 * The operator commands of RocketMQ 4.9.8's mqadmin, over the broker's TCP remoting port: settings
 * (GET/UPDATE_BROKER_CONFIG, GET_NAMESRV_CONFIG), producer connections, subscription groups (list,
 * delete, clone offsets), stats (VIEW_BROKER_STATS_DATA, GET_BROKER_CONSUME_STATS), runtime info,
 * QUERY_CONSUME_QUEUE, GET_CONSUMER_RUNNING_INFO forwarded to the consumer, and the language and
 * version of a heartbeat shown by GET_CONSUMER_CONNECTION_LIST.
 */
import { RequestCode } from '../../../src/protocol/request-code.js';
import { ResponseCode } from '../../../src/protocol/response-code.js';
import { encodeRemotingCommand } from '../../../src/remoting/remoting-command.js';
import { uniqueName } from '../../support/broker-client.js';
import { waitFor } from '../../support/broker-fixture.js';
import { heartbeatBody } from '../../support/remoting-test-client.js';
import { useRemotingBroker } from '../../support/remoting-broker-fixture.js';

const json = (b: Buffer | null): Record<string, unknown> => JSON.parse((b ?? Buffer.from('{}')).toString('utf8'));

describe('operator commands over remoting', () => {
  const rb = useRemotingBroker();
  const connect = rb.connect;

  test('GET_BROKER_CONFIG lists RocketMQ keys; UPDATE_BROKER_CONFIG applies a known key and refuses the others naming them', async () => {
    const c = await connect();
    const before = await c.request(RequestCode.GET_BROKER_CONFIG, {});
    expect(before.code).toBe(ResponseCode.SUCCESS);
    expect(before.body?.toString()).toMatch(/^brokerClusterName=DefaultCluster$/m);
    expect(JSON.parse(String(before.extFields?.version))).toMatchObject({ counter: 0 });
    const upd = (text: string) => c.request(RequestCode.UPDATE_BROKER_CONFIG, {}, { body: Buffer.from(text) });
    expect((await upd('shortPollingTimeMills=500\n')).code).toBe(ResponseCode.SUCCESS);
    const seg = await upd('mappedFileSizeCommitLog=4096\nshortPollingTimeMills=700\n');
    expect(seg.code).toBe(ResponseCode.NO_PERMISSION);
    expect(seg.remark).toContain('mappedFileSizeCommitLog');
    const unknown = await upd('noSuchKey=1');
    expect([unknown.code, unknown.remark]).toEqual([ResponseCode.SYSTEM_ERROR, 'unknown broker config key: noSuchKey']);
    const typed = await upd('longPollingEnable=yes');
    expect(typed.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(typed.remark).toContain('longPollingEnable');
    const after = await c.request(RequestCode.GET_BROKER_CONFIG, {});
    // The refused update changed nothing, the accepted one is shown.
    expect(after.body?.toString()).toMatch(/^shortPollingTimeMills=500$/m);
    expect(JSON.parse(String(after.extFields?.version))).toMatchObject({ counter: 1 });
    const ns = await c.request(RequestCode.GET_NAMESRV_CONFIG, {});
    expect(ns.body?.toString()).toMatch(/^listenPort=\d+$/m);
  });

  test('heartbeats record language and version; producer and consumer connections show them', async () => {
    const topic = uniqueName('OpsT');
    await rb.fx.client.send(topic, 'x');
    const group = uniqueName('OpsG');
    const pgroup = uniqueName('OpsP');
    const a = await connect();
    const hb = await a.request(RequestCode.HEART_BEAT, null, {
      body: heartbeatBody('10.0.0.9@ops', group, topic, pgroup),
      version: 409,
    });
    expect(hb.code).toBe(ResponseCode.SUCCESS);
    const admin = await connect();
    const cc = await admin.request(RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: group });
    expect(json(cc.body).connectionSet).toEqual([
      expect.objectContaining({ clientId: '10.0.0.9@ops', language: 'JAVA', version: 409 }),
    ]);
    const pc = await admin.request(RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: pgroup });
    expect(pc.code).toBe(ResponseCode.SUCCESS);
    expect(json(pc.body).connectionSet).toEqual([
      expect.objectContaining({ clientId: '10.0.0.9@ops', language: 'JAVA', version: 409 }),
    ]);
    const none = await admin.request(RequestCode.GET_PRODUCER_CONNECTION_LIST, { producerGroup: 'nobody' });
    expect([none.code, none.remark]).toEqual([ResponseCode.SYSTEM_ERROR, 'the producer group[nobody] not exist']);

    // GET_CONSUMER_RUNNING_INFO goes to the consumer's connection; its answer comes back unchanged.
    const asked = admin.request(RequestCode.GET_CONSUMER_RUNNING_INFO, {
      consumerGroup: group,
      clientId: '10.0.0.9@ops',
      jstackEnable: 'false',
    });
    await waitFor(() => a.pushed.some((p) => p.code === RequestCode.GET_CONSUMER_RUNNING_INFO));
    const forwarded = a.pushed.find((p) => p.code === RequestCode.GET_CONSUMER_RUNNING_INFO);
    expect(forwarded?.extFields).toMatchObject({ consumerGroup: group, clientId: '10.0.0.9@ops' });
    a.writeRaw(
      encodeRemotingCommand({
        code: 0,
        opaque: forwarded?.opaque ?? 0,
        flag: 1,
        version: 409,
        body: Buffer.from('{"properties":{"x":"1"}}'),
      }),
    );
    const info = await asked;
    expect(info.code).toBe(ResponseCode.SUCCESS);
    expect(info.body?.toString()).toBe('{"properties":{"x":"1"}}');
    const offline = await admin.request(RequestCode.GET_CONSUMER_RUNNING_INFO, {
      consumerGroup: group,
      clientId: 'nobody',
      jstackEnable: 'false',
    });
    expect(offline.remark).toBe(`The Consumer <${group}> <nobody> not online`);
  });

  test('GET_CONSUMER_RUNNING_INFO is refused to a client older than V3_1_8_SNAPSHOT (ordinal 62), as RocketMQ refuses it', async () => {
    const topic = uniqueName('OpsVerT');
    await rb.fx.client.send(topic, 'x');
    const admin = await connect();
    for (const [version, refused] of [
      [61, true],
      [62, false],
    ] as const) {
      const group = uniqueName('OpsVerG');
      const clientId = `10.0.0.8@v${version}`;
      const member = await connect();
      const hb = await member.request(RequestCode.HEART_BEAT, null, {
        body: heartbeatBody(clientId, group, topic, uniqueName('OpsVerP')),
        version,
      });
      expect(hb.code).toBe(ResponseCode.SUCCESS);
      const asked = admin.request(RequestCode.GET_CONSUMER_RUNNING_INFO, {
        consumerGroup: group,
        clientId,
        jstackEnable: 'false',
      });
      if (refused) {
        const r = await asked;
        expect([r.code, r.remark]).toEqual([
          ResponseCode.SYSTEM_ERROR,
          `The Consumer <${clientId}> Version <${version}> too low to finish, please upgrade it to V3_1_8_SNAPSHOT`,
        ]);
      } else {
        await waitFor(() => member.pushed.some((p) => p.code === RequestCode.GET_CONSUMER_RUNNING_INFO));
        const forwarded = member.pushed.find((p) => p.code === RequestCode.GET_CONSUMER_RUNNING_INFO);
        member.writeRaw(
          encodeRemotingCommand({ code: 0, opaque: forwarded?.opaque ?? 0, flag: 1, version, body: Buffer.from('{}') }),
        );
        expect((await asked).code).toBe(ResponseCode.SUCCESS);
      }
    }
  });

  test('stats: puts and gets are counted per topic and topic@group; brokerStatus figures; broker consume stats', async () => {
    const topic = uniqueName('StatT');
    const group = uniqueName('StatG');
    for (let i = 0; i < 5; i++) await rb.fx.client.send(topic, `m${i}`, { queueId: 0 });
    const pulled = await rb.fx.client.pull({ group, topic, queueId: 0, offset: 0, maxMsgNums: 3 });
    expect(pulled.code).toBe(ResponseCode.SUCCESS);
    const c = await connect();
    const put = await c.request(RequestCode.VIEW_BROKER_STATS_DATA, { statsName: 'TOPIC_PUT_NUMS', statsKey: topic });
    expect(put.code).toBe(ResponseCode.SUCCESS);
    const p = json(put.body) as Record<string, { sum: number }>;
    expect([p.statsMinute?.sum, p.statsHour?.sum, p.statsDay?.sum]).toEqual([5, 5, 5]);
    const get = await c.request(RequestCode.VIEW_BROKER_STATS_DATA, {
      statsName: 'GROUP_GET_NUMS',
      statsKey: `${topic}@${group}`,
    });
    expect((json(get.body) as Record<string, { sum: number }>).statsDay?.sum).toBe(3);
    const missing = await c.request(RequestCode.VIEW_BROKER_STATS_DATA, {
      statsName: 'TOPIC_PUT_NUMS',
      statsKey: 'nope',
    });
    expect(missing.remark).toBe('The stats <TOPIC_PUT_NUMS> <nope> not exist');

    const rt = await c.request(28, {});
    const table = (json(rt.body) as { table: Record<string, string> }).table;
    expect(Object.keys(table).length).toBeGreaterThanOrEqual(40);
    expect(Number(table.msgPutTotalTodayNow)).toBeGreaterThanOrEqual(5);
    expect(table.putTps?.split(' ')).toHaveLength(3);
    expect(Number(table.commitLogDiskRatio)).toBeGreaterThan(0);

    // Commit offset 3 for the group: GET_BROKER_CONSUME_STATS shows the lag of 2 on queue 0.
    const commit = await c.request(RequestCode.UPDATE_CONSUMER_OFFSET, {
      consumerGroup: group,
      topic,
      queueId: '0',
      commitOffset: '3',
    });
    expect(commit.code).toBe(ResponseCode.SUCCESS);
    const bcs = await c.request(RequestCode.GET_BROKER_CONSUME_STATS, { isOrder: 'false' });
    // fastjson writes the MessageQueue map keys as objects, so the body is read as text.
    const text = bcs.body?.toString() ?? '';
    expect(text).toContain(`{"${group}":[{"consumeTps":`);
    expect(text).toMatch(/"totalDiff":\d+/);
    expect(bcs.body?.toString()).toContain('"consumerOffset":3');
  });

  test('subscription groups: list, clone offsets to a new group, delete with offsets; queryCq', async () => {
    const topic = uniqueName('GrpT');
    const src = uniqueName('Src');
    const dest = uniqueName('Dest');
    for (let i = 0; i < 3; i++) await rb.fx.client.send(topic, `g${i}`, { queueId: 0 });
    await rb.fx.client.pull({ group: src, topic, queueId: 0 });
    const c = await connect();
    await c.request(RequestCode.UPDATE_CONSUMER_OFFSET, { consumerGroup: src, topic, queueId: '0', commitOffset: '2' });
    const all = await c.request(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, {});
    expect(Object.keys((json(all.body) as { subscriptionGroupTable: object }).subscriptionGroupTable)).toContain(src);
    // mqadmin cloneGroupOffset commits the offsets for the new group with UPDATE_CONSUMER_OFFSET.
    const viaUpdate = await c.request(RequestCode.UPDATE_CONSUMER_OFFSET, {
      consumerGroup: dest,
      topic,
      queueId: '0',
      commitOffset: '2',
    });
    expect(viaUpdate.code).toBe(ResponseCode.SUCCESS);
    const other = uniqueName('Other');
    const cloned = await c.request(RequestCode.CLONE_GROUP_OFFSET, {
      srcGroup: src,
      destGroup: other,
      topic,
      offline: 'true',
    });
    expect(cloned.code).toBe(ResponseCode.SUCCESS);
    expect(rb.fx.broker.consumerOffsetManager.queryOffset(other, topic, 0)).toBe(2);
    const del = await c.request(RequestCode.DELETE_SUBSCRIPTIONGROUP, { groupName: other, removeOffset: 'true' });
    expect(del.code).toBe(ResponseCode.SUCCESS);
    expect(rb.fx.broker.consumerOffsetManager.queryOffset(other, topic, 0)).toBe(-1);

    const cq = await c.request(RequestCode.QUERY_CONSUME_QUEUE, {
      topic,
      queueId: '0',
      index: '1',
      count: '2',
      consumerGroup: src,
    });
    const body = json(cq.body) as {
      queueData: Array<{ physicSize: number }>;
      maxQueueIndex: number;
      filterData: string;
    };
    expect(body.queueData).toHaveLength(2);
    expect(body.maxQueueIndex).toBe(3);
    expect(body.filterData).toBe(`${src}@${topic} is not online!`);
    const noQueue = await c.request(RequestCode.QUERY_CONSUME_QUEUE, {
      topic: 'NoSuch',
      queueId: '0',
      index: '0',
      count: '1',
    });
    expect([noQueue.code, noQueue.remark]).toEqual([ResponseCode.SYSTEM_ERROR, '0@NoSuch is not exist!']);
  });

  test("the topic list has RocketMQ 4.9.8's system topics", async () => {
    const c = await connect();
    const r = await c.request(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {});
    const topics = (json(r.body) as { topicList: string[] }).topicList;
    for (const t of [
      'TBW102',
      'SCHEDULE_TOPIC_XXXX',
      'BenchmarkTest',
      'SELF_TEST_TOPIC',
      'OFFSET_MOVED_EVENT',
      'DefaultCluster',
      'broker-a',
      'DefaultCluster_REPLY_TOPIC',
    ])
      expect(topics).toContain(t);
  });
});
