import { ProcessQueue, PULL_MAX_IDLE_TIME_MS } from '../../../../src/client/consumer/process-queue.js';
import { msgAt } from '../helpers.js';

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

  it('agrees with a sorted-map model over random puts (duplicates, out of order) and removals', () => {
    let seed = 42;
    const rand = (n: number): number => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed % n;
    };
    const pq = new ProcessQueue(0);
    const model = new Map<number, number>(); // offset → body length
    let next = 0;
    for (let step = 0; step < 20_000; step++) {
      const op = rand(10);
      if (op < 4) {
        // A pull: a run of ascending offsets, sometimes with gaps, an old offset or a duplicate.
        const batch = [];
        for (let k = rand(8); k >= 0; k--) {
          const off = rand(20) === 0 ? Math.max(0, next - 1 - rand(50)) : (next += 1 + rand(3));
          batch.push(msgAt(off, 1 + (off % 5))); // one body size per offset, so a duplicate changes no size
        }
        pq.putMessage(batch);
        for (const m of batch) if (!model.has(m.queueOffset)) model.set(m.queueOffset, m.body!.length);
      } else {
        // Done: a few held offsets (mostly near the head) and sometimes one never held.
        const held = [...model.keys()].sort((a, b) => a - b);
        const done = [];
        for (let k = rand(4); k >= 0 && held.length > 0; k--) {
          const pick = held.splice(rand(2) === 0 ? 0 : rand(held.length), 1)[0]!;
          done.push(msgAt(pick));
        }
        if (rand(5) === 0) done.push(msgAt(next + 1000));
        const expectEmpty = model.size === 0;
        for (const m of done) model.delete(m.queueOffset);
        const sorted = [...model.keys()].sort((a, b) => a - b);
        const got = pq.removeMessage(done, step);
        expect(got).toBe(expectEmpty ? -1 : (sorted[0] ?? pq.queueOffsetMax + 1));
      }
      const sorted = [...model.keys()].sort((a, b) => a - b);
      expect(pq.msgCount).toBe(model.size);
      expect(pq.msgSize).toBe([...model.values()].reduce((a, b) => a + b, 0));
      expect(pq.firstKey()).toBe(sorted[0]);
      expect(pq.lastKey()).toBe(sorted[sorted.length - 1]);
      if (sorted.length > 0) expect(pq.containsMessage(msgAt(sorted[rand(sorted.length)]!))).toBe(true);
      expect(pq.containsMessage(msgAt(next + 1000))).toBe(false);
    }
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
