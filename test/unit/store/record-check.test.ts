import { isUtf8 } from 'node:buffer';
import { encodeStoredMessage, setStoredRecordFields, MessageSysFlag } from '../../../src/common/codec/index.js';
import { cachedRecordProblem, recordProblem, storedRecordProblem } from '../../../src/store/record-check.js';

const topic = 'RecordCheckTopic';
const OFFSET = 4096;

function record(over: { sysFlag?: number; properties?: Record<string, string>; bornTimestamp?: number } = {}): Buffer {
  const b = encodeStoredMessage({
    topic,
    body: Buffer.from('hello record check'),
    queueId: 3,
    bornTimestamp: over.bornTimestamp ?? 1_700_000_000_000,
    bornHost: { ip: '127.0.0.1', port: 5000 },
    storeHost: { ip: '127.0.0.1', port: 10911 },
    flag: 0,
    properties: over.properties ?? { TAGS: 'a', KEYS: 'k1' },
    sysFlag: over.sysFlag ?? 0,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  });
  setStoredRecordFields(b, 0, { queueOffset: 7, commitLogOffset: OFFSET, storeTimestamp: 1_700_000_000_001 });
  return b;
}
const expected = { topic, queueId: 3, queueOffset: 7 };

describe('record checks', () => {
  test('a good record passes every check', () => {
    const b = record();
    expect(recordProblem(b, OFFSET, true, isUtf8, expected)).toBeNull();
    expect(cachedRecordProblem(b, OFFSET, expected)).toBeNull();
    expect(storedRecordProblem(b, isUtf8)).toBeNull();
  });

  test('a cached record still has to be the record asked for: offset, topic, queue and queue offset', () => {
    const b = record();
    expect(cachedRecordProblem(b, OFFSET + 1, expected)).toMatch(/says it is at 4096/);
    expect(cachedRecordProblem(b, OFFSET, { ...expected, topic: 'RecordCheckTopiX' })).toMatch(
      /topic "RecordCheckTopic"/,
    );
    expect(cachedRecordProblem(b, OFFSET, { ...expected, topic: 'Other' })).toMatch(/the queue's is Other/);
    expect(cachedRecordProblem(b, OFFSET, { ...expected, queueId: 2 })).toMatch(/queueId 3/);
    expect(cachedRecordProblem(b, OFFSET, { ...expected, queueOffset: 8 })).toMatch(/queue offset 7/);
    expect(cachedRecordProblem(b.subarray(0, b.length - 1), OFFSET, expected)).toMatch(/TOTALSIZE/);
  });

  test('a record the read path would refuse is refused before it is stored', () => {
    // COMPRESSED on a body that is not zlib data: never servable, so never stored.
    expect(storedRecordProblem(record({ sysFlag: MessageSysFlag.COMPRESSED_FLAG }), isUtf8)).toMatch(
      /does not start like compressed data/,
    );
    expect(storedRecordProblem(record({ bornTimestamp: -5 }), isUtf8)).toMatch(/bornTimestamp -5/);
    const b = record();
    b.writeInt32BE(b.readInt32BE(36) | 0x4000_0000, 36);
    expect(storedRecordProblem(b, isUtf8)).toMatch(/undefined bits/);
  });

  test('properties must be name\\u0001value pairs, each ended by \\u0002', () => {
    const sep = (b: Buffer): number => b.indexOf('A\u0001', b.length - 8) + 1;
    // A value may hold \u0001 itself: without the first separator, the pair still has one.
    const b = record({ properties: { A: 'x\u0001y' } });
    b[sep(b)] = 3;
    expect(recordProblem(b, OFFSET, true, isUtf8)).toBeNull();
    const c = record({ properties: { A: 'xy' } });
    c[sep(c)] = 3;
    expect(recordProblem(c, OFFSET, true, isUtf8)).toMatch(/not name\\u0001value pairs/);
    const d = record({ properties: { A: 'xy' } });
    d[d.length - 1] = 3;
    expect(recordProblem(d, OFFSET, true, isUtf8)).toMatch(/not name\\u0001value pairs/);
  });
});
