/**
 * The broker's remoting listener over real sockets: framing, opaque and serialization echo, concurrent
 * calls on one connection, oneway calls, bad input, held pulls released on disconnect, the name-server
 * role and membership news. The connection bound and memory under 10,000 idle connections: idle-memory.test.ts.
 */
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { waitFor } from '../../support/broker-fixture.js';
import { heartbeatBody } from '../../support/remoting-test-client.js';
import { useRemotingBroker } from '../../support/remoting-broker-fixture.js';

const pullHeader = (group: string, topic: string, offset: number, suspendMs: number): Record<string, string> => ({
  consumerGroup: group,
  topic,
  queueId: '0',
  queueOffset: String(offset),
  maxMsgNums: '32',
  sysFlag: String(suspendMs > 0 ? 2 | 4 : 4),
  commitOffset: '0',
  suspendTimeoutMillis: String(suspendMs),
  subscription: '*',
  subVersion: '0',
  expressionType: 'TAG',
});

describe('broker remoting listener', () => {
  const rb = useRemotingBroker();
  const connect = rb.connect;

  test('answers in the request serialization (JSON and ROCKETMQ), echoing opaque with the response flag', async () => {
    const topic = uniqueName('RT');
    expect((await rb.fx.client.send(topic, 'x', { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
    const c = await connect();
    for (const serializeType of ['JSON', 'ROCKETMQ'] as const) {
      const r = await c.request(RequestCode.GET_MAX_OFFSET, { topic, queueId: '0' }, { serializeType, opaque: 7000 });
      expect(r.serializeType).toBe(serializeType);
      expect(r.opaque).toBe(7000);
      expect(r.flag & 1).toBe(1);
      expect(r.code).toBe(ResponseCode.SUCCESS);
      expect(r.extFields?.offset).toBe('1');
    }
  });

  test('RocketMQ: an unknown code gets REQUEST_CODE_NOT_SUPPORTED and the connection stays usable', async () => {
    const c = await connect();
    const r = await c.request(4242, null);
    expect(r.code).toBe(ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    expect(r.remark).toBe(' request type 4242 not supported');
    const again = await c.request(RequestCode.GET_MIN_OFFSET, { topic: uniqueName('RT'), queueId: '0' });
    expect(again.code).toBe(ResponseCode.SUCCESS);
  });

  test('a header field of the wrong type or a bad name is refused with a remark naming it, as on HTTP', async () => {
    const c = await connect();
    const bad = await c.request(RequestCode.GET_MAX_OFFSET, { topic: 'T', queueId: 'abc' });
    expect(bad.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(bad.remark).toContain('queueId');
    const missing = await c.request(RequestCode.GET_MAX_OFFSET, { queueId: '0' });
    expect(missing.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(missing.remark).toContain('topic');
    const http = await rb.fx.client.send('bad/../name', 'x');
    const tcp = await c.request(
      RequestCode.SEND_MESSAGE,
      {
        producerGroup: 'P',
        topic: 'bad/../name',
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: '4',
        queueId: '0',
        sysFlag: '0',
        bornTimestamp: String(Date.now()),
        flag: '0',
      },
      { body: Buffer.from('x') },
    );
    expect(tcp.code).toBe(http.code);
    expect(tcp.remark).toBe(http.remark);
  });

  test('a held pull does not block other calls on the same connection; it answers when a message arrives', async () => {
    const topic = uniqueName('RT');
    const group = uniqueName('RG');
    expect((await rb.fx.client.send(topic, 'first', { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
    const c = await connect();
    const held = c.request(RequestCode.PULL_MESSAGE, pullHeader(group, topic, 1, 20_000));
    await waitFor(() => rb.fx.broker.pullRequestHoldService.size > 0);
    const started = Date.now();
    const other = await c.request(RequestCode.GET_MAX_OFFSET, { topic, queueId: '0' });
    expect(other.extFields?.offset).toBe('1');
    expect(Date.now() - started).toBeLessThan(2_000);
    expect((await rb.fx.client.send(topic, 'second', { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
    const r = await held;
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.extFields?.nextBeginOffset).toBe('2');
    expect(r.body?.includes(Buffer.from('second'))).toBe(true);
  });

  test('a client that disconnects releases its held pulls', async () => {
    const topic = uniqueName('RT');
    const group = uniqueName('RG');
    expect((await rb.fx.client.send(topic, 'x', { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
    const before = rb.fx.broker.pullRequestHoldService.size;
    const c = await connect();
    for (let i = 0; i < 5; i++) void c.request(RequestCode.PULL_MESSAGE, pullHeader(group, topic, 1, 60_000));
    await waitFor(() => rb.fx.broker.pullRequestHoldService.size === before + 5);
    await c.close();
    await waitFor(() => rb.fx.broker.pullRequestHoldService.size === before);
  });

  test('a oneway request is run and not answered', async () => {
    const topic = uniqueName('RT');
    const group = uniqueName('RG');
    expect((await rb.fx.client.send(topic, 'x', { queueId: 0 })).code).toBe(ResponseCode.SUCCESS);
    const c = await connect();
    // The group exists once it has pulled.
    await c.request(RequestCode.PULL_MESSAGE, pullHeader(group, topic, 0, 0));
    c.sendOneway(RequestCode.UPDATE_CONSUMER_OFFSET, {
      consumerGroup: group,
      topic,
      queueId: '0',
      commitOffset: '1',
    });
    const q = await c.request(RequestCode.QUERY_CONSUMER_OFFSET, { consumerGroup: group, topic, queueId: '0' });
    expect(q.extFields?.offset).toBe('1');
    // Only the two answered requests produced responses.
    expect(c.responses).toHaveLength(2);
  });

  test('SEND_MESSAGE_V2 with its one-letter header keys is stored; the answer carries msgId, queueId, queueOffset', async () => {
    const topic = uniqueName('RT');
    const c = await connect();
    const r = await c.request(
      RequestCode.SEND_MESSAGE_V2,
      {
        a: 'PG',
        b: topic,
        c: 'TBW102',
        d: '4',
        e: '1',
        f: '0',
        g: String(Date.now()),
        h: '0',
        i: 'TAGS\u0001TagV2\u0002',
        j: '0',
        k: 'false',
      },
      { body: Buffer.from('v2-body') },
    );
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.extFields?.queueId).toBe('1');
    expect(r.extFields?.queueOffset).toBe('0');
    expect(r.extFields?.msgId).toMatch(/^[0-9A-F]{32}$/);
    const pulled = await rb.fx.client.pull({ group: uniqueName('RG'), topic, queueId: 1 });
    expect(pulled.code).toBe(ResponseCode.SUCCESS);
    expect(pulled.body.includes(Buffer.from('v2-body'))).toBe(true);
  });

  test('name-server role: the route names the remoting rb.address; brokerAddrs keys quoted by request version', async () => {
    const topic = uniqueName('RT');
    expect((await rb.fx.client.send(topic, 'x')).code).toBe(ResponseCode.SUCCESS);
    const c = await connect();
    const modern = await c.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }, { version: 409 });
    expect(modern.code).toBe(ResponseCode.SUCCESS);
    const route = JSON.parse(String(modern.body)) as { brokerDatas: Array<{ brokerAddrs: Record<string, string> }> };
    expect(route.brokerDatas[0]?.brokerAddrs['0']).toBe(rb.address);
    const old = await c.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }, { version: 121 });
    expect(String(old.body)).toContain(`"brokerAddrs":{0:"${rb.address}"}`);
    const missing = await c.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: uniqueName('None') });
    expect(missing.code).toBe(ResponseCode.TOPIC_NOT_EXIST);

    const cluster = await c.request(106, null);
    expect(String(cluster.body)).toContain(`"brokerAddrs":{0:"${rb.address}"}`);
    const topics = await c.request(206, null);
    expect((JSON.parse(String(topics.body)) as { topicList: string[] }).topicList).toContain(topic);
    const runtime = await c.request(28, null);
    const table = (JSON.parse(String(runtime.body)) as { table: Record<string, string> }).table;
    expect(table.brokerVersionDesc).toBe('V4_9_8');
    expect(Number(table.commitLogMaxOffset)).toBeGreaterThan(0);
  });

  test('RocketMQ: members get NOTIFY_CONSUMER_IDS_CHANGED (oneway) when their group changes; a closed connection leaves', async () => {
    const topic = uniqueName('RT');
    const group = uniqueName('RG');
    expect((await rb.fx.client.send(topic, 'x')).code).toBe(ResponseCode.SUCCESS);
    const a = await connect();
    const b = await connect();
    expect(
      (await a.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('10.0.0.1@a', group, topic) })).code,
    ).toBe(ResponseCode.SUCCESS);
    expect(
      (await b.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('10.0.0.1@b', group, topic) })).code,
    ).toBe(ResponseCode.SUCCESS);
    await waitFor(() => a.pushed.length > 0);
    const note = a.pushed[0];
    expect(note?.code).toBe(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED);
    expect(note?.extFields?.consumerGroup).toBe(group);
    expect((note?.flag ?? 0) & 2).toBe(2);
    const list = await a.request(RequestCode.GET_CONSUMER_LIST_BY_GROUP, { consumerGroup: group });
    expect((JSON.parse(String(list.body)) as { consumerIdList: string[] }).consumerIdList.sort()).toEqual([
      '10.0.0.1@a',
      '10.0.0.1@b',
    ]);
    // b's connection closes: b leaves the group and a is told.
    const seen = a.pushed.length;
    await b.close();
    await waitFor(() => a.pushed.length > seen);
    expect(rb.fx.broker.consumerManager.getConsumerGroupInfo(group)?.getAllClientIds()).toEqual(['10.0.0.1@a']);
  });

  test('RocketMQ: a member that joins is told of its own group change (the notice reaches the newcomer too)', async () => {
    const topic = uniqueName('RT');
    const group = uniqueName('RG');
    const a = await connect();
    expect(
      (await a.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('10.0.0.2@a', group, topic) })).code,
    ).toBe(ResponseCode.SUCCESS);
    await waitFor(() => a.pushed.length > 0, 2000);
    expect(a.pushed[0]?.code).toBe(RequestCode.NOTIFY_CONSUMER_IDS_CHANGED);
    expect(a.pushed[0]?.extFields?.consumerGroup).toBe(group);
    // The second member is told of its join too, within the window or at its end.
    const b = await connect();
    expect(
      (await b.request(RequestCode.HEART_BEAT, null, { body: heartbeatBody('10.0.0.2@b', group, topic) })).code,
    ).toBe(ResponseCode.SUCCESS);
    await waitFor(() => b.pushed.some((n) => n.code === RequestCode.NOTIFY_CONSUMER_IDS_CHANGED), 2000);
  });

  test('garbage and oversized frames close that connection only, with the broker still serving', async () => {
    const good = await connect();
    const garbage = await connect();
    // serialize type 7 does not exist
    garbage.writeRaw(Buffer.from([0, 0, 0, 8, 7, 0, 0, 2, 123, 125, 0, 0]));
    await garbage.closed;
    const huge = await connect();
    const len = Buffer.alloc(8);
    len.writeInt32BE(64 * 1024 * 1024, 0);
    huge.writeRaw(len);
    await huge.closed;
    const badJson = await connect();
    const text = Buffer.from('{"code":');
    const frame = Buffer.alloc(8 + text.length);
    frame.writeInt32BE(4 + text.length, 0);
    frame.writeInt32BE(text.length, 4);
    text.copy(frame, 8);
    badJson.writeRaw(frame);
    await badJson.closed;
    const r = await good.request(RequestCode.GET_MIN_OFFSET, { topic: uniqueName('RT'), queueId: '0' });
    expect(r.code).toBe(ResponseCode.SUCCESS);
  });
});
