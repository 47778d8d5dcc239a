import { decidePull, perQueueThreshold, type PullCheckInput } from '../../../../src/client/consumer/flow-control.js';

const base: PullCheckInput = {
  dropped: false,
  running: true,
  paused: false,
  msgCount: 0,
  msgSize: 0,
  maxSpan: 0,
  hasSubscription: true,
  pullThresholdForQueue: 1000,
  pullThresholdSizeForQueueMiB: 100,
  consumeConcurrentlyMaxSpan: 2000,
  pullTimeDelayMillsWhenException: 1000,
};
const MIB = 1024 * 1024;

describe('pull decision (RocketMQ: DefaultMQPushConsumerImpl.pullMessage checks, in order)', () => {
  it.each([
    ['all fine', {}, { action: 'pull' }],
    ['dropped: the request dies', { dropped: true, running: false }, { action: 'drop', reason: 'dropped' }],
    [
      'not running: later 1000',
      { running: false, paused: true },
      { action: 'later', delayMs: 1000, reason: 'notRunning' },
    ],
    ['paused: later 1000', { paused: true, msgCount: 5000 }, { action: 'later', delayMs: 1000, reason: 'paused' }],
    ['count at the limit still pulls', { msgCount: 1000 }, { action: 'pull' }],
    [
      'count above the limit: later 50',
      { msgCount: 1001, msgSize: 500 * MIB },
      { action: 'later', delayMs: 50, reason: 'cachedMessageCount' },
    ],
    ['size 100.99 MiB (integer MiB = 100) still pulls', { msgSize: 101 * MIB - 1 }, { action: 'pull' }],
    [
      'size 101 MiB: later 50',
      { msgSize: 101 * MIB, maxSpan: 5000 },
      { action: 'later', delayMs: 50, reason: 'cachedMessageSize' },
    ],
    ['span at the limit still pulls', { maxSpan: 2000 }, { action: 'pull' }],
    ['span above the limit: later 50', { maxSpan: 2001 }, { action: 'later', delayMs: 50, reason: 'consumeSpan' }],
    [
      'no subscription: later (exception delay)',
      { hasSubscription: false, pullTimeDelayMillsWhenException: 777 },
      { action: 'later', delayMs: 777, reason: 'noSubscription' },
    ],
  ] as const)('%s', (_name, patch, expected) => {
    expect(decidePull({ ...base, ...patch })).toEqual(expected);
  });

  it('topic thresholds become per-queue thresholds max(1, limit / queues)', () => {
    expect(perQueueThreshold(-1, 8)).toBeUndefined();
    expect(perQueueThreshold(1000, 0)).toBeUndefined();
    expect(perQueueThreshold(1000, 8)).toBe(125);
    expect(perQueueThreshold(5, 8)).toBe(1);
    expect(perQueueThreshold(1001, 8)).toBe(125);
  });
});
