import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';
import { decodeMessages } from '../../../src/common/codec/index.js';
import type { MessageExt } from '../../../src/common/message.js';
import { heartbeat, pullUntilFound, sendBack } from './group-client.js';

// Levels 3, 4, 5 (the first three retries) wait 1 s, 2 s, 3 s: short, and growing.
const DELAY_TABLE = '1s 1s 1s 2s 3s 4s';

let fx: BrokerFixture;

beforeAll(async () => {
  fx = await startBroker({ store: { messageDelayLevel: DELAY_TABLE } });
});
afterAll(async () => {
  await fx.close();
});

async function sendAndPull(topic: string, group: string, body = 'payload'): Promise<MessageExt> {
  const sent = await fx.client.send(topic, body, { tags: 'TagA', keys: 'k1' });
  expect(sent.code).toBe(0);
  await heartbeat(fx.client, 'cid-1', group, { topics: [topic] });
  const { messages } = await pullUntilFound(fx.client, group, topic, 0);
  expect(messages).toHaveLength(1);
  return messages[0] as MessageExt;
}

describe('CONSUMER_SEND_MSG_BACK: %RETRY% with growing delays, then %DLQ%', () => {
  test('a message that always fails is retried exactly maxReconsumeTimes times with growing delays, then parked in the DLQ', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('G');
    const original = await sendAndPull(topic, group);
    const originId = original.offsetMsgId as string;
    const retryTopic = `%RETRY%${group}`;
    const maxReconsumeTimes = 3;

    let current = original;
    let retryOffset = 0;
    const waits: number[] = [];
    for (let attempt = 1; attempt <= maxReconsumeTimes; attempt++) {
      const t0 = Date.now();
      const back = await sendBack(fx.client, {
        offset: current.commitLogOffset,
        group,
        delayLevel: 0,
        maxReconsumeTimes,
        originMsgId: current.msgId,
        originTopic: topic,
      });
      expect(back.code).toBe(0);
      const { messages, next } = await pullUntilFound(fx.client, group, retryTopic, retryOffset, 15_000);
      waits.push(Date.now() - t0);
      retryOffset = next;
      expect(messages).toHaveLength(1);
      const copy = messages[0] as MessageExt;
      // RocketMQ: the properties a retry copy carries
      expect(copy.topic).toBe(retryTopic);
      expect(copy.reconsumeTimes).toBe(attempt);
      expect(copy.properties?.RETRY_TOPIC).toBe(topic);
      expect(copy.properties?.ORIGIN_MESSAGE_ID).toBe(originId);
      expect(copy.properties?.REAL_TOPIC).toBe(retryTopic);
      // RocketMQ 4.9.8 keeps the DELAY level in the delivered record.
      expect(copy.properties?.DELAY).toMatch(/^\d+$/);
      expect(copy.properties?.TAGS).toBe('TagA');
      expect(copy.properties?.KEYS).toBe('k1');
      expect(copy.properties?.UNIQ_KEY).toBe(original.properties?.UNIQ_KEY);
      expect(copy.body?.toString()).toBe('payload');
      expect(copy.bornTimestamp).toBe(original.bornTimestamp);
      current = copy;
    }
    // delay levels 3 + reconsumeTimes: 3, 4, 5 → 1 s, 2 s, 3 s
    expect(waits[0]).toBeGreaterThanOrEqual(950);
    expect(waits[1]).toBeGreaterThanOrEqual(1950);
    expect(waits[2]).toBeGreaterThanOrEqual(2950);
    expect(waits[1] as number).toBeGreaterThan(waits[0] as number);
    expect(waits[2] as number).toBeGreaterThan(waits[1] as number);

    // the next failure parks it in the DLQ, at once
    const last = await sendBack(fx.client, {
      offset: current.commitLogOffset,
      group,
      delayLevel: 0,
      maxReconsumeTimes,
    });
    expect(last.code).toBe(0);
    const dlq = `%DLQ%${group}`;
    expect(fx.broker.topicConfigManager.selectTopicConfig(dlq)).toMatchObject({ readQueueNums: 1, perm: 2 });
    // RocketMQ (<= 4.8): the DLQ is not readable by default ...
    const refused = await fx.client.pull({ group, topic: dlq, offset: 0 });
    expect(refused.code).toBe(16);
    expect(refused.remark).toBe(`the topic[${dlq}] pulling message is forbidden`);
    // ... and can be consumed once permitted
    const upd = await fx.client.call('UPDATE_AND_CREATE_TOPIC', {
      topic: dlq,
      readQueueNums: 1,
      writeQueueNums: 1,
      perm: 6,
    });
    expect(upd.code).toBe(0);
    const { messages } = await pullUntilFound(fx.client, group, dlq, 0, 2000);
    const dead = messages[0] as MessageExt;
    expect(dead.reconsumeTimes).toBe(maxReconsumeTimes + 1);
    expect(dead.properties?.DELAY).toBe('0');
    expect(dead.properties?.RETRY_TOPIC).toBe(topic);
    expect(dead.properties?.ORIGIN_MESSAGE_ID).toBe(originId);
    // nothing more reached the retry topic
    const after = await fx.client.pull({ group, topic: retryTopic, offset: retryOffset });
    expect(after.code).not.toBe(0);
  }, 30_000);

  test("the group's retryMaxTimes applies when the header carries none", async () => {
    const topic = uniqueName('T');
    const group = uniqueName('G');
    const cfg = { groupName: group, retryMaxTimes: 0 };
    expect(
      (await fx.client.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, Buffer.from(JSON.stringify(cfg)))).code,
    ).toBe(0);
    const original = await sendAndPull(topic, group);
    expect((await sendBack(fx.client, { offset: original.commitLogOffset, group, delayLevel: 0 })).code).toBe(0);
    const dlqConfig = fx.broker.topicConfigManager.selectTopicConfig(`%DLQ%${group}`);
    expect(dlqConfig).toBeDefined();
    if (dlqConfig) fx.broker.topicConfigManager.updateTopicConfig({ ...dlqConfig, perm: 6 });
    const { messages } = await pullUntilFound(fx.client, group, `%DLQ%${group}`, 0, 2000);
    expect(messages[0]?.reconsumeTimes).toBe(1);
  });

  test('RocketMQ: a negative delay level sends the message straight to the DLQ', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('G');
    const original = await sendAndPull(topic, group);
    const scheduled = (): number =>
      [0, 1, 2, 3, 4, 5].reduce((n, q) => n + fx.broker.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', q), 0);
    const before = scheduled();
    expect((await sendBack(fx.client, { offset: original.commitLogOffset, group, delayLevel: -1 })).code).toBe(0);
    expect(scheduled()).toBe(before);
    const dlq = `%DLQ%${group}`;
    const stored = await fx.broker.store.getMessage(group, dlq, 0, 0, 32, null);
    expect(stored.status).toBe('FOUND');
    const dead = decodeMessages(stored.messages[0] as Buffer)[0] as MessageExt;
    expect(dead.reconsumeTimes).toBe(1);
    expect(dead.properties?.RETRY_TOPIC).toBe(topic);
  });

  test('a delay level asked by the client is used as given', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('G');
    const original = await sendAndPull(topic, group);
    const before = fx.broker.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 0);
    expect((await sendBack(fx.client, { offset: original.commitLogOffset, group, delayLevel: 1 })).code).toBe(0);
    expect(fx.broker.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 0)).toBe(before + 1);
    const { messages } = await pullUntilFound(fx.client, group, `%RETRY%${group}`, 0, 5000);
    expect(messages[0]?.reconsumeTimes).toBe(1);
  });

  test('RocketMQ: an unknown commit-log offset is answered SYSTEM_ERROR "look message by offset failed, <offset>"', async () => {
    const group = uniqueName('G');
    const a = await sendBack(fx.client, { offset: 987654321, group, delayLevel: 0 });
    expect(a.code).toBe(1);
    expect(a.remark).toBe('look message by offset failed, 987654321');
  });

  test('RocketMQ: retryQueueNums 0 answers SUCCESS and drops the message', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('G');
    const cfg = { groupName: group, retryQueueNums: 0 };
    expect(
      (await fx.client.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, Buffer.from(JSON.stringify(cfg)))).code,
    ).toBe(0);
    const original = await sendAndPull(topic, group);
    expect((await sendBack(fx.client, { offset: original.commitLogOffset, group, delayLevel: 0 })).code).toBe(0);
    expect(fx.broker.topicConfigManager.selectTopicConfig(`%RETRY%${group}`)).toBeUndefined();
    expect(fx.broker.topicConfigManager.selectTopicConfig(`%DLQ%${group}`)).toBeUndefined();
  });
});

describe('CONSUMER_SEND_MSG_BACK without auto-created groups', () => {
  test('RocketMQ: an unknown group is answered SUBSCRIPTION_GROUP_NOT_EXIST', async () => {
    const other = await startBroker({ autoCreateSubscriptionGroup: false });
    try {
      const a = await other.client.call('CONSUMER_SEND_MSG_BACK', { offset: 0, group: 'nobody', delayLevel: 0 });
      expect(a.code).toBe(26);
      expect(a.remark).toMatch(/^subscription group not exist, nobody \nSee https:/);
    } finally {
      await other.close();
    }
  });
});
