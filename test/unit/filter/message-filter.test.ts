// RocketMQ's ExpressionMessageFilter and ExpressionForRetryMessageFilter.
import { encodeMessage } from '../../../src/common/codec/index.js';
import {
  ExpressionForRetryMessageFilter,
  ExpressionMessageFilter,
  buildConsumerFilterData,
  buildSubscriptionData,
  buildSubscriptionDataWithType,
  compileSql92,
  tagsHashCode,
  type ConsumerFilterData,
  type MessageFilter,
} from '../../../src/filter/index.js';

const host = { ip: '127.0.0.1', port: 10911 };
const record = (properties: Record<string, string> | null): Buffer =>
  encodeMessage({ topic: 'T', body: Buffer.from('x'), bornHost: host, storeHost: host, properties });

describe('ExpressionMessageFilter, TAG subscriptions', () => {
  const sub = buildSubscriptionData('T', 'TagA || TagB');
  const f: MessageFilter = new ExpressionMessageFilter(sub);

  it('RocketMQ: matches on the consume queue by tags hash code', () => {
    expect(f.isMatchedByConsumeQueue(tagsHashCode('TagA'))).toBe(true);
    expect(f.isMatchedByConsumeQueue(tagsHashCode('TagC'))).toBe(false);
    expect(f.isMatchedByConsumeQueue(0)).toBe(false);
  });
  it('RocketMQ: an unknown tags code (null) matches', () => {
    expect(f.isMatchedByConsumeQueue(null)).toBe(true);
  });
  it('RocketMQ: compares the low 32 bits of the tags code as an int', () => {
    expect(f.isMatchedByConsumeQueue(tagsHashCode('TagA') + 2 ** 32)).toBe(true);
    expect(f.isMatchedByConsumeQueue(tagsHashCode('TagA') - 2 ** 40)).toBe(true);
  });
  it('RocketMQ: tags are checked on the consume queue only; the commit-log stage passes everything', () => {
    expect(f.isMatchedByCommitLog(null, { TAGS: 'TagC' })).toBe(true);
    expect(f.isMatchedByCommitLog(record({ TAGS: 'TagC' }), null)).toBe(true);
  });
  it('RocketMQ: * matches everything', () => {
    const all = new ExpressionMessageFilter(buildSubscriptionData('T', '*'));
    expect([0, 42, -1, 123456].every((c) => all.isMatchedByConsumeQueue(c))).toBe(true);
  });
  it('a null subscription and class filter mode match everything', () => {
    const none = new ExpressionMessageFilter(null);
    expect(none.isMatchedByConsumeQueue(5)).toBe(true);
    expect(none.isMatchedByCommitLog(null, null)).toBe(true);
    const cls = new ExpressionMessageFilter({ ...sub, classFilterMode: true });
    expect(cls.isMatchedByConsumeQueue(5)).toBe(true);
  });
});

