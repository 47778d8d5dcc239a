import { encodeMessage } from '../../../../src/common/codec/index.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { ClientRemotingProcessor } from '../../../../src/client/instance/client-remoting-processor.js';
import {
  encodeConsumeMessageDirectlyResult,
  encodeConsumerRunningInfo,
  type ConsumerRunningInfo,
  type ProcessQueueInfo,
} from '../../../../src/client/instance/consumer-running-info.js';
import type { MQConsumerInner } from '../../../../src/client/instance/mq-consumer-inner.js';
import type { MessageQueue } from '../../../../src/common/message.js';
import { parseLenientJson } from '../../../../src/protocol/lenient-json.js';
import { RequestCode } from '../../../../src/protocol/request-code.js';
import { ResponseCode } from '../../../../src/protocol/response-code.js';

const pq = (commitOffset: number): ProcessQueueInfo => ({
  commitOffset,
  cachedMsgMinOffset: 3,
  cachedMsgMaxOffset: 9,
  cachedMsgCount: 7,
  cachedMsgSizeInMiB: 0,
  transactionMsgMinOffset: 0,
  transactionMsgMaxOffset: 0,
  transactionMsgCount: 0,
  locked: false,
  tryUnlockTimes: 0,
  lastLockTimestamp: 0,
  droped: false,
  lastPullTimestamp: 1700000000000,
  lastConsumeTimestamp: 1700000000001,
});

const info: ConsumerRunningInfo = {
  properties: { PROP_CONSUME_TYPE: 'CONSUME_PASSIVELY', consumerGroup: 'g' },
  subscriptionSet: [
    { topic: 'T', subString: 'a || b', tagsSet: ['a', 'b'], codeSet: [97, 98], subVersion: 5, expressionType: 'TAG' },
    { topic: '%RETRY%g', subString: '*', tagsSet: [], codeSet: [], subVersion: 6 },
  ],
  mqTable: [
    [{ topic: 'T', brokerName: 'broker-b', queueId: 0 }, pq(4)],
    [{ topic: 'T', brokerName: 'broker-a', queueId: 1 }, pq(5)],
  ],
};

describe("ConsumerRunningInfo as fastjson writes it (what RocketMQ's admin tool reads)", () => {
  it('sorted keys, the queue table keyed by MessageQueue objects in queue order, subscriptions by topic', () => {
    const text = encodeConsumerRunningInfo(info);
    expect(text.startsWith('{"mqTable":{{"brokerName":"broker-a","queueId":1,"topic":"T"}:{"cachedMsgCount":7,')).toBe(
      true,
    );
    expect(text).toContain(',{"brokerName":"broker-b","queueId":0,"topic":"T"}:{');
    expect(text).toContain('"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","consumerGroup":"g"}');
    expect(text).toContain('"statusTable":{}');
    expect(text).toContain(
      '"subscriptionSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"TAG","subString":"*","subVersion":6,"tagsSet":[],"topic":"%RETRY%g"},',
    );
    expect(text.indexOf('"droped":false')).toBeLessThan(text.indexOf('"lastConsumeTimestamp"'));
  });
  it('ConsumeMessageDirectlyResult with sorted keys, no remark when there is none', () => {
    expect(
      encodeConsumeMessageDirectlyResult({
        order: false,
        autoCommit: true,
        consumeResult: 'CR_SUCCESS',
        spentTimeMills: 3,
      }),
    ).toBe('{"autoCommit":true,"consumeResult":"CR_SUCCESS","order":false,"spentTimeMills":3}');
  });
});

