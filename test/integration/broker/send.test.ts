/**
 * The send path (SEND_MESSAGE, SEND_BATCH_MESSAGE), topic auto-creation, routes and admin commands.
 */
import { decodeMessages, encodeBatchBody, MessageSysFlag } from '../../../src/common/codec/index.js';
import { FAQ_SUFFIX, ResponseCode, TopicRouteDataSchema } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;

beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

async function pullAll(topic: string, queueId = 0) {
  const r = await f.client.pull({ group: uniqueName('g'), topic, queueId });
  return r.code === ResponseCode.SUCCESS ? decodeMessages(r.body) : [];
}

describe('SEND_MESSAGE', () => {
  test('stores body, tags, keys and user properties; answers msgId, queueId, queueOffset', async () => {
    const topic = uniqueName('T');
    const r = await f.client.send(topic, 'hello', {
      tags: 'TagA',
      keys: 'k1 k2',
      properties: { color: 'red' },
      queueId: 2,
    });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.header).toMatchObject({ queueId: 2, queueOffset: 0 });
    expect(r.header.msgId).toMatch(/^[0-9A-F]{32}$/);
    const [m] = await pullAll(topic, 2);
    expect(m?.body?.toString()).toBe('hello');
    expect(m?.properties).toMatchObject({ TAGS: 'TagA', KEYS: 'k1 k2', color: 'red', CLUSTER: 'DefaultCluster' });
    expect(m?.offsetMsgId).toBe(r.header.msgId);
  });

  test('keeps the producer UNIQ_KEY and adds one when missing', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'a', { properties: { UNIQ_KEY: 'AC11000100002A9F0000000000000001' } });
    await f.client.send(topic, 'b');
    const msgs = await pullAll(topic);
    expect(msgs[0]?.properties?.UNIQ_KEY).toBe('AC11000100002A9F0000000000000001');
    expect(msgs[0]?.msgId).toBe('AC11000100002A9F0000000000000001');
    expect(msgs[1]?.properties?.UNIQ_KEY).toMatch(/^[0-9A-F]{32}$/);
  });

  test('auto-creates a topic from TBW102 with min(defaultTopicQueueNums, 8) queues', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'x');
    const route = await f.client.call('GET_ROUTEINFO_BY_TOPIC', { topic });
    expect(route.code).toBe(ResponseCode.SUCCESS);
    const data = TopicRouteDataSchema.parse(JSON.parse(route.body.toString('utf8')));
    expect(data.queueDatas[0]).toMatchObject({ brokerName: 'broker-a', readQueueNums: 4, writeQueueNums: 4, perm: 6 });
    expect(data.brokerDatas[0]).toEqual({
      cluster: 'DefaultCluster',
      brokerName: 'broker-a',
      brokerAddrs: { '0': f.broker.address },
    });
  });

  test('a negative queue id picks a queue of the topic', async () => {
    const topic = uniqueName('T');
    const r = await f.client.send(topic, 'x', { queueId: -1 });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.header.queueId).toBeGreaterThanOrEqual(0);
    expect(r.header.queueId).toBeLessThan(4);
  });

  test('a queue id past the topic is SYSTEM_ERROR', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'x');
    const r = await f.client.send(topic, 'x', { queueId: 9 });
    expect(r.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(r.remark).toMatch(/^request queueId\[9\] is illegal/);
  });

  test('sending to the delay topic is forbidden', async () => {
    const r = await f.client.send('SCHEDULE_TOPIC_XXXX', 'x');
    expect(r.code).toBe(ResponseCode.NO_PERMISSION);
    expect(r.remark).toBe('Sending message to topic[SCHEDULE_TOPIC_XXXX] is forbidden.');
  });

  test('a MULTI_TAG topic stores the MULTI_TAGS sysFlag', async () => {
    const topic = uniqueName('T');
    await f.client.call('UPDATE_AND_CREATE_TOPIC', {
      topic,
      readQueueNums: 1,
      writeQueueNums: 1,
      perm: 6,
      topicFilterType: 'MULTI_TAG',
    });
    await f.client.send(topic, 'x', { tags: 'a' });
    const [m] = await pullAll(topic);
    expect((m?.sysFlag ?? 0) & MessageSysFlag.MULTI_TAGS_FLAG).toBe(MessageSysFlag.MULTI_TAGS_FLAG);
  });

  test('a message with a delay level goes to SCHEDULE_TOPIC_XXXX, queue level-1', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'later', { properties: { DELAY: '3' } });
    expect((await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 })).header.offset).toBe(0);
    const sched = await f.client.call('GET_MAX_OFFSET', { topic: 'SCHEDULE_TOPIC_XXXX', queueId: 2 });
    expect(sched.header.offset as number).toBeGreaterThanOrEqual(1);
  });

  /** An admin makes the (write-only) dead-letter topic readable. */
  const permitDlq = (dlq: string): void => {
    const cfg = f.broker.topicConfigManager.selectTopicConfig(dlq);
    if (cfg) f.broker.topicConfigManager.updateTopicConfig({ ...cfg, perm: 6 });
  };

  test('RocketMQ: a plain send to %RETRY%group past maxReconsumeTimes goes to %DLQ%group', async () => {
    const group = uniqueName('g');
    const retry = `%RETRY%${group}`;
    const ok = await f.client.send(retry, 'again', { reconsumeTimes: 1, maxReconsumeTimes: 16 });
    expect(ok.code).toBe(ResponseCode.SUCCESS);
    expect((await pullAll(retry)).map((m) => m.body?.toString())).toEqual(['again']);
    const dead = await f.client.send(retry, 'dead', { reconsumeTimes: 17, maxReconsumeTimes: 16 });
    expect(dead.code).toBe(ResponseCode.SUCCESS);
    permitDlq(`%DLQ%${group}`);
    const dlq = await pullAll(`%DLQ%${group}`);
    expect(dlq.map((m) => m.body?.toString())).toEqual(['dead']);
    expect(dlq[0]?.reconsumeTimes).toBe(17);
  });

  test('RocketMQ: a plain send to %RETRY%group dead-letters at reconsumeTimes >= maxReconsumeTimes, as CONSUMER_SEND_MSG_BACK does', async () => {
    const group = uniqueName('g');
    const retry = `%RETRY%${group}`;
    const below = await f.client.send(retry, 'below', { reconsumeTimes: 15, maxReconsumeTimes: 16 });
    expect(below.code).toBe(ResponseCode.SUCCESS);
    expect((await pullAll(retry)).map((m) => m.body?.toString())).toEqual(['below']);
    const at = await f.client.send(retry, 'at', { reconsumeTimes: 16, maxReconsumeTimes: 16 });
    expect(at.code).toBe(ResponseCode.SUCCESS);
    expect((await pullAll(retry)).map((m) => m.body?.toString())).toEqual(['below']);
    permitDlq(`%DLQ%${group}`);
    expect((await pullAll(`%DLQ%${group}`)).map((m) => m.body?.toString())).toEqual(['at']);
  });

  test('the %DLQ% topic a plain send creates gets the same perm as one CONSUMER_SEND_MSG_BACK creates: write-only by default', async () => {
    const group = uniqueName('g');
    const dlq = `%DLQ%${group}`;
    await f.client.send(`%RETRY%${group}`, 'dead', { reconsumeTimes: 16, maxReconsumeTimes: 16 });
    expect(f.broker.topicConfigManager.selectTopicConfig(dlq)).toMatchObject({ readQueueNums: 1, perm: 2 });
    const refused = await f.client.pull({ group, topic: dlq, offset: 0 });
    expect(refused.code).toBe(ResponseCode.NO_PERMISSION);
  });
});

