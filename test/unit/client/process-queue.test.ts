import { ProcessQueue, PULL_MAX_IDLE_TIME_MS } from '../../../src/client/process-queue.js';
import { msgAt } from './helpers.js';

describe('ProcessQueue (RocketMQ: committed offset = smallest offset still in flight, or max+1)', () => {
  it('removeMessage on an empty queue gives -1', () => {
    const pq = new ProcessQueue(0);
    expect(pq.removeMessage([msgAt(1)], 0)).toBe(-1);
  });

  it.each([
    // [put offsets, removed offsets, expected offset to commit]
    [[0, 1, 2], [0], 1],
    [[0, 1, 2], [1], 0],
    [[0, 1, 2], [2], 0],
    [[0, 1, 2], [0, 1, 2], 3],
    [[5, 6, 7], [5, 6], 7],
    [[10, 14, 20], [10], 14], // gaps (filtered messages): the next held offset
    [[10, 14, 20], [10, 14, 20], 21],
    [[10, 14, 20], [99], 10], // unknown message: nothing removed, smallest held
  ])('put %j remove %j → %i', (put, removed, expected) => {
    const pq = new ProcessQueue(0);
    pq.putMessage(put.map((o) => msgAt(o)));
    expect(
      pq.removeMessage(
        removed.map((o) => msgAt(o)),
        1,
      ),
    ).toBe(expected);
  });

  it('a failed message kept in the queue holds the offset back while later ones finish', () => {
    const pq = new ProcessQueue(0);
    pq.putMessage([0, 1, 2, 3].map((o) => msgAt(o)));
    expect(pq.removeMessage([msgAt(1)], 0)).toBe(0);
    expect(pq.removeMessage([msgAt(2)], 0)).toBe(0);
    expect(pq.removeMessage([msgAt(3)], 0)).toBe(0);
    expect(pq.removeMessage([msgAt(0)], 0)).toBe(4);
  });

  it('counts messages and body bytes once per offset; size resets at zero count', () => {
    const pq = new ProcessQueue(0);
    pq.putMessage([msgAt(0, 100), msgAt(1, 50)]);
    pq.putMessage([msgAt(1, 50)]); // the same offset again counts once
    expect(pq.msgCount).toBe(2);
    expect(pq.msgSize).toBe(150);
    expect(pq.queueOffsetMax).toBe(1);
    pq.removeMessage([msgAt(0)], 0);
    expect(pq.msgSize).toBe(50);
    pq.removeMessage([msgAt(1)], 0);
    expect(pq.msgCount).toBe(0);
    expect(pq.msgSize).toBe(0);
  });

  it('getMaxSpan is lastKey - firstKey', () => {
    const pq = new ProcessQueue(0);
    expect(pq.getMaxSpan()).toBe(0);
    pq.putMessage([3, 4, 9].map((o) => msgAt(o)));
    expect(pq.getMaxSpan()).toBe(6);
    pq.removeMessage([msgAt(9)], 0);
    expect(pq.getMaxSpan()).toBe(1);
    pq.removeMessage([msgAt(3)], 0);
    expect(pq.getMaxSpan()).toBe(0);
  });

  it('putMessage reports dispatchToConsume once and computes msgAccCnt from MAX_OFFSET', () => {
    const pq = new ProcessQueue(0);
    expect(pq.putMessage([msgAt(0, 1, { properties: { MAX_OFFSET: '100' } })])).toBe(true);
    expect(pq.msgAccCnt).toBe(100);
    expect(pq.putMessage([msgAt(1)])).toBe(false);
  });

  it('handles an out-of-order put and many removals', () => {
    const pq = new ProcessQueue(0);
    pq.putMessage([msgAt(5), msgAt(7)]);
    pq.putMessage([msgAt(6)]);
    expect(pq.firstKey()).toBe(5);
    expect(pq.removeMessage([msgAt(5)], 0)).toBe(6);
    const big = Array.from({ length: 5000 }, (_, i) => msgAt(100 + i));
    pq.putMessage(big);
    for (const m of big.slice(0, 4999)) pq.removeMessage([m], 0);
    expect(pq.removeMessage([msgAt(6), msgAt(7)], 0)).toBe(5099);
    expect(pq.msgCount).toBe(1);
  });

  it('RocketMQ: a queue not pulled for 120 s is pull-expired', () => {
    const pq = new ProcessQueue(0);
    expect(pq.isPullExpired(PULL_MAX_IDLE_TIME_MS)).toBe(false);
    expect(pq.isPullExpired(PULL_MAX_IDLE_TIME_MS + 1)).toBe(true);
  });

  it('removeMessage updates lastConsumeTimestamp', () => {
    const pq = new ProcessQueue(0);
    pq.removeMessage([], 42);
    expect(pq.lastConsumeTimestamp).toBe(42);
  });

  describe('cleanExpiredMsg (RocketMQ: head messages past consumeTimeout are sent back and removed)', () => {
    it('sends back expired heads, stops at a fresh or unstarted head', async () => {
      const pq = new ProcessQueue(0);
      const m0 = msgAt(0, 1, { properties: { CONSUME_START_TIME: '0' } });
      const m1 = msgAt(1, 1, { properties: { CONSUME_START_TIME: '10' } });
      const m2 = msgAt(2, 1, { properties: { CONSUME_START_TIME: '990' } });
      const m3 = msgAt(3);
      pq.putMessage([m0, m1, m2, m3]);
      const sent: number[] = [];
      const removed = await pq.cleanExpiredMsg(
        100,
        () => 1000,
        async (m) => {
          sent.push(m.queueOffset);
        },
      );
      expect(sent).toEqual([0, 1]);
      expect(removed.map((m) => m.queueOffset)).toEqual([0, 1]);
      expect(pq.firstKey()).toBe(2);
    });

    it('a failing send-back ends the run and keeps the message', async () => {
      const pq = new ProcessQueue(0);
      pq.putMessage([msgAt(0, 1, { properties: { CONSUME_START_TIME: '0' } })]);
      const removed = await pq.cleanExpiredMsg(
        1,
        () => 1000,
        async () => {
          throw new Error('down');
        },
      );
      expect(removed).toEqual([]);
      expect(pq.msgCount).toBe(1);
    });

    it('looks at no more than 16 messages per run', async () => {
      const pq = new ProcessQueue(0);
      pq.putMessage(Array.from({ length: 20 }, (_, i) => msgAt(i, 1, { properties: { CONSUME_START_TIME: '0' } })));
      const removed = await pq.cleanExpiredMsg(
        1,
        () => 1000,
        async () => {},
      );
      expect(removed.length).toBe(16);
    });
  });
});
