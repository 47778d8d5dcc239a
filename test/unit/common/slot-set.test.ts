import { SlotSet } from '../../../src/common/slot-set.js';

describe('SlotSet', () => {
  it('adds, removes by slot and reuses freed slots', () => {
    const s = new SlotSet<{ n: number }>();
    const a = { n: 1 };
    const b = { n: 2 };
    const c = { n: 3 };
    const sa = s.add(a);
    const sb = s.add(b);
    expect(s.size).toBe(2);
    s.delete(sa, a);
    expect(s.size).toBe(1);
    expect(s.toArray()).toEqual([b]);
    const sc = s.add(c);
    expect(sc).toBe(sa); // the freed slot is reused
    expect(s.toArray()).toEqual([c, b]);
    s.delete(sb, b);
    s.delete(sc, c);
    expect(s.size).toBe(0);
    expect(s.any()).toBeUndefined();
    expect(s.toArray()).toEqual([]);
  });

  it('ignores a delete whose slot no longer holds that item (a stale or repeated delete)', () => {
    const s = new SlotSet<{ n: number }>();
    const a = { n: 1 };
    const b = { n: 2 };
    const slot = s.add(a);
    s.delete(slot, a);
    s.add(b); // takes the same slot
    s.delete(slot, a);
    expect(s.toArray()).toEqual([b]);
    expect(s.size).toBe(1);
  });

  it('toArray is a snapshot: the set may change while the caller goes through it', () => {
    const s = new SlotSet<{ n: number }>();
    const items = [1, 2, 3].map((n) => ({ n }));
    const slots = items.map((i) => s.add(i));
    const seen: number[] = [];
    for (const item of s.toArray()) {
      seen.push(item.n);
      items.forEach((x, i) => s.delete(slots[i]!, x));
    }
    expect(seen).toEqual([1, 2, 3]);
    expect(s.size).toBe(0);
  });

  it('any gives a held item', () => {
    const s = new SlotSet<{ n: number }>();
    const a = { n: 1 };
    const b = { n: 2 };
    const sa = s.add(a);
    s.add(b);
    s.delete(sa, a);
    expect(s.any()).toBe(b);
  });
});
