import { groupNameProblem, isValidTopicName, topicNameProblem } from '../../../src/common/names.js';
import { computeDeliverTimestamp, parseDelayLevels } from '../../../src/store/delay-levels.js';
import { fileNameToOffset, offsetToFileName, rollNextFile } from '../../../src/store/layout.js';
import { findOffsetByTime } from '../../../src/store/offset-by-time.js';
import { resolveStoreOptions } from '../../../src/store/options.js';
import { ReadCache } from '../../../src/store/read-cache.js';

describe('names (RocketMQ TopicValidator)', () => {
  test.each(['TopicTest', '%RETRY%group_1', '%DLQ%g', 'a|b', 'A-Z_0-9', 'x'.repeat(127)])('valid topic %s', (t) => {
    expect(topicNameProblem(t)).toBeNull();
  });
  test.each(['', '../x', 'a/b', 'a.b', 'a b', 'x'.repeat(128), 'tab\t', '\u00e9', 'nul\u0000'])(
    'invalid topic %j',
    (t) => {
      expect(isValidTopicName(t)).toBe(false);
    },
  );
  test('groups allow 255 chars', () => {
    expect(groupNameProblem('g'.repeat(255))).toBeNull();
    expect(groupNameProblem('g'.repeat(256))).toMatch(/longer than 255/);
  });
});

describe('delay levels (RocketMQ parseDelayLevel, computeDeliverTimestamp)', () => {
  test('the default 18 levels; level 3 is 10 s', () => {
    const l = parseDelayLevels('1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h');
    expect(l).toHaveLength(18);
    expect(l[2]).toBe(10_000);
    expect(l[17]).toBe(7_200_000);
    expect(parseDelayLevels('1d')).toEqual([86_400_000]);
    expect(() => parseDelayLevels('1s 5x')).toThrow(/5x/);
  });
  test('RocketMQ: the level is clamped to the max; an unknown level gives +1000 ms', () => {
    const l = [1000, 5000];
    expect(computeDeliverTimestamp(l, 2, 100)).toBe(5100);
    expect(computeDeliverTimestamp(l, 9, 100)).toBe(5100);
    expect(computeDeliverTimestamp(l, 0, 100)).toBe(1100);
  });
});

describe('layout', () => {
  test('20-digit file names; rollNextFile', () => {
    expect(offsetToFileName(1024)).toBe('00000000000000001024');
    expect(fileNameToOffset('00000000000000001024')).toBe(1024);
    expect(fileNameToOffset('1024')).toBeNull();
    expect(fileNameToOffset('0000000000000000102x')).toBeNull();
    expect(rollNextFile(1500, 1000)).toBe(2000);
    expect(rollNextFile(2000, 1000)).toBe(3000);
  });
});

describe('options', () => {
  test("defaults are RocketMQ's; a bad option is named", () => {
    const o = resolveStoreOptions({ storePath: '/tmp/x' });
    expect(o).toMatchObject({
      mappedFileSizeCommitLog: 1024 ** 3,
      mappedFileSizeConsumeQueue: 6_000_000,
      flushDiskType: 'ASYNC_FLUSH',
      flushIntervalCommitLogMs: 500,
      fileReservedTimeHours: 72,
      diskMaxUsedSpaceRatio: 75,
      maxMessageSize: 4 * 1024 * 1024,
      maxTransferCountOnMessageInMemory: 32,
      maxFilterMessageCount: 16000,
      storeHost: { ip: '127.0.0.1', port: 10911 },
      maxOpenConsumeQueueFiles: 1024,
    });
    expect(o.delayLevelsMs).toHaveLength(18);
    for (const bad of [0, 3, 1.5, 2_000_000]) {
      expect(() => resolveStoreOptions({ storePath: '/tmp/x', maxOpenConsumeQueueFiles: bad })).toThrow(
        expect.objectContaining({
          code: 'ERR_INVALID_ARGUMENT',
          message: expect.stringMatching(/maxOpenConsumeQueueFiles/),
        }),
      );
    }
    expect(() => resolveStoreOptions({ storePath: '/tmp/x', mappedFileSizeConsumeQueue: 30 })).toThrow(
      /mappedFileSizeConsumeQueue/,
    );
    expect(() => resolveStoreOptions({ storePath: '/tmp/x', messageDelayLevel: '1q' })).toThrow(/messageDelayLevel/);
    expect(() => resolveStoreOptions({ storePath: '' })).toThrow(/storePath/);
    expect(() => resolveStoreOptions({ storePath: '/tmp/x', flushDiskType: 'SOMETIMES' as 'SYNC_FLUSH' })).toThrow(
      /flushDiskType/,
    );
  });
});

describe('offset by time (RocketMQ: ConsumeQueue.getOffsetInQueueByTime)', () => {
  const times = [10, 10, 20, 30, 30, 40];
  const at = (i: number): number => times[i] as number;
  test.each([
    ['LOWER', 5, 0],
    ['LOWER', 10, 0],
    ['LOWER', 15, 2],
    ['LOWER', 30, 3],
    ['LOWER', 41, 6],
    ['UPPER', 5, 0],
    ['UPPER', 10, 1],
    ['UPPER', 30, 4],
    ['UPPER', 35, 4],
    ['UPPER', 99, 5],
  ] as const)('%s %d -> %d', async (b, ts, want) => {
    expect(await findOffsetByTime(0, 6, ts, b, at)).toBe(want);
  });
});

describe('read cache (ring)', () => {
  test('serves copies of recent bytes, forgets overwritten and evicted ones', () => {
    const c = new ReadCache(16);
    c.startAt(100);
    c.add(100, Buffer.from('abcdef'));
    c.add(106, Buffer.from('ghijkl'));
    expect(c.get(102, 6)?.toString()).toBe('cdefgh');
    c.add(120, Buffer.from('0123456789')); // wraps, overwrites
    expect(c.get(100, 4)).toBeUndefined();
    expect(c.get(120, 10)?.toString()).toBe('0123456789');
    expect(c.has(125, 5)).toBe(true);
    c.evictBelow(126);
    expect(c.get(125, 2)).toBeUndefined();
    c.add(130, Buffer.alloc(17));
    expect(c.get(128, 2)).toBeUndefined();
  });
  test('pre-faulting touches only ring bytes ahead of the writer, on the first pass, up to the lead', () => {
    const c = new ReadCache(16);
    c.startAt(100);
    expect(c.untouchedAhead(6)).toBe(6);
    expect(c.prefault(4, 6)).toBe(4);
    expect(c.prefault(4, 6)).toBe(2);
    expect(c.prefault(4, 6)).toBe(0);
    c.add(100, Buffer.from('abcdef'));
    c.add(106, Buffer.from('gh'));
    // 8 bytes cached, 8 untouched left; a lead of 5 from 108 stops at 113.
    expect(c.prefault(100, 5)).toBe(5);
    expect(c.get(100, 8)?.toString()).toBe('abcdefgh');
    // The rest of the first pass, never past it: what is cached is never touched.
    expect(c.prefault(100, 100)).toBe(3);
    expect(c.prefault(100, 100)).toBe(0);
    expect(c.get(100, 8)?.toString()).toBe('abcdefgh');
    c.add(108, Buffer.from('ijklmnopqr')); // wraps over 100..101
    expect(c.get(102, 16)?.toString()).toBe('cdefghijklmnopqr');
    expect(c.untouchedAhead(100)).toBe(0);
  });
  test('pre-faulting with no ring capacity does nothing', () => {
    const c = new ReadCache(0);
    expect(c.untouchedAhead(10)).toBe(0);
    expect(c.prefault(10, 10)).toBe(0);
  });
});
