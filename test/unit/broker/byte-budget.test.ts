import { ByteBudget, ConnectionBudget, LIGHT_HOLDER_BYTES } from '../../../src/broker/remoting/byte-budget.js';

const KiB = 1024;
const MiB = 1024 * KiB;

describe('ByteBudget', () => {
  test('counts every byte given back, by a connection and by its close', () => {
    const budget = new ByteBudget(8 * MiB);
    const c = new ConnectionBudget(8 * MiB, budget);
    c.take(3 * MiB);
    c.release(MiB);
    expect(budget.releasedTotal).toBe(MiB);
    c.take(KiB);
    c.close();
    expect(budget.used).toBe(0);
    expect(budget.releasedTotal).toBe(3 * MiB + KiB);
  });

  test('heavy holders spend all but the last eighth; light holders may use that reserve', () => {
    const budget = new ByteBudget(8 * MiB);
    expect(budget.reserve).toBe(MiB);
    const hog = new ConnectionBudget(8 * MiB, budget);
    // A holder past LIGHT_HOLDER_BYTES stops at limit - reserve.
    hog.take(7 * MiB - 100 * KiB);
    expect(hog.fits(100 * KiB)).toBe(true);
    hog.take(100 * KiB);
    expect(hog.fits(1)).toBe(false);
    expect(hog.over).toBe(true);
    expect(budget.exhaustedFor(hog.used)).toBe(true);

    // A connection that holds nothing is still read and its small frame or answer fits.
    const light = new ConnectionBudget(8 * MiB, budget);
    expect(light.over).toBe(false);
    expect(budget.exhaustedFor(0)).toBe(false);
    expect(light.fits(LIGHT_HOLDER_BYTES)).toBe(true);
    // ...but not a large one: that would make it a heavy holder.
    expect(light.fits(LIGHT_HOLDER_BYTES + 1)).toBe(false);
  });

  test('light holders together stop at the limit itself', () => {
    const budget = new ByteBudget(MiB);
    const holders = Array.from({ length: 16 }, () => new ConnectionBudget(MiB, budget));
    let taken = 0;
    for (const h of holders) {
      if (h.fits(100 * KiB)) {
        h.take(100 * KiB);
        taken += 100 * KiB;
      }
    }
    expect(taken).toBeLessThanOrEqual(MiB);
    expect(budget.used).toBe(taken);
    expect(budget.exhaustedFor(0)).toBe(false);
    expect(budget.fits(100 * KiB, 0)).toBe(false);
    for (const h of holders) h.close();
    expect(budget.used).toBe(0);
  });
});
