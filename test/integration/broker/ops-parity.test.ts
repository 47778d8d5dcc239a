/**
 * The rest of RocketMQ 4.9.8's mqadmin and dashboard codes over the broker's TCP remoting port, with raw
 * commands: the NameServer's KV config (kept across a restart), write perm of the broker (a real producer
 * stops and resumes sending), topic lists, NameServer settings, earliest store time, consume time span,
 * correction offsets, all producers, and consumer status through the broker to the consumers. Bad input
 * (unknown topic or group, missing fields) gets RocketMQ's codes and remarks.
 */
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { Producer } from '../../../src/index.js';
import { FastJsonMap, parseFastJson } from '../../../src/protocol/admin-body-json.js';
import { RequestCode } from '../../../src/protocol/request-code.js';
import { ResponseCode } from '../../../src/protocol/response-code.js';
import { encodeRemotingCommand } from '../../../src/remoting/remoting-command.js';
import { countingConsumer } from '../../support/admin-fixtures.js';
import { uniqueName } from '../../support/broker-client.js';
import { tempStorePath, waitFor } from '../../support/broker-fixture.js';
import { RemotingTestClient, heartbeatBody } from '../../support/remoting-test-client.js';
import { useRemotingBroker } from '../../support/remoting-broker-fixture.js';

const json = (b: Buffer | null): Record<string, unknown> => JSON.parse((b ?? Buffer.from('{}')).toString('utf8'));
const topicsOf = (b: Buffer | null): string[] => json(b).topicList as string[];

const rb = useRemotingBroker();
const connect = rb.connect;

