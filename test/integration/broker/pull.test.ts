/**
 * PULL_MESSAGE over real HTTP: every response code of the pull path, in RocketMQ's order of checks,
 * with its remark (RocketMQ's PullMessageProcessor and DefaultMessageStore.getMessage).
 */
import { decodeMessages } from '../../../src/common/codec/index.js';
import { FAQ_SUFFIX, ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;

beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

async function sendN(
  topic: string,
  n: number,
  opts: { tags?: string; queueId?: number; props?: (i: number) => Record<string, string> } = {},
): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await f.client.send(topic, `m${i}`, {
      tags: opts.tags,
      queueId: opts.queueId ?? 0,
      properties: opts.props?.(i),
    });
    expect(r.code).toBe(ResponseCode.SUCCESS);
  }
}

describe('PULL_MESSAGE response codes', () => {
  test('FOUND: SUCCESS with the stored records as the body and RocketMQ header fields', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 3, { tags: 'TagA' });
    const r = await f.client.pull({ group: uniqueName('g'), topic });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(r.remark).toBe('FOUND');
    expect(r.header).toMatchObject({ nextBeginOffset: 3, minOffset: 0, maxOffset: 3, suggestWhichBrokerId: 0 });
    const msgs = decodeMessages(r.body);
    expect(msgs.map((m) => m.body?.toString())).toEqual(['m0', 'm1', 'm2']);
    expect(msgs.map((m) => m.queueOffset)).toEqual([0, 1, 2]);
    expect(msgs.every((m) => m.topic === topic && m.properties?.TAGS === 'TagA')).toBe(true);
    expect(
      msgs.every((m) => typeof m.properties?.UNIQ_KEY === 'string' && m.properties.CLUSTER === 'DefaultCluster'),
    ).toBe(true);
  });

  test('the body is the stored bytes, not a re-encoding (VIEW_MESSAGE_BY_ID gives the same record)', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 2);
    const r = await f.client.pull({ group: uniqueName('g'), topic });
    const msgs = decodeMessages(r.body);
    const first = msgs[0]!;
    const view = await f.client.call('VIEW_MESSAGE_BY_ID', { offset: first.commitLogOffset });
    expect(view.code).toBe(ResponseCode.SUCCESS);
    expect(r.body.subarray(0, first.storeSize).equals(view.body)).toBe(true);
  });

  test('RocketMQ: at most 32 messages per pull when the data is in memory, whatever maxMsgNums says', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 40);
    const r = await f.client.pull({ group: uniqueName('g'), topic, maxMsgNums: 1000 });
    expect(decodeMessages(r.body)).toHaveLength(32);
    expect(r.header.nextBeginOffset).toBe(32);
  });

  test('OFFSET_OVERFLOW_ONE: PULL_NOT_FOUND, nextBeginOffset stays', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 2);
    const r = await f.client.pull({ group: uniqueName('g'), topic, offset: 2 });
    expect(r.code).toBe(ResponseCode.PULL_NOT_FOUND);
    expect(r.remark).toBe('OFFSET_OVERFLOW_ONE');
    expect(r.header.nextBeginOffset).toBe(2);
  });

  test('OFFSET_OVERFLOW_BADLY: PULL_OFFSET_MOVED to maxOffset', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 2);
    const r = await f.client.pull({ group: uniqueName('g'), topic, offset: 50 });
    expect(r.code).toBe(ResponseCode.PULL_OFFSET_MOVED);
    expect(r.remark).toBe('OFFSET_OVERFLOW_BADLY');
    expect(r.header.nextBeginOffset).toBe(2);
  });

  test('NO_MESSAGE_IN_QUEUE: PULL_NOT_FOUND at offset 0, PULL_OFFSET_MOVED to 0 otherwise', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 1, { queueId: 0 });
    const at0 = await f.client.pull({ group: uniqueName('g'), topic, queueId: 1, offset: 0 });
    expect(at0.code).toBe(ResponseCode.PULL_NOT_FOUND);
    expect(at0.remark).toBe('NO_MESSAGE_IN_QUEUE');
    const at7 = await f.client.pull({ group: uniqueName('g'), topic, queueId: 1, offset: 7 });
    expect(at7.code).toBe(ResponseCode.PULL_OFFSET_MOVED);
    expect(at7.remark).toBe('NO_MESSAGE_IN_QUEUE');
    expect(at7.header.nextBeginOffset).toBe(0);
  });

  test('NO_MATCHED_MESSAGE: PULL_RETRY_IMMEDIATELY with nextBeginOffset advanced past the filtered scan', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 5, { tags: 'TagA' });
    const r = await f.client.pull({ group: uniqueName('g'), topic, subscription: 'TagB' });
    expect(r.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
    expect(r.remark).toBe('NO_MATCHED_MESSAGE');
    expect(r.header.nextBeginOffset).toBe(5);
    expect(r.body.length).toBe(0);
  });

  test('tag filtering keeps only matching hashes; SQL92 filters on properties', async () => {
    const topic = uniqueName('T');
    for (let i = 0; i < 6; i++) {
      await f.client.send(topic, `m${i}`, { tags: i % 2 ? 'TagA' : 'TagB', properties: { a: String(i) } });
    }
    const tagged = await f.client.pull({ group: uniqueName('g'), topic, subscription: 'TagA || TagC' });
    expect(decodeMessages(tagged.body).map((m) => m.body?.toString())).toEqual(['m1', 'm3', 'm5']);
    const sql = await f.client.pull({
      group: uniqueName('g'),
      topic,
      subscription: "a >= 3 AND TAGS = 'TagB'",
      expressionType: 'SQL92',
    });
    expect(sql.code).toBe(ResponseCode.SUCCESS);
    expect(decodeMessages(sql.body).map((m) => m.body?.toString())).toEqual(['m4']);
  });

  test('a subscription sent again with another type or subVersion is read again, not taken from an earlier pull', async () => {
    const topic = uniqueName('T');
    for (let i = 0; i < 4; i++) await f.client.send(topic, `m${i}`, { tags: 'a', properties: { a: String(i) } });
    const bodies = (r: { body: Buffer }): string[] => decodeMessages(r.body).map((m) => m.body?.toString() ?? '');
    for (let round = 0; round < 2; round++) {
      // The same text as a tag expression ("a" matches every message) and as SQL92 (a property that is not
      // a boolean: nothing matches; a = 1: one message).
      const asTag = await f.client.pull({ group: uniqueName('g'), topic, subscription: 'a' });
      expect(bodies(asTag)).toEqual(['m0', 'm1', 'm2', 'm3']);
      const asSql = await f.client.pull({ group: uniqueName('g'), topic, subscription: 'a', expressionType: 'SQL92' });
      expect(asSql.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
      const sql = await f.client.pull({
        group: uniqueName('g'),
        topic,
        subscription: 'a = 1',
        expressionType: 'SQL92',
      });
      expect(bodies(sql)).toEqual(['m1']);
      const tagOfSqlText = await f.client.pull({ group: uniqueName('g'), topic, subscription: 'a = 1' });
      expect(tagOfSqlText.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
    }
  });

  test('SUBSCRIPTION_PARSE_FAILED for a bad SQL92 expression, a bad tag expression and an unknown type', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 1);
    for (const [subscription, expressionType] of [
      ['a >', 'SQL92'],
      ['||', 'TAG'],
      ['x', 'GROOVY'],
    ] as const) {
      const r = await f.client.pull({ group: uniqueName('g'), topic, subscription, expressionType });
      expect(r.code).toBe(ResponseCode.SUBSCRIPTION_PARSE_FAILED);
      expect(r.remark).toBe("parse the consumer's subscription failed");
    }
  });

  test('TOPIC_NOT_EXIST with RocketMQ remark and FAQ suffix', async () => {
    const topic = uniqueName('Missing');
    const r = await f.client.pull({ group: uniqueName('g'), topic });
    expect(r.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    expect(r.remark).toBe(`topic[${topic}] not exist, apply first please! ${FAQ_SUFFIX}`);
  });

  test('INVALID_PARAMETER for a queue id outside the topic', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 1);
    for (const queueId of [4, 99, -1]) {
      const r = await f.client.pull({ group: uniqueName('g'), topic, queueId });
      expect(r.code).toBe(ResponseCode.INVALID_PARAMETER);
      expect(r.remark).toMatch(
        new RegExp(
          `^queueId\\[${queueId}\\] is illegal, topic:\\[${topic}\\] topicConfig.readQueueNums:\\[4\\] consumer:\\[`,
        ),
      );
    }
  });

  test('NO_PERMISSION when the topic is not readable (forbiddenType 3)', async () => {
    const topic = uniqueName('WriteOnly');
    const c = await f.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 2, writeQueueNums: 2, perm: 2 });
    expect(c.code).toBe(ResponseCode.SUCCESS);
    const r = await f.client.pull({ group: uniqueName('g'), topic });
    expect(r.code).toBe(ResponseCode.NO_PERMISSION);
    expect(r.remark).toBe(`the topic[${topic}] pulling message is forbidden`);
    expect(r.header.forbiddenType).toBe(3);
  });

  test('NO_PERMISSION when the group may not consume (forbiddenType 2)', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 1);
    const group = uniqueName('g');
    const body = Buffer.from(JSON.stringify({ groupName: group, consumeEnable: false }));
    expect((await f.client.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, body)).code).toBe(ResponseCode.SUCCESS);
    const r = await f.client.pull({ group, topic });
    expect(r.code).toBe(ResponseCode.NO_PERMISSION);
    expect(r.remark).toBe(`subscription group no permission, ${group}`);
    expect(r.header.forbiddenType).toBe(2);
  });

  test('SUBSCRIPTION_NOT_EXIST without the SUBSCRIPTION flag and without a registered consumer', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 1);
    const r = await f.client.pull({ group: uniqueName('g'), topic, useSubscriptionFlag: false });
    expect(r.code).toBe(ResponseCode.SUBSCRIPTION_NOT_EXIST);
    expect(r.remark).toBe(`the consumer's group info not exist${FAQ_SUFFIX}`);
  });

  describe('with a registered consumer (ConsumerManager)', () => {
    function register(
      group: string,
      topic: string,
      subString: string,
      subVersion: number,
      expressionType = 'TAG',
    ): void {
      const tagsSet = expressionType === 'TAG' && subString !== '*' ? subString.split('||').map((s) => s.trim()) : [];
      const codeSet = tagsSet.map((t) => {
        let h = 0;
        for (let i = 0; i < t.length; i++) h = (Math.imul(31, h) + t.charCodeAt(i)) | 0;
        return h;
      });
      f.broker.consumerManager.registerConsumer(group, {
        clientId: 'cid-1',
        remoteAddress: '127.0.0.1:1',
        consumeType: 'CONSUME_PASSIVELY',
        messageModel: 'CLUSTERING',
        consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
        subscriptions: [{ topic, subString, tagsSet, codeSet, subVersion, expressionType, classFilterMode: false }],
      });
    }

    test('the registered subscription filters the pull', async () => {
      const topic = uniqueName('T');
      await f.client.send(topic, 'a', { tags: 'TagA' });
      await f.client.send(topic, 'b', { tags: 'TagB' });
      const group = uniqueName('g');
      register(group, topic, 'TagB', 100);
      const r = await f.client.pull({ group, topic, useSubscriptionFlag: false, subVersion: 100 });
      expect(r.code).toBe(ResponseCode.SUCCESS);
      expect(decodeMessages(r.body).map((m) => m.body?.toString())).toEqual(['b']);
    });

    test('SUBSCRIPTION_NOT_EXIST when the group does not subscribe the topic', async () => {
      const topic = uniqueName('T');
      await sendN(topic, 1);
      const group = uniqueName('g');
      register(group, uniqueName('Other'), '*', 100);
      const r = await f.client.pull({ group, topic, useSubscriptionFlag: false, subVersion: 100 });
      expect(r.code).toBe(ResponseCode.SUBSCRIPTION_NOT_EXIST);
      expect(r.remark).toBe(`the consumer's subscription not exist${FAQ_SUFFIX}`);
    });

    test('SUBSCRIPTION_NOT_LATEST when the pull carries a newer subVersion than the broker knows', async () => {
      const topic = uniqueName('T');
      await sendN(topic, 1);
      const group = uniqueName('g');
      register(group, topic, '*', 100);
      const r = await f.client.pull({ group, topic, useSubscriptionFlag: false, subVersion: 200 });
      expect(r.code).toBe(ResponseCode.SUBSCRIPTION_NOT_LATEST);
      expect(r.remark).toBe("the consumer's subscription not latest");
    });

    test('FILTER_DATA_NOT_EXIST when the registered SQL92 expression did not compile', async () => {
      const topic = uniqueName('T');
      await sendN(topic, 1);
      const group = uniqueName('g');
      register(group, topic, 'a >', 100, 'SQL92');
      const r = await f.client.pull({ group, topic, useSubscriptionFlag: false, subVersion: 100 });
      expect(r.code).toBe(ResponseCode.FILTER_DATA_NOT_EXIST);
    });

    test('a registered SQL92 subscription is evaluated on the broker', async () => {
      const topic = uniqueName('T');
      await sendN(topic, 4, { props: (i) => ({ n: String(i) }) });
      const group = uniqueName('g');
      register(group, topic, 'n BETWEEN 1 AND 2', 100, 'SQL92');
      const r = await f.client.pull({ group, topic, useSubscriptionFlag: false, subVersion: 100 });
      expect(decodeMessages(r.body).map((m) => m.body?.toString())).toEqual(['m1', 'm2']);
    });
  });

  test('LITE_PULL_MESSAGE (361) is served like PULL_MESSAGE', async () => {
    const topic = uniqueName('T');
    await sendN(topic, 2);
    const r = await f.client.pull({ group: uniqueName('g'), topic, code: 'LITE_PULL_MESSAGE' });
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(decodeMessages(r.body)).toHaveLength(2);
  });
});

