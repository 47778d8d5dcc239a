import { messageProperties2String } from '../../../../src/common/codec/index.js';
import { buildSubscriptionData, buildSubscriptionDataWithType } from '../../../../src/filter/index.js';
import { PullSysFlag, RequestCode, buildPullSysFlag } from '../../../../src/protocol/index.js';
import { MQClientInstance } from '../../../../src/client/instance/mq-client-instance.js';
import {
  PullAPIWrapper,
  buildPullMessageRequestHeader,
  type PullKernelRequest,
} from '../../../../src/client/consumer/pull-api-wrapper.js';
import { PullStatus, type PullResultExt } from '../../../../src/client/consumer/pull-result.js';
import { resolvePullConsumerOptions } from '../../../../src/client/consumer/pull/pull-consumer-options.js';
import { BrokerResponseError } from '../../../../src/protocol/response-error.js';
import { ManualClock } from '../../../support/manual-clock.js';
import { FakeRemotingClient, json, ok, routeOf } from '../core-fakes.js';
import { storedRecord } from '../helpers.js';

const mq = { topic: 'T', brokerName: 'broker-a', queueId: 1 };

const record = storedRecord;

function ext(body: Buffer | undefined, status: PullResultExt['pullStatus'] = PullStatus.FOUND): PullResultExt {
  return {
    pullStatus: status,
    nextBeginOffset: 3,
    minOffset: 0,
    maxOffset: 10,
    msgFoundList: [],
    suggestWhichBrokerId: 0,
    messageBinary: body,
  };
}

let seq = 0;
function setup(handler: ConstructorParameters<typeof FakeRemotingClient>[0]) {
  const fake = new FakeRemotingClient(handler);
  const clock = new ManualClock();
  const o = resolvePullConsumerOptions({
    endpoints: 'http://ep:1',
    consumerGroup: 'g',
    instanceName: `pw-${++seq}`,
    clock,
  });
  const instance = MQClientInstance.acquire(o, fake);
  return { fake, instance, wrapper: new PullAPIWrapper(instance, 'g') };
}

const routeHandler =
  (
    pull: (
      req: Record<string, unknown>,
      code: number,
    ) => ReturnType<typeof ok> | { code: number; header: Record<string, unknown>; remark?: string },
  ) =>
  (_addr: string, r: { code: number; header: unknown }) => {
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) return ok({}, json(routeOf({ 'broker-a': 'http://a:1' })));
    return pull(r.header as Record<string, unknown>, r.code);
  };

const baseReq = (over: Partial<PullKernelRequest> = {}): PullKernelRequest => ({
  mq,
  subExpression: 'TagA',
  expressionType: 'TAG',
  subVersion: 0,
  offset: 5,
  maxNums: 32,
  sysFlag: buildPullSysFlag(false, true, true, false),
  commitOffset: 0,
  brokerSuspendMaxTimeMillis: 20_000,
  timeoutMillis: 30_000,
  ...over,
});

test('buildPullMessageRequestHeader carries every field of PullMessageRequestHeader', () => {
  expect(buildPullMessageRequestHeader('g', baseReq({ maxSizeInBytes: 1024, commitOffset: 4 }))).toEqual({
    consumerGroup: 'g',
    topic: 'T',
    queueId: 1,
    queueOffset: 5,
    maxMsgNums: 32,
    sysFlag: PullSysFlag.SUSPEND | PullSysFlag.SUBSCRIPTION,
    commitOffset: 4,
    suspendTimeoutMillis: 20_000,
    subscription: 'TagA',
    subVersion: 0,
    expressionType: 'TAG',
    maxMsgBytes: 1024,
    bname: 'broker-a',
  });
});

test('pullKernelImpl: PULL_MESSAGE to the route broker with the RPC deadline; maps the four pull codes', async () => {
  const codes = [0, 19, 20, 21];
  let i = 0;
  const { fake, instance, wrapper } = setup(
    routeHandler(() => ({
      code: codes[i++]!,
      header: { nextBeginOffset: 7, minOffset: 0, maxOffset: 9, suggestWhichBrokerId: 0 },
    })),
  );
  const statuses = [];
  for (let k = 0; k < 4; k++) statuses.push((await wrapper.pullKernelImpl(baseReq())).pullStatus);
  expect(statuses).toEqual([
    PullStatus.FOUND,
    PullStatus.NO_NEW_MSG,
    PullStatus.NO_MATCHED_MSG,
    PullStatus.OFFSET_ILLEGAL,
  ]);
  const pulls = fake.callsOf(RequestCode.PULL_MESSAGE);
  expect(pulls).toHaveLength(4);
  expect(pulls[0]!.addr).toBe('http://a:1');
  expect(pulls[0]!.opts.timeoutMs).toBe(30_000);
  await instance.release();
});

test('pullKernelImpl: the lite flag sends LITE_PULL_MESSAGE (361); other codes throw the mapped error', async () => {
  const { fake, instance, wrapper } = setup(
    routeHandler((_h, code) =>
      code === RequestCode.LITE_PULL_MESSAGE
        ? { code: 19, header: { nextBeginOffset: 5, minOffset: 0, maxOffset: 5, suggestWhichBrokerId: 0 } }
        : { code: 24, header: {}, remark: 'the consumer group info not exist' },
    ),
  );
  const r = await wrapper.pullKernelImpl(baseReq({ sysFlag: buildPullSysFlag(false, true, true, false, true) }));
  expect(r.pullStatus).toBe(PullStatus.NO_NEW_MSG);
  expect(fake.callsOf(RequestCode.LITE_PULL_MESSAGE)).toHaveLength(1);
  const err = await wrapper.pullKernelImpl(baseReq()).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(BrokerResponseError);
  expect(err).toMatchObject({ code: 'ERR_SUBSCRIPTION_NOT_EXIST', responseCode: 24 });
  await instance.release();
});

