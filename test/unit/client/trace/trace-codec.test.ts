/**
 * The trace record format against RocketMQ 4.9.8's own TraceDataEncoder: every expected string below was
 * printed by RocketMQ's class (test/unit/client/trace/java/EncodeTrace.java, compiled against the kit's
 * classes with `javac -cp "$(/work/shared/rocketmq-java/bin/classpath)"`), with the separators char 1 and
 * char 2 written as \u0001 and \u0002.
 */
import {
  ConsumeReturnType,
  TraceMessageType,
  decodeTraceData,
  encodeTraceContext,
  traceBean,
  type TraceContext,
} from '../../../../src/client/trace/trace-codec.js';

function ctx(fields: Partial<TraceContext> & Pick<TraceContext, 'traceType'>): TraceContext {
  return {
    timeStamp: 0,
    regionId: '',
    groupName: '',
    costTime: 0,
    success: true,
    requestId: '',
    contextCode: 0,
    traceBeans: [],
    ...fields,
  };
}

const pub = ctx({
  traceType: 'Pub',
  timeStamp: 1700000000123,
  regionId: 'DefaultRegion',
  groupName: 'PG',
  costTime: 7,
  traceBeans: [
    traceBean({
      topic: 'T',
      msgId: '7F000001000018B4AAC2000000000000',
      tags: 'TagA',
      keys: 'k1 k2',
      storeHost: '127.0.0.1:10911',
      bodyLength: 5,
      msgType: TraceMessageType.Normal_Msg,
      offsetMsgId: '7F00000100002A9F0000000000000000',
    }),
  ],
});
const s1 = traceBean({ msgId: 'M1', retryTimes: 0, keys: 'k1' });
const s2 = traceBean({ msgId: 'M2', retryTimes: 2, keys: null });
const subAfter = ctx({
  traceType: 'SubAfter',
  timeStamp: 1700000000200,
  regionId: null,
  groupName: 'CG',
  requestId: 'REQ1',
  costTime: 12,
  success: false,
  contextCode: ConsumeReturnType.FAILED,
  traceBeans: [s1, s2],
});

test('Pub: RocketMQ’s fields, separators and keys (message id and each message key)', () => {
  const t = encodeTraceContext(pub);
  expect(t.data).toBe(
    'Pub\u00011700000000123\u0001DefaultRegion\u0001PG\u0001T\u00017F000001000018B4AAC2000000000000\u0001TagA\u0001k1 k2\u0001127.0.0.1:10911\u00015\u00017\u00010\u00017F00000100002A9F0000000000000000\u0001true\u0002',
  );
  expect([...t.keys].sort()).toEqual(['7F000001000018B4AAC2000000000000', 'k1', 'k2']);
});

test('Pub of a message without tags or keys writes Java’s null, and a failed delay message', () => {
  const t = encodeTraceContext(
    ctx({
      traceType: 'Pub',
      timeStamp: 1700000000124,
      regionId: 'DefaultRegion',
      groupName: 'PG',
      costTime: 3,
      success: false,
      traceBeans: [
        traceBean({
          topic: 'T',
          msgId: 'M2',
          tags: null,
          keys: null,
          storeHost: '127.0.0.1:10911',
          bodyLength: 0,
          msgType: TraceMessageType.Delay_Msg,
          offsetMsgId: 'O2',
        }),
      ],
    }),
  );
  expect(t.data).toBe(
    'Pub\u00011700000000124\u0001DefaultRegion\u0001PG\u0001T\u0001M2\u0001null\u0001null\u0001127.0.0.1:10911\u00010\u00013\u00013\u0001O2\u0001false\u0002',
  );
  expect(t.keys).toEqual(['M2']);
});

test('SubBefore: one record per message of the batch', () => {
  const t = encodeTraceContext(
    ctx({
      traceType: 'SubBefore',
      timeStamp: 1700000000200,
      regionId: null,
      groupName: 'CG',
      requestId: 'REQ1',
      traceBeans: [s1, s2],
    }),
  );
  expect(t.data).toBe(
    'SubBefore\u00011700000000200\u0001null\u0001CG\u0001REQ1\u0001M1\u00010\u0001k1\u0002SubBefore\u00011700000000200\u0001null\u0001CG\u0001REQ1\u0001M2\u00012\u0001null\u0002',
  );
  expect([...t.keys].sort()).toEqual(['M1', 'M2', 'k1']);
});

