/**
 * The admin processors mqadmin asks (topic list, topic stats, consume stats, connections, query by key,
 * delete topic, reset offset) over real HTTP against an in-process broker, with the fastjson bodies
 * RocketMQ's tools read.
 */
import { FastJsonMap, ResponseCode, parseFastJson } from '../../../src/protocol/index.js';
import { decodeMessages } from '../../../src/common/codec/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;

beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

type MQ = { topic: string; brokerName: string; queueId: number };
function offsetTable<V>(body: Buffer): Array<[MQ, V]> {
  const parsed = parseFastJson(body.toString('utf8')) as { offsetTable: FastJsonMap<MQ, V> | Record<string, never> };
  return parsed.offsetTable instanceof FastJsonMap ? parsed.offsetTable.entries : [];
}

async function createTopic(topic: string, queues = 2): Promise<void> {
  const r = await f.client.call('UPDATE_AND_CREATE_TOPIC', {
    topic,
    readQueueNums: queues,
    writeQueueNums: queues,
    perm: 6,
  });
  expect(r.code).toBe(ResponseCode.SUCCESS);
}

describe('topics', () => {
  test('GET_ALL_TOPIC_LIST_FROM_NAMESERVER and GET_ALL_TOPIC_CONFIG list a created topic', async () => {
    const topic = uniqueName('T');
    await createTopic(topic, 3);
    const list = await f.client.call('GET_ALL_TOPIC_LIST_FROM_NAMESERVER', {});
    expect(list.code).toBe(ResponseCode.SUCCESS);
    expect((JSON.parse(list.body.toString()) as { topicList: string[] }).topicList).toContain(topic);
    const all = await f.client.call('GET_ALL_TOPIC_CONFIG', {});
    const cfg = (JSON.parse(all.body.toString()) as { topicConfigTable: Record<string, { readQueueNums: number }> })
      .topicConfigTable[topic];
    expect(cfg?.readQueueNums).toBe(3);
  });

  test('GET_TOPIC_STATS_INFO: min/max offset and last store time per queue, MessageQueue keys as objects', async () => {
    const topic = uniqueName('T');
    await createTopic(topic, 2);
    for (let i = 0; i < 3; i++) await f.client.send(topic, `m${i}`, { queueId: 1 });
    const r = await f.client.call('GET_TOPIC_STATS_INFO', { topic });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.body.toString()).toMatch(/^\{"offsetTable":\{\{"brokerName":"[^"]+","queueId":0,"topic":"/);
    const rows = offsetTable<{ minOffset: number; maxOffset: number; lastUpdateTimestamp: number }>(r.body);
    expect(rows.map(([mq, o]) => [mq.queueId, o.minOffset, o.maxOffset])).toEqual([
      [0, 0, 0],
      [1, 0, 3],
    ]);
    expect(rows[1]?.[1].lastUpdateTimestamp).toBeGreaterThan(Date.now() - 60_000);
    expect(rows[0]?.[1].lastUpdateTimestamp).toBe(0);
    const unknown = await f.client.call('GET_TOPIC_STATS_INFO', { topic: uniqueName('none') });
    expect(unknown.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
  });

  test('DELETE_TOPIC_IN_BROKER removes the topic, its queues and its offsets; a system topic is refused', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    await createTopic(topic, 1);
    await f.client.send(topic, 'x');
    await f.client.pull({ group, topic, commitOffset: 1 });
    expect((await f.client.call('DELETE_TOPIC_IN_BROKER', { topic })).code).toBe(ResponseCode.SUCCESS);
    expect((await f.client.call('GET_TOPIC_STATS_INFO', { topic })).code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(f.broker.store.getMaxOffsetInQueue(topic, 0)).toBe(0);
    expect(f.broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(-1);
    const sys = await f.client.call('DELETE_TOPIC_IN_BROKER', { topic: 'TBW102' });
    expect(sys.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(sys.remark).toBe('The topic[TBW102] is conflict with system topic.');
  });
});

describe('consumer groups', () => {
  test('GET_CONSUME_STATS reads the committed offsets fresh from memory', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    await createTopic(topic, 2);
    for (let i = 0; i < 5; i++) await f.client.send(topic, `m${i}`, { queueId: 0 });
    await f.client.pull({ group, topic }); // creates the group
    await f.client.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 0, commitOffset: 2 });
    const r = await f.client.call('GET_CONSUME_STATS', { consumerGroup: group });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    const rows = offsetTable<{ brokerOffset: number; consumerOffset: number; lastTimestamp: number }>(r.body);
    expect(rows.map(([mq, o]) => [mq.topic, mq.queueId, o.brokerOffset, o.consumerOffset])).toEqual([
      [topic, 0, 5, 2],
      [topic, 1, 0, 0],
    ]);
    expect(rows[0]?.[1].lastTimestamp).toBeGreaterThan(0);
    expect(r.body.toString()).toMatch(/^\{"consumeTps":[\d.]+,"offsetTable":/);
    // a second commit is visible at once (not after the 5-second flush)
    await f.client.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 0, commitOffset: 5 });
    const again = offsetTable<{ consumerOffset: number }>(
      (await f.client.call('GET_CONSUME_STATS', { consumerGroup: group, topic })).body,
    );
    expect(again[0]?.[1].consumerOffset).toBe(5);
  });

  test('GET_CONSUMER_CONNECTION_LIST: CONSUMER_NOT_ONLINE without members; members and subscriptions after a heartbeat', async () => {
    const group = uniqueName('g');
    const none = await f.client.call('GET_CONSUMER_CONNECTION_LIST', { consumerGroup: group });
    expect(none.code).toBe(ResponseCode.CONSUMER_NOT_ONLINE);
    expect(none.remark).toBe(`the consumer group[${group}] not online`);
    const topic = uniqueName('T');
    const heartbeat = {
      clientID: '10.0.0.5@1#1',
      consumerDataSet: [
        {
          groupName: group,
          consumeType: 'CONSUME_PASSIVELY',
          messageModel: 'CLUSTERING',
          consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
          unitMode: false,
          subscriptionDataSet: [
            {
              topic,
              subString: 'TagA',
              tagsSet: ['TagA'],
              codeSet: [2598919],
              subVersion: 1,
              expressionType: 'TAG',
              classFilterMode: false,
            },
          ],
        },
      ],
      producerDataSet: [],
    };
    expect((await f.client.call('HEART_BEAT', {}, Buffer.from(JSON.stringify(heartbeat)))).code).toBe(
      ResponseCode.SUCCESS,
    );
    const r = await f.client.call('GET_CONSUMER_CONNECTION_LIST', { consumerGroup: group });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    const body = JSON.parse(r.body.toString()) as {
      connectionSet: Array<{ clientId: string; clientAddr: string; language: string }>;
      subscriptionTable: Record<string, { subString: string }>;
      consumeType: string;
      messageModel: string;
    };
    expect(body.connectionSet.map((c) => c.clientId)).toEqual(['10.0.0.5@1#1']);
    expect(body.connectionSet[0]?.clientAddr).toMatch(/:\d+$/);
    expect(body.subscriptionTable[topic]?.subString).toBe('TagA');
    expect(body.consumeType).toBe('CONSUME_PASSIVELY');
    expect(body.messageModel).toBe('CLUSTERING');
    await f.client.call('UNREGISTER_CLIENT', { clientID: '10.0.0.5@1#1', consumerGroup: group });
  });

  test('INVOKE_BROKER_TO_RESET_OFFSET commits the offset of a time and the next pull is told PULL_OFFSET_MOVED', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    await createTopic(topic, 1);
    for (let i = 0; i < 3; i++) await f.client.send(topic, `old${i}`);
    const middle = Date.now() + 2;
    await new Promise((r) => setTimeout(r, 5)); // store times must differ from `middle`
    for (let i = 0; i < 2; i++) await f.client.send(topic, `new${i}`);
    await f.client.pull({ group, topic }); // creates the group
    await f.client.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 0, commitOffset: 5 });

    const r = await f.client.call('INVOKE_BROKER_TO_RESET_OFFSET', { topic, group, timestamp: middle, isForce: true });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(offsetTable<number>(r.body).map(([mq, o]) => [mq.queueId, o])).toEqual([[0, 3]]);
    expect(f.broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(3);
    // the consumer's own commit is ignored while the reset is pending
    await f.client.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 0, commitOffset: 5 });
    expect(f.broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(3);
    const pulled = await f.client.pull({ group, topic, offset: 5 });
    expect(pulled.code).toBe(ResponseCode.PULL_OFFSET_MOVED);
    expect(pulled.header.nextBeginOffset).toBe(3);
    const next = await f.client.pull({ group, topic, offset: 3 });
    expect(next.code).toBe(ResponseCode.SUCCESS);

    // without isForce an offset only moves back
    await f.client.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 0, commitOffset: 1 });
    const noForce = await f.client.call('INVOKE_BROKER_TO_RESET_OFFSET', {
      topic,
      group,
      timestamp: -1,
      isForce: false,
    });
    expect(offsetTable<number>(noForce.body)[0]?.[1]).toBe(1);
    const unknownGroup = await f.client.call('INVOKE_BROKER_TO_RESET_OFFSET', {
      topic,
      group: uniqueName('g'),
      timestamp: -1,
      isForce: true,
    });
    expect(unknownGroup.code).toBe(ResponseCode.SYSTEM_ERROR);
  });
});

