import { RebalanceLockManager } from '../../../src/broker/rebalance-lock-manager.js';
import { silentLogger } from '../../../src/common/logger.js';
import { ManualClock } from '../../support/manual-clock.js';

const mq = (queueId: number, topic = 'T') => ({ topic, brokerName: 'broker-a', queueId });

describe('RebalanceLockManager', () => {
  let clock: ManualClock;
  let locks: RebalanceLockManager;
  beforeEach(() => {
    clock = new ManualClock();
    locks = new RebalanceLockManager(clock, silentLogger, 60_000);
  });

  test('a free queue is locked by the first client and refused to another while the lock lives', () => {
    expect(locks.tryLockBatch('G', [mq(0), mq(1)], 'c1')).toEqual([mq(0), mq(1)]);
    expect(locks.tryLockBatch('G', [mq(1), mq(2)], 'c2')).toEqual([mq(2)]);
    expect(locks.lockHolder('G', mq(1))).toBe('c1');
    expect(locks.lockHolder('G', mq(2))).toBe('c2');
  });

  test('locks are per consumer group', () => {
    locks.tryLockBatch('G1', [mq(0)], 'c1');
    expect(locks.tryLockBatch('G2', [mq(0)], 'c2')).toEqual([mq(0)]);
  });

  test('RocketMQ: a lock expires 60 s after it was last renewed, then another client may take it', () => {
    locks.tryLockBatch('G', [mq(0)], 'c1');
    clock.advance(40_000);
    expect(locks.tryLockBatch('G', [mq(0)], 'c1')).toEqual([mq(0)]); // renewed
    clock.advance(40_000);
    expect(locks.tryLockBatch('G', [mq(0)], 'c2')).toEqual([]); // 40 s after the renewal: still c1's
    clock.advance(20_001);
    expect(locks.lockHolder('G', mq(0))).toBeUndefined();
    expect(locks.tryLockBatch('G', [mq(0)], 'c2')).toEqual([mq(0)]);
    expect(locks.lockHolder('G', mq(0))).toBe('c2');
  });

  test('unlock releases only the caller’s own locks', () => {
    locks.tryLockBatch('G', [mq(0), mq(1)], 'c1');
    locks.unlockBatch('G', [mq(0), mq(1)], 'c2');
    expect(locks.lockHolder('G', mq(0))).toBe('c1');
    locks.unlockBatch('G', [mq(0)], 'c1');
    expect(locks.lockHolder('G', mq(0))).toBeUndefined();
    expect(locks.tryLockBatch('G', [mq(0)], 'c2')).toEqual([mq(0)]);
    expect(locks.lockHolder('G', mq(1))).toBe('c1');
  });

  test('a queue named twice in one request is answered once', () => {
    expect(locks.tryLockBatch('G', [mq(0), mq(0)], 'c1')).toEqual([mq(0)]);
  });
});
