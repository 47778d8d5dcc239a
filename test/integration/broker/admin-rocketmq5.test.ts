/**
 * What RocketMQ 5's admin tools ask or read beyond 4.9.8's: GET_TOPIC_CONFIG (351), which 5.x's mqadmin asks
 * before topicStatus (the topic's config as TopicConfigAndQueueMapping in fastjson's form, TOPIC_NOT_EXIST
 * with RocketMQ's remark for an unknown topic), and the `topicPutTps` of GET_TOPIC_STATS_INFO.
 */
import { ResponseCode, parseFastJson } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;

beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

test('answers the topic config with attributes and no mappingDetail, keys sorted as fastjson writes them', async () => {
  const topic = uniqueName('T');
  const created = await f.client.call('UPDATE_AND_CREATE_TOPIC', {
    topic,
    readQueueNums: 3,
    writeQueueNums: 2,
    perm: 6,
  });
  expect(created.code).toBe(ResponseCode.SUCCESS);
  // RocketMQ 5's client always sends lo=true; the answer is the same without it for a topic that is not static.
  for (const header of [{ topic, lo: true }, { topic }]) {
    const r = await f.client.call('GET_TOPIC_CONFIG', header);
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.body.toString('utf8')).toBe(
      `{"attributes":{},"order":false,"perm":6,"readQueueNums":3,"topicFilterType":"SINGLE_TAG","topicName":"${topic}",` +
        `"topicSysFlag":0,"writeQueueNums":2}`,
    );
  }
});

test('an unknown topic is TOPIC_NOT_EXIST with the remark RocketMQ writes', async () => {
  const topic = uniqueName('none');
  const r = await f.client.call('GET_TOPIC_CONFIG', { topic, lo: true });
  expect(r.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
  expect(r.remark).toBe(`No topic in this broker. topic: ${topic}`);
});

test("GET_TOPIC_STATS_INFO carries the topic's put rate over the last minute (RocketMQ 5's topicPutTps)", async () => {
  const topic = uniqueName('T');
  await f.client.send(topic, 'a');
  await f.client.send(topic, 'b');
  const r = await f.client.call('GET_TOPIC_STATS_INFO', { topic });
  expect(r.code).toBe(ResponseCode.SUCCESS);
  const { topicPutTps } = parseFastJson(r.body.toString('utf8')) as { topicPutTps?: number };
  expect(topicPutTps).toBeGreaterThan(0);
});
