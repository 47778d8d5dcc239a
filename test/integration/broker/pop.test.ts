/**
 * The broker's POP commands spoken directly: long polling, bad input answered with RocketMQ's codes and a
 * remark naming the problem, batch acks (the Java client's BatchAck with its BitSet), QUERY_ASSIGNMENT
 * and SET_MESSAGE_REQUEST_MODE persisted over a restart.
 */
import { decodeMessages } from '../../../src/common/codec/index.js';
import { Broker } from '../../../src/broker/index.js';
import { ResponseCode, bitSetOf, parseExtraInfo, type ExtraInfo } from '../../../src/protocol/index.js';
import { rmSync } from 'node:fs';
import { startBroker, tempStorePath, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { TestBrokerClient } from '../../support/broker-client.js';
import { uniq } from '../client/push-consumer-support.js';
import { Producer } from '../../../src/client/producer/producer.js';

let fx: BrokerFixture;
beforeAll(async () => {
  fx = await startBroker({ autoCreateSubscriptionGroup: false, popReviveIntervalMs: 50 });
});
afterAll(async () => {
  await fx.close();
});

async function createGroup(c: TestBrokerClient, group: string): Promise<void> {
  const a = await c.call('UPDATE_AND_CREATE_SUBSCRIPTIONGROUP', {}, Buffer.from(JSON.stringify({ groupName: group })));
  expect(a.code).toBe(0);
}

async function send(address: string, topic: string, n: number): Promise<void> {
  const p = new Producer({ endpoints: address, defaultTopicQueueNums: 2 });
  await p.start();
  for (let i = 0; i < n; i++) await p.send({ topic, body: Buffer.from(`b${i}`), tags: i % 2 ? 'odd' : 'even' });
  await p.shutdown();
}

const popHeader = (group: string, topic: string, extra: Record<string, unknown> = {}) => ({
  consumerGroup: group,
  topic,
  queueId: -1,
  maxMsgNums: 32,
  invisibleTime: 60_000,
  pollTime: 0,
  bornTime: Date.now(),
  initMode: 0,
  ...extra,
});

async function popAll(c: TestBrokerClient, group: string, topic: string, extra: Record<string, unknown> = {}) {
  const a = await c.call('POP_MESSAGE', popHeader(group, topic, extra));
  const msgs = a.code === 0 ? decodeMessages(a.body) : [];
  return { answer: a, msgs, handles: msgs.map((m) => m.properties!.POP_CK!) };
}

const ackHeader = (group: string, topic: string, handle: string) => {
  const h = parseExtraInfo(handle) as ExtraInfo;
  return { consumerGroup: group, topic, queueId: h.queueId, offset: h.queueOffset, extraInfo: handle };
};

describe('POP_MESSAGE', () => {
  it('filters by tag and by SQL92, and holds a pop until a message arrives', async () => {
    const topic = uniq('PopB');
    const g1 = uniq('G');
    const g2 = uniq('G');
    await Promise.all([createGroup(fx.client, g1), createGroup(fx.client, g2)]);
    await send(fx.broker.address, topic, 4);
    const byTag = await popAll(fx.client, g1, topic, { expType: 'TAG', exp: 'odd' });
    expect(byTag.msgs.map((m) => m.properties!.TAGS)).toEqual(['odd', 'odd']);
    const bySql = await popAll(fx.client, g2, topic, { expType: 'SQL92', exp: "TAGS = 'even'" });
    expect(bySql.msgs.map((m) => m.properties!.TAGS)).toEqual(['even', 'even']);

    const held = fx.client.call('POP_MESSAGE', popHeader(g1, topic, { pollTime: 10_000, exp: 'odd', expType: 'TAG' }));
    let answered = false;
    void held.then(() => (answered = true));
    await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    await send(fx.broker.address, topic, 2);
    const a = await held;
    expect(a.code).toBe(0);
    expect(decodeMessages(a.body).map((m) => m.body?.toString())).toEqual(['b1']);
  }, 20_000);

  it('answers POLLING_TIMEOUT when nothing arrives within pollTime', async () => {
    const topic = uniq('PopB');
    const g = uniq('G');
    await createGroup(fx.client, g);
    await send(fx.broker.address, topic, 1);
    await popAll(fx.client, g, topic);
    const a = await fx.client.call('POP_MESSAGE', popHeader(g, topic, { pollTime: 200 }));
    expect(a.code).toBe(ResponseCode.POLLING_TIMEOUT);
  });

  it.each([
    [{ maxMsgNums: 0 }, ResponseCode.INVALID_PARAMETER, /maxMsgNums 0/],
    [{ maxMsgNums: 33 }, ResponseCode.INVALID_PARAMETER, /greater than 32/],
    [{ invisibleTime: 0 }, ResponseCode.INVALID_PARAMETER, /invisibleTime 0/],
    [{ invisibleTime: -1 }, ResponseCode.INVALID_PARAMETER, /invisibleTime -1/],
    [{ invisibleTime: 13 * 3600 * 1000 }, ResponseCode.INVALID_PARAMETER, /out of range/],
    [{ order: true }, ResponseCode.INVALID_PARAMETER, /orderly POP/],
    [{ topic: 'NoSuchTopic' }, ResponseCode.TOPIC_NOT_EXIST, /NoSuchTopic/],
    [{ consumerGroup: 'NoSuchGroup' }, ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, /NoSuchGroup/],
    [{ queueId: 99 }, ResponseCode.INVALID_PARAMETER, /queueId\[99\]/],
    [{ expType: 'SQL92', exp: 'a >' }, ResponseCode.SUBSCRIPTION_PARSE_FAILED, /subscription/],
  ])('refuses %o with code %d', async (extra, code, remark) => {
    const topic = uniq('PopB');
    const g = uniq('G');
    await createGroup(fx.client, g);
    await send(fx.broker.address, topic, 1);
    const a = await fx.client.call('POP_MESSAGE', popHeader(g, topic, extra));
    expect(a.code).toBe(code);
    expect(a.remark).toMatch(remark);
  });
});

describe('ACK_MESSAGE and CHANGE_MESSAGE_INVISIBLETIME', () => {
  it('refuse malformed, foreign, mismatched, stale and expired receipt handles, and never ack another message', async () => {
    const topic = uniq('PopB');
    const g = uniq('G');
    const other = uniq('G');
    await Promise.all([createGroup(fx.client, g), createGroup(fx.client, other)]);
    await send(fx.broker.address, topic, 2);
    const { handles } = await popAll(fx.client, g, topic, { invisibleTime: 400 });
    expect(handles).toHaveLength(2);
    const [h0, h1] = handles as [string, string];

    const bad = await fx.client.call('ACK_MESSAGE', { ...ackHeader(g, topic, h0), extraInfo: 'garbage' });
    expect([bad.code, bad.remark]).toEqual([
      ResponseCode.INVALID_PARAMETER,
      expect.stringMatching(/malformed receipt handle/),
    ]);
    const foreign = await fx.client.call('ACK_MESSAGE', ackHeader(other, topic, h0));
    expect([foreign.code, foreign.remark]).toEqual([
      ResponseCode.NO_MESSAGE,
      expect.stringMatching(/another consumer group/),
    ]);
    // The handle of message 0 with the offset of message 1: refused, message 1 stays in flight.
    const mixed = await fx.client.call('ACK_MESSAGE', {
      ...ackHeader(g, topic, h0),
      ...ackHeader(g, topic, h1),
      extraInfo: h0,
    });
    expect(mixed.code).toBe(ResponseCode.INVALID_PARAMETER);
    const noTopic = await fx.client.call('ACK_MESSAGE', ackHeader(g, 'NoSuchTopic', h0));
    expect(noTopic.code).toBe(ResponseCode.TOPIC_NOT_EXIST);
    const zero = await fx.client.call('CHANGE_MESSAGE_INVISIBLETIME', { ...ackHeader(g, topic, h0), invisibleTime: 0 });
    expect(zero.code).toBe(ResponseCode.INVALID_PARAMETER);

    const changed = await fx.client.call('CHANGE_MESSAGE_INVISIBLETIME', {
      ...ackHeader(g, topic, h0),
      invisibleTime: 30_000,
    });
    expect(changed.code).toBe(0);
    const stale = await fx.client.call('ACK_MESSAGE', ackHeader(g, topic, h0));
    expect([stale.code, stale.remark]).toEqual([ResponseCode.NO_MESSAGE, expect.stringMatching(/stale/)]);

    // Message 1 expires and is revived into the group's POP retry topic; its handle is refused from then on.
    await waitFor(() => fx.broker.store.getMaxOffsetInQueue(`%RETRY%${g}_${topic}`, 0) === 1);
    const expired = await fx.client.call('ACK_MESSAGE', ackHeader(g, topic, h1));
    expect([expired.code, expired.remark]).toEqual([ResponseCode.NO_MESSAGE, expect.stringMatching(/revived/)]);
  }, 20_000);

  it('BATCH_ACK_MESSAGE acks the offsets of the BitSet, as RocketMQ 5 clients send it', async () => {
    const topic = uniq('PopB');
    const g = uniq('G');
    await createGroup(fx.client, g);
    await send(fx.broker.address, topic, 6);
    const { handles } = await popAll(fx.client, g, topic, { queueId: 0 });
    const infos = handles.map((h) => parseExtraInfo(h) as ExtraInfo);
    const first = infos[0]!;
    const acks = [
      {
        c: g,
        t: topic,
        r: '0',
        so: first.ckOffset,
        q: 0,
        rq: 0,
        pt: first.popTime,
        it: first.invisibleTime,
        b: bitSetOf(infos.map((i) => i.queueOffset - first.ckOffset)),
      },
    ];
    const a = await fx.client.call(
      'BATCH_ACK_MESSAGE',
      {},
      Buffer.from(JSON.stringify({ brokerName: fx.broker.options.brokerName, acks })),
    );
    expect([a.code, a.remark]).toEqual([0, undefined]);
    const again = await fx.client.call('ACK_MESSAGE', ackHeader(g, topic, handles[0]!));
    expect(again.code).toBe(ResponseCode.NO_MESSAGE);
  });
});

describe('QUERY_ASSIGNMENT and SET_MESSAGE_REQUEST_MODE', () => {
  it('answers every queue (-1) to each member in POP mode, and keeps the mode over a restart', async () => {
    const storePath = tempStorePath();
    let b = await Broker.start({ port: 0, storePath });
    let c = new TestBrokerClient(b.address);
    try {
      const topic = uniq('PopB');
      const g = uniq('G');
      await send(b.address, topic, 1);
      await createGroup(c, g);
      const query = async () => {
        const a = await c.call(
          'QUERY_ASSIGNMENT',
          {},
          Buffer.from(JSON.stringify({ topic, consumerGroup: g, clientId: 'c1', messageModel: 'CLUSTERING' })),
        );
        return JSON.parse(a.body.toString()) as {
          messageQueueAssignments: Array<{ mode: string; messageQueue: { queueId: number } }>;
        };
      };
      expect((await query()).messageQueueAssignments.map((x) => x.mode)).toEqual(['PULL', 'PULL']);
      const set = await c.call(
        'SET_MESSAGE_REQUEST_MODE',
        {},
        Buffer.from(JSON.stringify({ topic, consumerGroup: g, mode: 'POP' })),
      );
      expect(set.code).toBe(0);
      const retry = await c.call(
        'SET_MESSAGE_REQUEST_MODE',
        {},
        Buffer.from(JSON.stringify({ topic: `%RETRY%${g}`, consumerGroup: g, mode: 'POP' })),
      );
      expect(retry.code).toBe(ResponseCode.NO_PERMISSION);
      await c.close();
      await b.shutdown();
      b = await Broker.start({ port: 0, storePath });
      c = new TestBrokerClient(b.address);
      expect((await query()).messageQueueAssignments).toEqual([
        { messageQueue: { topic, brokerName: b.options.brokerName, queueId: -1 }, mode: 'POP', attachments: {} },
      ]);
    } finally {
      await c.close();
      await b.shutdown();
      rmSync(storePath, { recursive: true, force: true });
    }
  }, 20_000);
});