test('KV config: put, get, list, delete; QUERY_NOT_FOUND with RocketMQ remarks; missing fields refused; kept across a restart', async () => {
  const storePath = tempStorePath('rmq-kv-');
  let broker = await Broker.start({ storePath, port: 0, remotingPort: 0 });
  try {
    let c = await RemotingTestClient.connect(broker.remotingAddress as string);
    const put = await c.request(RequestCode.PUT_KV_CONFIG, {
      namespace: 'ORDER_TOPIC_CONFIG',
      key: 'T1',
      value: 'a:4',
    });
    expect(put.code).toBe(ResponseCode.SUCCESS);
    await c.request(RequestCode.PUT_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T2', value: 'a:8' });
    const got = await c.request(RequestCode.GET_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T1' });
    expect([got.code, got.extFields?.value]).toEqual([ResponseCode.SUCCESS, 'a:4']);
    const list = await c.request(RequestCode.GET_KVLIST_BY_NAMESPACE, { namespace: 'ORDER_TOPIC_CONFIG' });
    expect(json(list.body)).toEqual({ table: { T1: 'a:4', T2: 'a:8' } });
    expect((await c.request(RequestCode.DELETE_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T2' })).code).toBe(
      ResponseCode.SUCCESS,
    );
    const gone = await c.request(RequestCode.GET_KV_CONFIG, { namespace: 'ORDER_TOPIC_CONFIG', key: 'T2' });
    expect([gone.code, gone.remark]).toEqual([
      ResponseCode.QUERY_NOT_FOUND,
      'No config item, Namespace: ORDER_TOPIC_CONFIG Key: T2',
    ]);
    const noNs = await c.request(RequestCode.GET_KVLIST_BY_NAMESPACE, { namespace: 'nope' });
    expect([noNs.code, noNs.remark]).toEqual([ResponseCode.QUERY_NOT_FOUND, 'No config item, Namespace: nope']);
    const noKey = await c.request(RequestCode.PUT_KV_CONFIG, { namespace: 'ns', value: 'v' });
    expect(noKey.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(noKey.remark).toContain('key');
    await c.close();

    await broker.shutdown();
    broker = await Broker.start({ storePath, port: 0, remotingPort: 0 });
    c = await RemotingTestClient.connect(broker.remotingAddress as string);
    const after = await c.request(RequestCode.GET_KVLIST_BY_NAMESPACE, { namespace: 'ORDER_TOPIC_CONFIG' });
    expect(json(after.body)).toEqual({ table: { T1: 'a:4' } });
    await c.close();
  } finally {
    await broker.shutdown();
    rmSync(storePath, { recursive: true, force: true });
  }
}, 60_000);

test('WIPE/ADD_WRITE_PERM_OF_BROKER: routes lose and regain PERM_WRITE; a real producer stops and resumes sending', async () => {
  const topic = uniqueName('PermT');
  const producer = new Producer({
    producerGroup: uniqueName('PermP'),
    namesrvAddr: rb.address,
    pollNameServerIntervalMs: 100,
  });
  await producer.start();
  try {
    const send = () => producer.send({ topic, body: Buffer.from('x') });
    expect((await send()).sendStatus).toBe('SEND_OK');
    const c = await connect();
    const routePerm = async (): Promise<number> => {
      const r = await c.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic });
      return (json(r.body).queueDatas as Array<{ perm: number }>)[0]?.perm ?? -1;
    };
    expect(await routePerm()).toBe(6);
    const topics = rb.fx.broker.topicConfigManager.allTopics().length;
    const wipe = await c.request(RequestCode.WIPE_WRITE_PERM_OF_BROKER, { brokerName: 'broker-a' });
    expect([wipe.code, wipe.extFields?.wipeTopicCount]).toEqual([ResponseCode.SUCCESS, String(topics)]);
    expect(await routePerm()).toBe(4);
    // The producer refreshes its route and finds no queue it may write to.
    await waitFor(
      () =>
        send().then(
          () => false,
          () => true,
        ),
      20_000,
    );
    const other = await c.request(RequestCode.WIPE_WRITE_PERM_OF_BROKER, { brokerName: 'broker-z' });
    expect(other.extFields?.wipeTopicCount).toBe('0');
    const add = await c.request(RequestCode.ADD_WRITE_PERM_OF_BROKER, { brokerName: 'broker-a' });
    expect([add.code, add.extFields?.addTopicCount]).toEqual([ResponseCode.SUCCESS, String(topics)]);
    expect(await routePerm()).toBe(6);
    await waitFor(
      () =>
        send().then(
          () => true,
          () => false,
        ),
      20_000,
    );
    const missing = await c.request(RequestCode.ADD_WRITE_PERM_OF_BROKER, {});
    expect(missing.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(missing.remark).toContain('brokerName');

    // A change to the topic table brings the broker's own perm back, as a re-registration does on RocketMQ.
    await c.request(RequestCode.WIPE_WRITE_PERM_OF_BROKER, { brokerName: 'broker-a' });
    expect(await routePerm()).toBe(4);
    await rb.fx.client.send(uniqueName('PermNew'), 'x');
    expect(await routePerm()).toBe(6);
  } finally {
    await producer.shutdown();
  }
}, 60_000);

test('topic lists: by cluster, system topics from the NameServer and the broker, unit flags', async () => {
  const c = await connect();
  const plain = uniqueName('ListT');
  await rb.fx.client.send(plain, 'x');
  const create = (topic: string, topicSysFlag: number) =>
    c.request(RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic,
      defaultTopic: 'TBW102',
      readQueueNums: '1',
      writeQueueNums: '1',
      perm: '6',
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: String(topicSysFlag),
      order: 'false',
    });
  const unit = uniqueName('UnitT');
  const unitSub = uniqueName('UnitSubT');
  const both = uniqueName('BothT');
  for (const [t, f] of [
    [unit, 1],
    [unitSub, 2],
    [both, 3],
  ] as const)
    expect((await create(t, f)).code).toBe(ResponseCode.SUCCESS);

  const byCluster = topicsOf((await c.request(RequestCode.GET_TOPICS_BY_CLUSTER, { cluster: 'DefaultCluster' })).body);
  expect(byCluster).toEqual(expect.arrayContaining([plain, unit, 'TBW102']));
  expect(topicsOf((await c.request(RequestCode.GET_TOPICS_BY_CLUSTER, { cluster: 'Nope' })).body)).toEqual([]);
  expect((await c.request(RequestCode.GET_TOPICS_BY_CLUSTER, {})).code).toBe(ResponseCode.SYSTEM_ERROR);

  const ns = json((await c.request(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS, {})).body);
  expect(ns).toEqual({ brokerAddr: rb.address, topicList: ['DefaultCluster', 'broker-a'] });
  const fromBroker = topicsOf((await c.request(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, {})).body);
  expect(fromBroker).toEqual(
    expect.arrayContaining(['TBW102', 'SCHEDULE_TOPIC_XXXX', 'RMQ_SYS_TRANS_HALF_TOPIC', 'DefaultCluster', 'broker-a']),
  );
  expect(fromBroker).not.toContain(plain);

  const unitList = topicsOf((await c.request(RequestCode.GET_UNIT_TOPIC_LIST, {})).body);
  const subList = topicsOf((await c.request(RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST, {})).body);
  const subNotUnit = topicsOf((await c.request(RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, {})).body);
  expect([unitList.includes(unit), unitList.includes(unitSub), unitList.includes(both)]).toEqual([true, false, true]);
  expect([subList.includes(unit), subList.includes(unitSub), subList.includes(both)]).toEqual([false, true, true]);
  expect([subNotUnit.includes(unit), subNotUnit.includes(unitSub), subNotUnit.includes(both)]).toEqual([
    false,
    true,
    false,
  ]);
  expect(unitList).not.toContain(plain);
});

test('UPDATE_NAMESRV_CONFIG: applied in memory and shown by GET_NAMESRV_CONFIG; unknown keys, wrong types and black-listed keys refused whole', async () => {
  const c = await connect();
  const upd = (text: string) => c.request(RequestCode.UPDATE_NAMESRV_CONFIG, {}, { body: Buffer.from(text) });
  expect((await upd('orderMessageEnable=true\nproductEnvName=test\n')).code).toBe(ResponseCode.SUCCESS);
  const unknown = await upd('productEnvName=x\nnoSuchKey=1');
  expect([unknown.code, unknown.remark]).toEqual([
    ResponseCode.SYSTEM_ERROR,
    'unknown name server config key: noSuchKey',
  ]);
  const typed = await upd('serverChannelMaxIdleTimeSeconds=soon');
  expect(typed.code).toBe(ResponseCode.SYSTEM_ERROR);
  expect(typed.remark).toContain('serverChannelMaxIdleTimeSeconds');
  const black = await upd('kvConfigPath=/tmp/elsewhere');
  expect([black.code, black.remark]).toEqual([
    ResponseCode.NO_PERMISSION,
    'Can not update config in black list: kvConfigPath',
  ]);
  expect((await upd('')).code).toBe(ResponseCode.SUCCESS);
  const shown = (await c.request(RequestCode.GET_NAMESRV_CONFIG, {})).body?.toString() ?? '';
  expect(shown).toMatch(/^orderMessageEnable=true$/m);
  expect(shown).toMatch(/^productEnvName=test$/m);
  expect(shown).toMatch(/^serverChannelMaxIdleTimeSeconds=120$/m);
  expect(shown).toMatch(/^kvConfigPath=.*kvConfig\.json$/m);
});

test('GET_EARLIEST_MSG_STORETIME, QUERY_CONSUME_TIME_SPAN and QUERY_CORRECTION_OFFSET read the store and the committed offsets', async () => {
  const topic = uniqueName('SpanT');
  const before = Date.now();
  for (let i = 0; i < 4; i++) await rb.fx.client.send(topic, `m${i}`, { queueId: 0 });
  const after = Date.now();
  const c = await connect();
  const earliest = await c.request(RequestCode.GET_EARLIEST_MSG_STORETIME, { topic, queueId: '0' });
  const first = Number(earliest.extFields?.timestamp);
  expect(first).toBeGreaterThanOrEqual(before - 5);
  expect(first).toBeLessThanOrEqual(after + 5);
  const none = await c.request(RequestCode.GET_EARLIEST_MSG_STORETIME, { topic: uniqueName('NoT'), queueId: '0' });
  expect([none.code, none.extFields?.timestamp]).toEqual([ResponseCode.SUCCESS, '-1']);
  expect((await c.request(RequestCode.GET_EARLIEST_MSG_STORETIME, { topic })).code).toBe(ResponseCode.SYSTEM_ERROR);

  const group = uniqueName('SpanG');
  const other = uniqueName('SpanO');
  const commit = (g: string, offset: number) =>
    c.request(RequestCode.UPDATE_CONSUMER_OFFSET, {
      consumerGroup: g,
      topic,
      queueId: '0',
      commitOffset: String(offset),
    });
  await commit(group, 1);
  await commit(other, 3);
  const span = await c.request(RequestCode.QUERY_CONSUME_TIME_SPAN, { topic, group });
  expect(span.code).toBe(ResponseCode.SUCCESS);
  const set = json(span.body).consumeTimeSpanSet as Array<Record<string, number | string | Record<string, unknown>>>;
  expect(set).toHaveLength(rb.fx.broker.topicConfigManager.selectTopicConfig(topic)?.writeQueueNums ?? -1);
  const q0 = set[0] as Record<string, number | string | Record<string, unknown>>;
  expect(q0.messageQueue).toEqual({ brokerName: 'broker-a', queueId: 0, topic });
  expect(q0.minTimeStamp).toBe(first);
  expect(q0.consumeTimeStamp).toBe(first);
  expect(q0.maxTimeStamp as number).toBeGreaterThanOrEqual(first);
  expect(q0.maxTimeStamp as number).toBeLessThanOrEqual(after + 5);
  expect(q0.delayTime as number).toBeGreaterThanOrEqual(0);
  expect(q0.minTimeStampStr).toMatch(/^\d{4}-\d\d-\d\d#\d\d:\d\d:\d\d:\d{3}$/);
  // Queue 1 is empty: no times, no delay.
  expect(set[1]).toMatchObject({ minTimeStamp: -1, maxTimeStamp: -1, delayTime: 0 });
  const caughtUp = json((await c.request(RequestCode.QUERY_CONSUME_TIME_SPAN, { topic, group: other })).body);
  await commit(other, 4);
  const done = json((await c.request(RequestCode.QUERY_CONSUME_TIME_SPAN, { topic, group: other })).body);
  expect((caughtUp.consumeTimeSpanSet as Array<{ delayTime: number }>)[0]?.delayTime).toBeGreaterThanOrEqual(0);
  expect((done.consumeTimeSpanSet as Array<{ delayTime: number }>)[0]?.delayTime).toBe(0);
  const unknown = await c.request(RequestCode.QUERY_CONSUME_TIME_SPAN, { topic: 'NoSuchTopicX', group });
  expect([unknown.code, unknown.remark]).toEqual([ResponseCode.TOPIC_NOT_EXIST, 'topic[NoSuchTopicX] not exist']);
  expect((await c.request(RequestCode.QUERY_CONSUME_TIME_SPAN, { topic })).code).toBe(ResponseCode.SYSTEM_ERROR);

  const corr = (compareGroup: string, filterGroups?: string) =>
    c
      .request(RequestCode.QUERY_CORRECTION_OFFSET, { topic, compareGroup, ...(filterGroups ? { filterGroups } : {}) })
      .then((r) => r.body?.toString());
  expect(await corr(group)).toBe('{"correctionOffsets":{0:1}}');
  expect(await corr(other, group)).toBe('{"correctionOffsets":{0:4}}');
  // compareGroup's own offset (1) is behind the others' minimum (4): Long.MAX_VALUE.
  expect(await corr(group, group)).toBe('{"correctionOffsets":{0:9223372036854775807}}');
  expect(await corr('nobody')).toBe('{"correctionOffsets":{0:1}}');
  expect((await c.request(RequestCode.QUERY_CORRECTION_OFFSET, { topic })).code).toBe(ResponseCode.SYSTEM_ERROR);
});

test('GET_ALL_PRODUCER_INFO lists every producer group with the members heartbeats announced', async () => {
  const pgroup = uniqueName('InfoP');
  const a = await connect();
  await a.request(RequestCode.HEART_BEAT, null, {
    body: heartbeatBody('10.0.0.7@info', null, 'T', pgroup),
    version: 409,
  });
  const admin = await connect();
  const info = await admin.request(RequestCode.GET_ALL_PRODUCER_INFO, {});
  expect(info.code).toBe(ResponseCode.SUCCESS);
  const data = json(info.body).data as Record<string, Array<Record<string, unknown>>>;
  expect(data[pgroup]).toEqual([
    {
      clientId: '10.0.0.7@info',
      language: 'JAVA',
      version: 409,
      lastUpdateTimestamp: expect.any(Number),
      remoteIP: expect.stringMatching(/^\/127\.0\.0\.1:\d+$/),
    },
  ]);
});

test('INVOKE_BROKER_TO_GET_CONSUMER_STATUS asks each member with GET_CONSUMER_STATUS_FROM_CLIENT; our push consumer answers its offsets', async () => {
  const topic = uniqueName('StatusT');
  const group = uniqueName('StatusG');
  for (let i = 0; i < 5; i++) await rb.fx.client.send(topic, `m${i}`, { queueId: 0, tags: 'A' });
  const { consumer, consumed } = await countingConsumer({ namesrvAddr: rb.address }, group, topic);
  try {
    await waitFor(() => consumed() >= 5, 20_000);
    // A second member, a raw client, answers the broker's call itself.
    const raw = await connect();
    await raw.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('zz-raw@x', group, topic), version: 409 });
    const admin = await connect();
    const asked = admin.request(RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, { topic, group });
    await waitFor(() => raw.pushed.some((p) => p.code === RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT));
    const call = raw.pushed.find((p) => p.code === RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT);
    expect(call?.extFields).toMatchObject({ topic, group });
    raw.writeRaw(
      encodeRemotingCommand({
        code: 0,
        opaque: call?.opaque ?? 0,
        flag: 1,
        version: 409,
        body: Buffer.from(`{"messageQueueTable":{{"brokerName":"broker-a","queueId":1,"topic":"${topic}"}:7}}`),
      }),
    );
    const answer = await asked;
    expect(answer.code).toBe(ResponseCode.SUCCESS);
    const body = parseFastJson(answer.body?.toString() ?? '') as { consumerTable: Record<string, FastJsonMap> };
    const rawTable = body.consumerTable['zz-raw@x'];
    expect(rawTable?.entries).toEqual([[{ brokerName: 'broker-a', queueId: 1, topic }, 7]]);
    const ours = Object.entries(body.consumerTable).find(([id]) => id !== 'zz-raw@x');
    expect(ours?.[1].entries).toEqual(expect.arrayContaining([[{ brokerName: 'broker-a', queueId: 0, topic }, 5]]));

    // Only the member named by clientAddr is asked.
    const one = await admin.request(RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, {
      topic,
      group,
      clientAddr: ours?.[0] ?? '',
    });
    const onlyOurs = parseFastJson(one.body?.toString() ?? '') as { consumerTable: Record<string, unknown> };
    expect(Object.keys(onlyOurs.consumerTable)).toEqual([ours?.[0]]);

    const nobody = await admin.request(RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, { topic, group: 'nobody' });
    expect([nobody.code, nobody.remark]).toEqual([
      ResponseCode.SYSTEM_ERROR,
      'No Any Consumer online in the consumer group: [nobody]',
    ]);
    const noTopic = await admin.request(RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, { group });
    expect(noTopic.code).toBe(ResponseCode.SYSTEM_ERROR);
  } finally {
    await consumer.shutdown();
  }
}, 60_000);