describe('broker-level pull checks', () => {
  test('NO_PERMISSION when the broker is not readable (forbiddenType 1)', async () => {
    const g = await startBroker({ brokerPermission: 2 });
    try {
      const topic = uniqueName('T');
      expect((await g.client.send(topic, 'x')).code).toBe(ResponseCode.SUCCESS);
      const r = await g.client.pull({ group: uniqueName('g'), topic });
      expect(r.code).toBe(ResponseCode.NO_PERMISSION);
      expect(r.remark).toBe('the broker[127.0.0.1] pulling message is forbidden');
      expect(r.header.forbiddenType).toBe(1);
    } finally {
      await g.close();
    }
  });

  test('SUBSCRIPTION_GROUP_NOT_EXIST when groups are not auto-created; SYSTEM_ERROR for SQL92 when property filtering is off', async () => {
    const g = await startBroker({ autoCreateSubscriptionGroup: false, enablePropertyFilter: false });
    try {
      const topic = uniqueName('T');
      await g.client.send(topic, 'x');
      const group = uniqueName('g');
      const r = await g.client.pull({ group, topic });
      expect(r.code).toBe(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST);
      expect(r.remark).toBe(`subscription group [${group}] does not exist, ${FAQ_SUFFIX}`);
      const body = Buffer.from(JSON.stringify({ groupName: group }));
      await g.client.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, body);
      const sql = await g.client.pull({ group, topic, subscription: 'a = 1', expressionType: 'SQL92' });
      expect(sql.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect(sql.remark).toBe('The broker does not support consumer to filter message by SQL92');
    } finally {
      await g.close();
    }
  });

  test('OFFSET_TOO_SMALL after retention: PULL_OFFSET_MOVED to the new min offset', async () => {
    const g = await startBroker({ store: { mappedFileSizeCommitLog: 4096, fileReservedTimeHours: 0 } });
    try {
      const topic = uniqueName('T');
      const body = Buffer.alloc(600, 7);
      for (let i = 0; i < 30; i++) expect((await g.client.send(topic, body)).code).toBe(ResponseCode.SUCCESS);
      const deleted = await g.broker.store.deleteExpiredFiles(Date.now() + 60_000);
      expect(deleted).toBeGreaterThan(0);
      const min = await g.client.call('GET_MIN_OFFSET', { topic, queueId: 0 });
      const minOffset = min.header.offset as number;
      expect(minOffset).toBeGreaterThan(0);
      const r = await g.client.pull({ group: uniqueName('g'), topic, offset: 0 });
      expect(r.code).toBe(ResponseCode.PULL_OFFSET_MOVED);
      expect(r.remark).toBe('OFFSET_TOO_SMALL');
      expect(r.header.nextBeginOffset).toBe(minOffset);
      expect(r.header.minOffset).toBe(minOffset);
      const again = await g.client.pull({ group: uniqueName('g'), topic, offset: minOffset });
      expect(again.code).toBe(ResponseCode.SUCCESS);
      expect(decodeMessages(again.body)[0]?.queueOffset).toBe(minOffset);
    } finally {
      await g.close();
    }
  });
});
