import {
  computePullFromWhere,
  defaultConsumeTimestamp,
  parseConsumeTimestamp,
  type PullFromWhereContext,
} from '../../../../src/client/consumer/compute-pull-from-where.js';
import { ConsumeFromWhere } from '../../../../src/client/consumer/consumer-constants.js';
import { mqOf } from '../helpers.js';

const TS = '20240102030405';
function ctx(stored: number, cfw: ConsumeFromWhere, calls: string[]): PullFromWhereContext {
  return {
    consumeFromWhere: cfw,
    consumeTimestamp: TS,
    readOffsetFromStore: async () => stored,
    maxOffset: async () => {
      calls.push('max');
      return 500;
    },
    searchOffset: async (_mq, ts) => {
      calls.push(`search:${ts}`);
      return 42;
    },
  };
}

const normal = mqOf(0, 'Topic');
const retry = mqOf(0, '%RETRY%g');
const tsMs = new Date(2024, 0, 2, 3, 4, 5).getTime();

describe('computePullFromWhere (RocketMQ: RebalancePushImpl.computePullFromWhere)', () => {
  it.each([
    // [name, stored, cfw, mq, expected, calls]
    ['stored offset wins (LAST)', 7, ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, normal, 7, []],
    ['stored offset wins (FIRST)', 7, ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, normal, 7, []],
    ['stored offset wins (TIMESTAMP)', 0, ConsumeFromWhere.CONSUME_FROM_TIMESTAMP, normal, 0, []],
    ['LAST, none stored: max offset', -1, ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, normal, 500, ['max']],
    ['LAST, none stored, retry topic: 0', -1, ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, retry, 0, []],
    ['deprecated MIN alias behaves as LAST', -1, ConsumeFromWhere.CONSUME_FROM_MIN_OFFSET, normal, 500, ['max']],
    ['deprecated MAX alias behaves as LAST', -1, ConsumeFromWhere.CONSUME_FROM_MAX_OFFSET, retry, 0, []],
    [
      'deprecated LAST_AND_MIN alias behaves as LAST',
      -1,
      ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST,
      normal,
      500,
      ['max'],
    ],
    ['FIRST, none stored: 0', -1, ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, normal, 0, []],
    ['FIRST, none stored, retry topic: 0', -1, ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, retry, 0, []],
    ['TIMESTAMP, none stored: search', -1, ConsumeFromWhere.CONSUME_FROM_TIMESTAMP, normal, 42, [`search:${tsMs}`]],
    [
      'TIMESTAMP, none stored, retry topic: max offset',
      -1,
      ConsumeFromWhere.CONSUME_FROM_TIMESTAMP,
      retry,
      500,
      ['max'],
    ],
  ] as const)('%s', async (_n, stored, cfw, mq, expected, expectedCalls) => {
    const calls: string[] = [];
    await expect(computePullFromWhere(mq, ctx(stored, cfw, calls))).resolves.toBe(expected);
    expect(calls).toEqual(expectedCalls);
  });

  it.each([
    ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET,
    ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    ConsumeFromWhere.CONSUME_FROM_TIMESTAMP,
  ])('a read error (-2) throws under %s, so the queue is skipped this round', async (cfw) => {
    await expect(computePullFromWhere(normal, ctx(-2, cfw, []))).rejects.toThrow(/failed/);
  });

  it('a negative final result throws "Found unexpected result"', async () => {
    const c = ctx(-1, ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, []);
    c.maxOffset = async () => -5;
    await expect(computePullFromWhere(normal, c)).rejects.toThrow('Found unexpected result');
  });

  it('a failing max-offset query propagates', async () => {
    const c = ctx(-1, ConsumeFromWhere.CONSUME_FROM_LAST_OFFSET, []);
    c.maxOffset = async () => {
      throw new Error('broker down');
    };
    await expect(computePullFromWhere(normal, c)).rejects.toThrow('broker down');
  });

  it('consumeTimestamp is yyyyMMddHHmmss in local time; the default is now - 30 min', () => {
    expect(parseConsumeTimestamp(TS)).toBe(tsMs);
    expect(() => parseConsumeTimestamp('2024-01-02')).toThrow(/yyyyMMddHHmmss/);
    const now = new Date(2024, 5, 6, 7, 38, 9).getTime();
    expect(defaultConsumeTimestamp(now)).toBe('20240606070809');
    expect(parseConsumeTimestamp(defaultConsumeTimestamp(now))).toBe(now - 30 * 60 * 1000);
  });
});
