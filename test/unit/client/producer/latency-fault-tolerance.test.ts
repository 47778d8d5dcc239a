import {
  LatencyFaultTolerance,
  notAvailableDurationMs,
} from '../../../../src/client/producer/latency-fault-tolerance.js';
import type { MessageQueue } from '../../../../src/common/message.js';

const mqs: MessageQueue[] = ['broker-a', 'broker-b'].flatMap((brokerName) =>
  [0, 1].map((queueId) => ({ topic: 'T', brokerName, queueId })),
);

describe('RocketMQ: computeNotAvailableDuration over latencyMax / notAvailableDuration', () => {
  it.each([
    [0, 0],
    [49, 0],
    [100, 0],
    [549, 0],
    [550, 30_000],
    [1000, 60_000],
    [2500, 120_000],
    [3000, 180_000],
    [15_000, 600_000],
    [30_000, 600_000],
  ])('latency %d ms -> avoided %d ms', (latency, duration) => {
    expect(notAvailableDurationMs(latency)).toBe(duration);
  });
});

describe('LatencyFaultTolerance.select', () => {
  let now = 1_000_000;
  const lft = new LatencyFaultTolerance(() => now);

  it('round robin over every queue while all brokers are available', () => {
    let index = 0;
    const seen: string[] = [];
    for (let i = 0; i < 4; i++) {
      const r = lft.select(mqs, index, undefined);
      index = r.index;
      seen.push(`${r.mq.brokerName}/${r.mq.queueId}`);
    }
    expect(seen.sort()).toEqual(['broker-a/0', 'broker-a/1', 'broker-b/0', 'broker-b/1']);
  });

  it('a failed broker is skipped for 10 minutes, then used again', () => {
    lft.update('broker-a', 5, true);
    let index = 7;
    for (let i = 0; i < 10; i++) {
      const r = lft.select(mqs, index, undefined);
      index = r.index;
      expect(r.mq.brokerName).toBe('broker-b');
    }
    now += 600_000;
    expect(lft.isAvailable('broker-a')).toBe(true);
  });

  it('a fast successful send clears the mark at once', () => {
    lft.update('broker-b', 1, true);
    expect(lft.isAvailable('broker-b')).toBe(false);
    lft.update('broker-b', 3, false);
    expect(lft.isAvailable('broker-b')).toBe(true);
  });

  it('on a retry the last broker is avoided when another is available', () => {
    let index = 0;
    for (let i = 0; i < 8; i++) {
      const r = lft.select(mqs, index, 'broker-a');
      index = r.index;
      expect(r.mq.brokerName).toBe('broker-b');
    }
  });

  it('when every broker is avoided, the one available soonest is used', () => {
    lft.update('broker-a', 1000, false); // 60 s
    lft.update('broker-b', 5, true); // 600 s
    expect(lft.select(mqs, 3, undefined).mq.brokerName).toBe('broker-a');
    expect(lft.select(mqs, 3, 'broker-b').mq.brokerName).toBe('broker-a');
  });

  it('refuses an empty queue list', () => {
    expect(() => lft.select([], 0, undefined)).toThrow(RangeError);
  });
});