test('suggestWhichBrokerId is remembered per queue and used for the next pull; a slave pull never commits', async () => {
  const route = routeOf({ 'broker-a': 'http://a:1' });
  route.brokerDatas[0]!.brokerAddrs['1'] = 'http://a-slave:1';
  const { fake, instance, wrapper } = setup((_addr, r) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC
      ? ok({}, json(route))
      : { code: 19, header: { nextBeginOffset: 5, minOffset: 0, maxOffset: 5, suggestWhichBrokerId: 1 } },
  );
  const first = await wrapper.pullKernelImpl(baseReq({ sysFlag: buildPullSysFlag(true, true, true) }));
  wrapper.processPullResult(mq, first, buildSubscriptionData('T', '*'));
  expect(wrapper.recalculatePullFromWhichNode(mq)).toBe(1);
  expect(wrapper.recalculatePullFromWhichNode({ ...mq, queueId: 2 })).toBe(0);
  await wrapper.pullKernelImpl(baseReq({ sysFlag: buildPullSysFlag(true, true, true) }));
  const pulls = fake.callsOf(RequestCode.PULL_MESSAGE);
  expect(pulls[0]!.addr).toBe('http://a:1');
  expect((pulls[0]!.request.header as { sysFlag: number }).sysFlag & PullSysFlag.COMMIT_OFFSET).toBe(1);
  expect(pulls[1]!.addr).toBe('http://a-slave:1');
  // RocketMQ: a pull served by a slave clears FLAG_COMMIT_OFFSET.
  expect((pulls[1]!.request.header as { sysFlag: number }).sysFlag & PullSysFlag.COMMIT_OFFSET).toBe(0);
  await instance.release();
});

describe('processPullResult', () => {
  const { instance, wrapper } = setup(() => ok());
  afterAll(() => instance.release());

  test('decodes, keeps only exact tag matches (untagged dropped), sets MIN/MAX_OFFSET, brokerName and queueId', () => {
    const body = Buffer.concat([
      record(0, { TAGS: 'TagA', UNIQ_KEY: 'U0' }, 'm0'),
      record(1, null, 'm1'),
      record(2, { TAGS: 'TagB' }, 'm2'),
      record(3, { TAGS: 'TagA' }, 'm3'),
    ]);
    const r = wrapper.processPullResult(mq, ext(body), buildSubscriptionData('T', 'TagA'));
    expect(r.pullStatus).toBe(PullStatus.FOUND);
    expect(r.msgFoundList.map((m) => m.body!.toString())).toEqual(['m0', 'm3']);
    for (const m of r.msgFoundList) {
      expect(m.properties?.MIN_OFFSET).toBe('0');
      expect(m.properties?.MAX_OFFSET).toBe('10');
      expect(m.brokerName).toBe('broker-a');
      expect(m.queueId).toBe(1);
    }
    expect(r.msgFoundList[0]!.msgId).toBe('U0');
    expect(r).toMatchObject({ nextBeginOffset: 3, minOffset: 0, maxOffset: 10 });
  });

  test('subscribe-all and SQL keep every message; a message without properties gets a map', () => {
    const body = Buffer.concat([record(0, null), record(1, { TAGS: 'x' })]);
    const all = wrapper.processPullResult(mq, ext(body), buildSubscriptionData('T', '*'));
    expect(all.msgFoundList).toHaveLength(2);
    expect(all.msgFoundList[0]!.properties).toEqual({ MIN_OFFSET: '0', MAX_OFFSET: '10' });
    const sql = wrapper.processPullResult(mq, ext(body), buildSubscriptionDataWithType('T', 'a > 1', 'SQL92'));
    expect(sql.msgFoundList).toHaveLength(2);
  });

  test('a FOUND answer whose every message fails the re-check gives an empty list (not an error)', () => {
    const r = wrapper.processPullResult(mq, ext(record(0, { TAGS: 'TagB' })), buildSubscriptionData('T', 'TagA'));
    expect(r.pullStatus).toBe(PullStatus.FOUND);
    expect(r.msgFoundList).toEqual([]);
  });

  test('TRAN_MSG=true sets transactionId to UNIQ_KEY', () => {
    const r = wrapper.processPullResult(
      mq,
      ext(record(0, { TRAN_MSG: 'true', UNIQ_KEY: 'ABC' })),
      buildSubscriptionData('T', '*'),
    );
    expect(r.msgFoundList[0]!.transactionId).toBe('ABC');
  });

  test('non-FOUND statuses carry no messages', () => {
    const r = wrapper.processPullResult(mq, ext(undefined, PullStatus.NO_NEW_MSG), buildSubscriptionData('T', '*'));
    expect(r).toEqual({ pullStatus: 'NO_NEW_MSG', nextBeginOffset: 3, minOffset: 0, maxOffset: 10, msgFoundList: [] });
  });

  test('properties string helper sanity', () => {
    expect(messageProperties2String({ a: '1' })).toBe('a\u00011\u0002');
  });
});