describe('ExpressionMessageFilter, SQL92 subscriptions', () => {
  const expr = "a > 5 AND TAGS = 'vip'";
  const sub = buildSubscriptionDataWithType('T', expr, 'SQL92');
  const f = new ExpressionMessageFilter(sub, compileSql92(expr));

  it('RocketMQ: passes every message at the consume-queue stage (no bloom filter)', () => {
    expect(f.isMatchedByConsumeQueue(12345)).toBe(true);
    expect(f.isMatchedByConsumeQueue(null)).toBe(true);
  });
  it('RocketMQ: evaluates the properties map at the commit-log stage (long-poll path)', () => {
    expect(f.isMatchedByCommitLog(null, { a: '6', TAGS: 'vip' })).toBe(true);
    expect(f.isMatchedByCommitLog(null, { a: '5', TAGS: 'vip' })).toBe(false);
  });
  it('RocketMQ: decodes the properties from the record when no map is given', () => {
    expect(f.isMatchedByCommitLog(record({ a: '6', TAGS: 'vip' }), null)).toBe(true);
    expect(f.isMatchedByCommitLog(record({ a: '6', TAGS: 'std' }), null)).toBe(false);
    expect(f.isMatchedByCommitLog(record(null), null)).toBe(false);
  });
  it('the properties map wins when both are given', () => {
    expect(f.isMatchedByCommitLog(record({ a: '1' }), { a: '6', TAGS: 'vip' })).toBe(true);
  });
  it('RocketMQ: null, false and evaluation errors all mean not matched', () => {
    expect(f.isMatchedByCommitLog(null, {})).toBe(false); // null
    expect(f.isMatchedByCommitLog(null, { a: 'x', TAGS: 'vip' })).toBe(false); // eval error
    expect(f.isMatchedByCommitLog(null, null)).toBe(false);
  });
  it('a record that does not decode has no properties', () => {
    expect(f.isMatchedByCommitLog(Buffer.from([1, 2, 3]), null)).toBe(false);
  });
  it('RocketMQ: no filter data (or no compiled expression) matches everything', () => {
    expect(new ExpressionMessageFilter(sub).isMatchedByCommitLog(null, {})).toBe(true);
    const empty: ConsumerFilterData = { expression: expr, expressionType: 'SQL92', compiled: null };
    expect(new ExpressionMessageFilter(sub, empty).isMatchedByCommitLog(null, {})).toBe(true);
  });
  it('accepts ConsumerFilterData built like ConsumerFilterManager.build', () => {
    const data = buildConsumerFilterData('T', 'G', expr, 'SQL92', 7);
    expect(data).toMatchObject({
      topic: 'T',
      consumerGroup: 'G',
      expression: expr,
      expressionType: 'SQL92',
      clientVersion: 7,
    });
    expect(new ExpressionMessageFilter(sub, data).isMatchedByCommitLog(null, { a: '9', TAGS: 'vip' })).toBe(true);
  });
  it('RocketMQ: ConsumerFilterManager.build gives null for tags, bad expressions and unknown types', () => {
    expect(buildConsumerFilterData('T', 'G', 'a', 'TAG', 1)).toBeNull();
    expect(buildConsumerFilterData('T', 'G', 'a >', 'SQL92', 1)).toBeNull();
    expect(buildConsumerFilterData('T', 'G', 'a > 1', 'XPATH', 1)).toBeNull();
  });
});

describe('ExpressionForRetryMessageFilter', () => {
  const realExpr = "color = 'red'";
  const registered = new Map<string, ConsumerFilterData | null>([
    ['T1/G', buildConsumerFilterData('T1', 'G', realExpr, 'SQL92', 1)],
  ]);
  const lookup = (topic: string | undefined, group: string) => registered.get(`${topic ?? ''}/${group}`);
  const retrySub = buildSubscriptionDataWithType('%RETRY%G', 'TRUE', 'SQL92');
  const f = new ExpressionForRetryMessageFilter(retrySub, compileSql92('TRUE'), lookup);

  it('RocketMQ: SQL filters follow messages into the retry topic (filter of RETRY_TOPIC + group)', () => {
    expect(f.isMatchedByCommitLog(null, { RETRY_TOPIC: 'T1', color: 'red' })).toBe(true);
    expect(f.isMatchedByCommitLog(null, { RETRY_TOPIC: 'T1', color: 'blue' })).toBe(false);
    expect(f.isMatchedByCommitLog(record({ RETRY_TOPIC: 'T1', color: 'blue' }), null)).toBe(false);
    expect(f.isMatchedByCommitLog(record({ RETRY_TOPIC: 'T1', color: 'red' }), null)).toBe(true);
  });
  it('RocketMQ: no filter registered for the real topic means a match', () => {
    expect(f.isMatchedByCommitLog(null, { RETRY_TOPIC: 'T2', color: 'blue' })).toBe(true);
    expect(f.isMatchedByCommitLog(null, { color: 'blue' })).toBe(true);
  });
  it('the lookup may return a compiled expression', () => {
    const g = new ExpressionForRetryMessageFilter(retrySub, null, () => compileSql92('n > 1'));
    expect(g.isMatchedByCommitLog(null, { n: '2' })).toBe(true);
    expect(g.isMatchedByCommitLog(null, { n: '0' })).toBe(false);
  });
  it('RocketMQ: a TAG subscription passes the commit-log stage even on a retry topic', () => {
    const tagRetry = new ExpressionForRetryMessageFilter(buildSubscriptionData('%RETRY%G', '*'), null, lookup);
    expect(tagRetry.isMatchedByCommitLog(null, { RETRY_TOPIC: 'T1', color: 'blue' })).toBe(true);
  });
  it('a non-retry topic behaves as ExpressionMessageFilter', () => {
    const normal = new ExpressionForRetryMessageFilter(
      buildSubscriptionDataWithType('T1', realExpr, 'SQL92'),
      compileSql92(realExpr),
      lookup,
    );
    expect(normal.isMatchedByCommitLog(null, { color: 'red' })).toBe(true);
    expect(normal.isMatchedByCommitLog(null, { color: 'blue' })).toBe(false);
    expect(normal.isMatchedByConsumeQueue(1)).toBe(true);
  });
});