test('SubAfter: the LOCAL channel’s form with the context code, time stamp and group', () => {
  expect(encodeTraceContext(subAfter).data).toBe(
    'SubAfter\u0001REQ1\u0001M1\u000112\u0001false\u0001k1\u00014\u00011700000000200\u0001CG\u0002SubAfter\u0001REQ1\u0001M2\u000112\u0001false\u0001null\u00014\u00011700000000200\u0001CG\u0002',
  );
});

test('EndTransaction', () => {
  const t = encodeTraceContext(
    ctx({
      traceType: 'EndTransaction',
      timeStamp: 1700000000300,
      regionId: 'DefaultRegion',
      groupName: 'TPG',
      traceBeans: [
        traceBean({
          topic: 'TT',
          msgId: 'M3',
          tags: 't',
          keys: 'biz',
          storeHost: '127.0.0.1:10911',
          msgType: TraceMessageType.Trans_msg_Commit,
          transactionId: 'M3',
          transactionState: 'COMMIT_MESSAGE',
          fromTransactionCheck: true,
        }),
      ],
    }),
  );
  expect(t.data).toBe(
    'EndTransaction\u00011700000000300\u0001DefaultRegion\u0001TPG\u0001TT\u0001M3\u0001t\u0001biz\u0001127.0.0.1:10911\u00012\u0001M3\u0001COMMIT_MESSAGE\u0001true\u0002',
  );
  expect([...t.keys].sort()).toEqual(['M3', 'biz']);
});

test('decoding a body of several records reads what RocketMQ’s decoder reads', () => {
  // RocketMQ's decoder on this body: Pub 7F00…0000 cost=7 ok=true; SubAfter M1 and M2 cost=12 ok=false.
  const body = encodeTraceContext(pub).data + encodeTraceContext(subAfter).data;
  const decoded = decodeTraceData(body);
  expect(
    decoded.map((c) => [c.traceType, c.traceBeans[0]?.msgId, c.costTime, c.success, c.timeStamp, c.groupName]),
  ).toEqual([
    ['Pub', '7F000001000018B4AAC2000000000000', 7, true, 1700000000123, 'PG'],
    ['SubAfter', 'M1', 12, false, 1700000000200, 'CG'],
    ['SubAfter', 'M2', 12, false, 1700000000200, 'CG'],
  ]);
  expect(decoded[0]?.traceBeans[0]).toMatchObject({
    tags: 'TagA',
    keys: 'k1 k2',
    offsetMsgId: pub.traceBeans[0]?.offsetMsgId,
  });
  expect(decoded[1]?.contextCode).toBe(ConsumeReturnType.FAILED);
});

test('a malformed or cut-short record is skipped, the others are kept', () => {
  const body =
    'Pub\u0001notanumber\u0002' + 'SubBefore\u00011\u0002' + 'Bogus\u0001x\u0002' + encodeTraceContext(pub).data;
  expect(decodeTraceData(body).map((c) => c.traceType)).toEqual(['Pub']);
  expect(decodeTraceData('')).toEqual([]);
});

// RocketMQ 5.3.3's additions, printed by test/unit/client/trace/java/EncodeTrace5.java compiled against the
// 5.3.3 kit (`javac -cp "$(/work/shared/rocketmq5-java/bin/classpath)"`).
test('RocketMQ 5.3.3: the Recall record and the Order_Msg message type are read as its decoder reads them', () => {
  const recall = 'Recall\u00011700000000400\u0001DefaultRegion\u0001PG\u0001T\u0001M4\u0001true\u0002';
  const pubOrder =
    'Pub\u00011700000000500\u0001DefaultRegion\u0001PG\u0001T\u0001M5\u0001t\u0001k\u0001127.0.0.1:10911\u00011\u00012\u00014\u0001O5\u0001true\u0002';
  const [r, p] = decodeTraceData(recall + pubOrder);
  expect(r).toMatchObject({
    traceType: 'Recall',
    timeStamp: 1700000000400,
    regionId: 'DefaultRegion',
    groupName: 'PG',
  });
  expect(r?.success).toBe(true);
  expect(r?.traceBeans[0]).toMatchObject({ topic: 'T', msgId: 'M4' });
  expect(p?.traceBeans[0]).toMatchObject({ msgId: 'M5', msgType: TraceMessageType.Order_Msg, offsetMsgId: 'O5' });
  expect(decodeTraceData(recall.replace('true', 'false'))[0]?.success).toBe(false);
  // What RocketMQ 5.3.3's encoder writes for the same records, keys included.
  expect(encodeTraceContext(r!)).toEqual({ data: recall, keys: ['M4'] });
  expect(encodeTraceContext(p!).data).toBe(pubOrder);
});