describe('ClientRemotingProcessor (RocketMQ: ClientRemotingProcessor)', () => {
  let rebalances = 0;
  const direct: string[] = [];
  const resets: Array<[string, ReadonlyArray<readonly [MessageQueue, number]>]> = [];
  const inner = {
    runningInfo: () => info,
    resetOffset: async (topic, table) => void resets.push([topic, table]),
    consumeMessageDirectly: async (msg) => {
      direct.push(msg.body!.toString());
      return { order: false, autoCommit: true, consumeResult: 'CR_LATER', spentTimeMills: 1 };
    },
  } as Partial<MQConsumerInner> as MQConsumerInner;
  const p = new ClientRemotingProcessor({
    selectConsumer: (g) => (g === 'g' ? inner : undefined),
    rebalanceImmediately: () => void rebalances++,
    logger: silentLogger,
  });

  it('NOTIFY_CONSUMER_IDS_CHANGED: rebalance at once, no answer (oneway)', async () => {
    const r = await p.processRequest(
      { code: RequestCode.NOTIFY_CONSUMER_IDS_CHANGED, header: { consumerGroup: 'g' } },
      '127.0.0.1:10911',
    );
    expect(r).toBeUndefined();
    expect(rebalances).toBe(1);
  });
  it('GET_CONSUMER_RUNNING_INFO: the JSON for a known group, SYSTEM_ERROR naming an unknown one', async () => {
    const ok = await p.processRequest(
      {
        code: RequestCode.GET_CONSUMER_RUNNING_INFO,
        header: { consumerGroup: 'g', clientId: 'x', jstackEnable: 'false' },
      },
      'b',
    );
    expect(ok?.code).toBe(ResponseCode.SUCCESS);
    expect(ok?.body?.toString()).toBe(encodeConsumerRunningInfo(info));
    const bad = await p.processRequest(
      { code: RequestCode.GET_CONSUMER_RUNNING_INFO, header: { consumerGroup: 'zz' } },
      'b',
    );
    expect(bad).toMatchObject({
      code: ResponseCode.SYSTEM_ERROR,
      remark: 'The Consumer Group <zz> not exist in this consumer',
    });
  });
  it('CONSUME_MESSAGE_DIRECTLY: decodes the message, runs the listener, answers its result', async () => {
    const body = encodeMessage({
      topic: 'T',
      body: Buffer.from('hello'),
      bornHost: { ip: '127.0.0.1', port: 1 },
      storeHost: { ip: '127.0.0.1', port: 10911 },
      bornTimestamp: 1,
      storeTimestamp: 2,
    });
    const r = await p.processRequest(
      { code: RequestCode.CONSUME_MESSAGE_DIRECTLY, header: { consumerGroup: 'g', brokerName: 'broker-a' }, body },
      'b',
    );
    expect(r?.code).toBe(ResponseCode.SUCCESS);
    expect(parseLenientJson(r!.body!.toString())).toMatchObject({ consumeResult: 'CR_LATER' });
    expect(direct).toEqual(['hello']);
    const none = await p.processRequest(
      { code: RequestCode.CONSUME_MESSAGE_DIRECTLY, header: { consumerGroup: 'g' } },
      'b',
    );
    expect(none?.code).toBe(ResponseCode.SYSTEM_ERROR);
  });
  it("RESET_CONSUMER_CLIENT_OFFSET: the body's queues of that topic go to the group's consumer, no answer", async () => {
    const body = Buffer.from(
      '{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:5,{"brokerName":"b","queueId":1,"topic":"U"}:6,' +
        '{"brokerName":"b","queueId":2,"topic":"T"}:"x",{"brokerName":"b","queueId":3,"topic":"T"}:0}}',
    );
    const header = { topic: 'T', group: 'g', timestamp: '0', isForce: 'true' };
    const r = await p.processRequest({ code: RequestCode.RESET_CONSUMER_CLIENT_OFFSET, header, body }, 'b');
    expect(r).toBeUndefined();
    expect(resets).toEqual([
      [
        'T',
        [
          [{ topic: 'T', brokerName: 'b', queueId: 0 }, 5],
          [{ topic: 'T', brokerName: 'b', queueId: 3 }, 0],
        ],
      ],
    ]);
    // A group that is not here, or a consumer without resetOffset: nothing happens.
    const other = { ...header, group: 'zz' };
    expect(await p.processRequest({ code: RequestCode.RESET_CONSUMER_CLIENT_OFFSET, header: other, body }, 'b')).toBe(
      undefined,
    );
    expect(resets).toHaveLength(1);
  });
  it("GET_CONSUMER_STATUS_FROM_CLIENT: the group's consumer's offsets of that topic, MessageQueue-keyed; none for a group not here", async () => {
    const r = await p.processRequest(
      { code: RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, header: { topic: 'T', group: 'g' } },
      'b',
    );
    expect(r?.code).toBe(ResponseCode.SUCCESS);
    expect(r?.body?.toString()).toBe(
      '{"messageQueueTable":{{"brokerName":"broker-b","queueId":0,"topic":"T"}:4,{"brokerName":"broker-a","queueId":1,"topic":"T"}:5}}',
    );
    const otherTopic = await p.processRequest(
      { code: RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, header: { topic: 'U', group: 'g' } },
      'b',
    );
    expect(otherTopic?.body?.toString()).toBe('{"messageQueueTable":{}}');
    const notHere = await p.processRequest(
      { code: RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, header: { topic: 'T', group: 'zz' } },
      'b',
    );
    expect([notHere?.code, notHere?.body?.toString()]).toEqual([ResponseCode.SUCCESS, '{"messageQueueTable":{}}']);
  });
  it('an unknown code is REQUEST_CODE_NOT_SUPPORTED', async () => {
    expect((await p.processRequest({ code: 12345, header: {} }, 'b'))?.code).toBe(
      ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
    );
  });
});