describe('QUERY_MESSAGE', () => {
  test('finds the messages whose KEYS hold the key, newest first, at most maxNum; unique-key mode by UNIQ_KEY', async () => {
    const topic = uniqueName('T');
    await createTopic(topic, 2);
    await f.client.send(topic, 'a', { keys: 'order-1 user-9', queueId: 0 });
    await f.client.send(topic, 'b', { keys: 'order-2', queueId: 1 });
    await f.client.send(topic, 'c', { keys: 'order-1', queueId: 1, properties: { UNIQ_KEY: 'ABCDEF0123' } });
    const q = (key: string, maxNum = 32, extra: Record<string, unknown> = {}) =>
      f.client.call('QUERY_MESSAGE', {
        topic,
        key,
        maxNum,
        beginTimestamp: 0,
        endTimestamp: Number.MAX_SAFE_INTEGER,
        ...extra,
      });
    const r = await q('order-1');
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(decodeMessages(r.body).map((m) => String(m.body))).toEqual(['c', 'a']);
    expect(decodeMessages((await q('order-1', 1)).body)).toHaveLength(1);
    expect(decodeMessages((await q('user-9')).body).map((m) => String(m.body))).toEqual(['a']);
    const none = await q('order-');
    expect(none.code).toBe(ResponseCode.QUERY_NOT_FOUND);
    expect(none.remark).toBe('can not find message, maybe time range not correct');
    const byUniq = await q('ABCDEF0123', 32, { _UNIQUE_KEY_QUERY: 'true' });
    expect(decodeMessages(byUniq.body).map((m) => String(m.body))).toEqual(['c']);
    const past = await q('order-1', 32, { endTimestamp: 1000 });
    expect(past.code).toBe(ResponseCode.QUERY_NOT_FOUND);
  });
});
