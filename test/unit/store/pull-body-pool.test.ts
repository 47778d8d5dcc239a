import { jest } from '@jest/globals';
import {
  MAX_POOLED_BYTES,
  TRIM_EVERY_MS,
  acquirePullBody,
  releasePullBody,
} from '../../../src/store/pull-body-pool.js';

describe('pull body pool', () => {
  test('a body handed back is reused for the next pull of its size class', () => {
    const a = acquirePullBody(36_000);
    expect(a.length).toBe(36_000);
    // The slots of steady pulls are plain memory (a resizable one costs more per pull).
    expect((a.buffer as ArrayBuffer & { resizable: boolean }).resizable).toBe(false);
    releasePullBody(a);
    const b = acquirePullBody(40_000);
    expect(b.buffer).toBe(a.buffer);
    expect(b.length).toBe(40_000);
    // Not handed back: the next one is other memory.
    const c = acquirePullBody(40_000);
    expect(c.buffer).not.toBe(b.buffer);
    releasePullBody(b);
    releasePullBody(c);
  });

  test('a body handed back twice is reused once; foreign buffers and views are ignored', () => {
    const a = acquirePullBody(1000);
    releasePullBody(a);
    releasePullBody(a);
    const b = acquirePullBody(1000);
    const c = acquirePullBody(1000);
    expect(b.buffer).toBe(a.buffer);
    expect(c.buffer).not.toBe(a.buffer);
    releasePullBody(c.subarray(10)); // a view inside a body is not the body
    expect(acquirePullBody(1000).buffer).not.toBe(c.buffer);
    const foreign = Buffer.alloc(70_000);
    releasePullBody(foreign);
    expect(acquirePullBody(70_000).buffer).not.toBe(foreign.buffer);
  });

  test('bodies above the largest class are plain allocations, never pooled', () => {
    const big = acquirePullBody(MAX_POOLED_BYTES + 1);
    releasePullBody(big);
    expect(acquirePullBody(MAX_POOLED_BYTES + 1).buffer).not.toBe(big.buffer);
    expect(acquirePullBody(0).length).toBe(0);
  });

  test('free slots past the kept amount are reused for a while, then given back when not needed', () => {
    jest.useFakeTimers();
    try {
      const bodies = Array.from({ length: 12 }, () => acquirePullBody(MAX_POOLED_BYTES));
      for (const b of bodies) releasePullBody(b);
      // Within the interval, a burst of pulls reuses them rather than fresh memory.
      const again = Array.from({ length: 12 }, () => acquirePullBody(MAX_POOLED_BYTES));
      expect(new Set(again.map((b) => b.buffer))).toEqual(new Set(bodies.map((b) => b.buffer)));
      for (const b of again) releasePullBody(b);
      jest.advanceTimersByTime(2 * TRIM_EVERY_MS);
      // At most 8 MiB of free slots are kept: the others were shrunk to nothing; the plain ones stay.
      const shrunk = bodies.filter((b) => b.buffer.byteLength === 0);
      expect(shrunk.length).toBeGreaterThanOrEqual(4);
      for (const b of shrunk) expect((b.buffer as ArrayBuffer & { resizable: boolean }).resizable).toBe(true);
      for (const b of bodies) if (b.buffer.byteLength !== 0) expect(b.buffer.byteLength).toBe(MAX_POOLED_BYTES);
    } finally {
      jest.useRealTimers();
    }
  });

  test('a body above the largest class gives its memory back when handed back', () => {
    const big = acquirePullBody(MAX_POOLED_BYTES + 1);
    expect(big.buffer.byteLength).toBe(MAX_POOLED_BYTES + 1);
    releasePullBody(big);
    expect(big.buffer.byteLength).toBe(0);
  });
});