describe('SEND_BATCH_MESSAGE', () => {
  test('stores each message as its own record with consecutive offsets; msgIds comma-joined', async () => {
    const topic = uniqueName('T');
    const body = encodeBatchBody([
      { body: Buffer.from('b0'), properties: { TAGS: 'x' } },
      { body: Buffer.from('b1'), flag: 3 },
      { body: Buffer.from('b2'), properties: { UNIQ_KEY: 'AC11000100002A9F0000000000000009' } },
    ]);
    const header = {
      producerGroup: 'p',
      topic,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: 4,
      queueId: 1,
      sysFlag: 0,
      bornTimestamp: Date.now(),
      flag: 0,
      batch: true,
    };
    const r = await f.client.call('SEND_BATCH_MESSAGE', header, body);
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect((r.header.msgId as string).split(',')).toHaveLength(3);
    expect(r.header).toMatchObject({ queueId: 1, queueOffset: 0 });
    const msgs = await pullAll(topic, 1);
    expect(msgs.map((m) => m.body?.toString())).toEqual(['b0', 'b1', 'b2']);
    expect(msgs.map((m) => m.queueOffset)).toEqual([0, 1, 2]);
    expect(msgs[1]?.flag).toBe(3);
    expect(msgs[0]?.properties?.TAGS).toBe('x');
    expect(msgs[2]?.properties?.UNIQ_KEY).toBe('AC11000100002A9F0000000000000009');
  });

  test('a malformed batch body is MESSAGE_ILLEGAL', async () => {
    const r = await f.client.call(
      'SEND_BATCH_MESSAGE',
      {
        producerGroup: 'p',
        topic: uniqueName('T'),
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: 4,
        queueId: 0,
        sysFlag: 0,
        bornTimestamp: 1,
        flag: 0,
      },
      Buffer.from([0, 0, 0, 99, 1, 2]),
    );
    expect(r.code).toBe(ResponseCode.MESSAGE_ILLEGAL);
  });
});

