/**
 * The trace hooks build RocketMQ's records from what the message path hands them, skip what RocketMQ
 * skips, and the consume core records a SubBefore and a SubAfter around every listener call.
 */
import { AsyncTraceDispatcher } from '../../../../src/client/trace/async-trace-dispatcher.js';
import { ConsumeOutcomes, MsgTrace } from '../../../../src/client/trace/trace-hooks.js';
import { decodeTraceData, type TraceContext } from '../../../../src/client/trace/trace-codec.js';
import { runListener, type ListenerRules } from '../../../../src/client/consumer/push/consume-core.js';
import type { MessageExt } from '../../../../src/common/message.js';
import { ManualClock } from '../../../support/manual-clock.js';

const silent = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

function setup(): { trace: MsgTrace; records: TraceContext[]; clock: ManualClock } {
  const clock = new ManualClock();
  const records: TraceContext[] = [];
  const dispatcher = new AsyncTraceDispatcher({
    traceTopic: 'RMQ_SYS_TRACE_TOPIC',
    send: (_t, body) => {
      records.push(...decodeTraceData(body.toString('utf8')));
      return Promise.resolve();
    },
    logger: silent,
    clock,
  });
  return { trace: new MsgTrace(dispatcher, 'CG', clock, silent), records, clock };
}

function msg(id: string, props: Record<string, string> = {}): MessageExt {
  return {
    msgId: id,
    topic: 'T',
    properties: { KEYS: `key-${id}`, ...props },
    reconsumeTimes: 1,
    storeSize: 99,
  } as unknown as MessageExt;
}

const header = (properties: string) => ({
  producerGroup: 'PG',
  topic: 'T',
  defaultTopic: 'TBW102',
  defaultTopicQueueNums: 4,
  queueId: 0,
  sysFlag: 0,
  bornTimestamp: 1_000_000,
  flag: 0,
  properties,
  reconsumeTimes: 0,
  unitMode: false,
});
const answer = (regionId: string | undefined, traceOn = true) =>
  ({
    sendStatus: 'SEND_OK',
    offsetMsgId: 'OFF',
    queueId: 0,
    queueOffset: 0,
    transactionId: undefined,
    regionId,
    traceOn,
  }) as const;

test('Pub: a delay message’s type, tags and keys; no record without a region, with tracing off, or to the trace topic', async () => {
  const { trace, records, clock } = setup();
  trace.sent(
    '127.0.0.1:10911',
    header('TAGS\u0001A\u0002KEYS\u0001k1 k2\u0002DELAY\u00013\u0002'),
    5,
    'M1',
    answer('DefaultRegion'),
  );
  trace.sent('127.0.0.1:10911', header(''), 5, 'M2', answer(undefined));
  trace.sent('127.0.0.1:10911', header(''), 5, 'M3', answer('DefaultRegion', false));
  trace.sent('b', { ...header(''), topic: 'RMQ_SYS_TRACE_TOPIC' }, 5, 'M4', answer('DefaultRegion'));
  await clock.advanceAsync(1000);
  expect(records).toHaveLength(1);
  expect(records[0]).toMatchObject({ traceType: 'Pub', groupName: 'PG', regionId: 'DefaultRegion', success: true });
  expect(records[0]?.traceBeans[0]).toMatchObject({
    msgId: 'M1',
    tags: 'A',
    keys: 'k1 k2',
    msgType: 3,
    offsetMsgId: 'OFF',
  });
});

const RULES: ListenerRules<'OK' | 'LATER'> = {
  statuses: ['OK', 'LATER'],
  success: 'OK',
  failure: 'LATER',
  what: 'listener',
};
const mq = { topic: 'T', brokerName: 'b', queueId: 0 };

test('the consume core: SubBefore per message, then SubAfter with RocketMQ’s return type', async () => {
  const { trace, records, clock } = setup();
  const log = { logger: silent, consumerGroup: 'CG', trace };
  const msgs = [msg('A'), msg('B'), msg('C', { TRACE_ON: 'false' })];
  runListener(
    () => 'OK',
    msgs,
    {},
    RULES,
    log,
    mq,
    (s) => s,
  );
  runListener(
    () => 'LATER',
    [msg('D')],
    {},
    RULES,
    log,
    mq,
    (s) => s,
  );
  runListener(
    () => {
      throw new Error('boom');
    },
    [msg('E')],
    {},
    RULES,
    log,
    mq,
    (s) => s,
  );
  runListener(
    () => 42,
    [msg('F')],
    {},
    RULES,
    log,
    mq,
    (s) => s,
  );
  await runListener(
    async () => 'OK',
    [msg('G')],
    {},
    RULES,
    log,
    mq,
    (s) => s,
  );
  await clock.advanceAsync(1000);
  const after = (id: string) => records.find((r) => r.traceType === 'SubAfter' && r.traceBeans[0]?.msgId === id);
  expect(records.filter((r) => r.traceType === 'SubBefore').map((r) => r.traceBeans[0]?.msgId)).toEqual([
    'A',
    'B',
    'D',
    'E',
    'F',
    'G',
  ]);
  expect(records.find((r) => r.traceType === 'SubBefore')).toMatchObject({
    groupName: 'CG',
    traceBeans: [{ retryTimes: 1, keys: 'key-A' }],
  });
  expect([after('A'), after('D'), after('E'), after('F'), after('G')].map((r) => [r?.success, r?.contextCode])).toEqual(
    [
      [true, 0],
      [false, 4],
      [false, 2],
      [false, 3],
      [true, 0],
    ],
  );
  expect(after('C')).toBeUndefined();
});

test('SimpleConsumer: a receive’s SubBefore, then each message’s SubAfter at ack or change', async () => {
  const { trace, records, clock } = setup();
  const [a, b] = [msg('A'), msg('B')];
  trace.received([a, b]);
  await clock.advanceAsync(40);
  trace.settled(a, ConsumeOutcomes.SUCCESS);
  trace.settled(b, ConsumeOutcomes.FAILED);
  trace.settled(b, ConsumeOutcomes.SUCCESS); // already settled: nothing more
  await clock.advanceAsync(1000);
  expect(records.map((r) => [r.traceType, r.traceBeans[0]?.msgId, r.success])).toEqual([
    ['SubBefore', 'A', true],
    ['SubBefore', 'B', true],
    ['SubAfter', 'A', true],
    ['SubAfter', 'B', false],
  ]);
  expect(records[2]?.costTime).toBe(40);
});