describe('routes and admin', () => {
  test('TOPIC_NOT_EXIST for an unknown topic; TBW102 is served while auto-creation is on', async () => {
    const missing = uniqueName('Missing');
    const r = await f.client.call('GET_ROUTEINFO_BY_TOPIC', { topic: missing });
    expect(r.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(r.remark).toBe(`No topic route info in name server for the topic: ${missing}${FAQ_SUFFIX}`);
    const tbw = await f.client.call('GET_ROUTEINFO_BY_TOPIC', { topic: 'TBW102' });
    expect(tbw.code).toBe(ResponseCode.SUCCESS);
    const data = TopicRouteDataSchema.parse(JSON.parse(tbw.body.toString('utf8')));
    expect(data.queueDatas[0]?.perm).toBe(7);
  });

  test('with auto-creation off: no TBW102 route, and a send to an unknown topic is TOPIC_NOT_EXIST', async () => {
    const g = await startBroker({ autoCreateTopicEnable: false });
    try {
      expect((await g.client.call('GET_ROUTEINFO_BY_TOPIC', { topic: 'TBW102' })).code).toBe(
        ResponseCode.TOPIC_NOT_EXIST,
      );
      const topic = uniqueName('T');
      const r = await g.client.send(topic, 'x');
      expect(r.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
      expect(r.remark).toBe(`topic[${topic}] not exist, apply first please!${FAQ_SUFFIX}`);
      const c = await g.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 2, writeQueueNums: 2, perm: 6 });
      expect(c.code).toBe(ResponseCode.SUCCESS);
      expect((await g.client.send(topic, 'x', { queueId: 1 })).code).toBe(ResponseCode.SUCCESS);
    } finally {
      await g.close();
    }
  });

  test('UPDATE_AND_CREATE_TOPIC refuses system topics', async () => {
    const r = await f.client.call('UPDATE_AND_CREATE_TOPIC', {
      topic: 'TBW102',
      readQueueNums: 1,
      writeQueueNums: 1,
      perm: 6,
    });
    expect(r.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(r.remark).toBe('The topic[TBW102] is conflict with system topic.');
  });

  test('VIEW_MESSAGE_BY_ID for an offset with no message is SYSTEM_ERROR', async () => {
    const r = await f.client.call('VIEW_MESSAGE_BY_ID', { offset: 987_654_321 });
    expect(r.code).toBe(ResponseCode.SYSTEM_ERROR);
  });

  test('a write-only broker refuses pulls but a read-only broker refuses sends', async () => {
    const g = await startBroker({ brokerPermission: 4 });
    try {
      const r = await g.client.send(uniqueName('T'), 'x');
      expect(r.code).toBe(ResponseCode.NO_PERMISSION);
      expect(r.remark).toBe('the broker[127.0.0.1] sending message is forbidden');
    } finally {
      await g.close();
    }
  });
});
