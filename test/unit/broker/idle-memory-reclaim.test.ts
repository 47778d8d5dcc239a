import { afterEach, describe, expect, it } from '@jest/globals';
import { runInNewContext } from 'node:vm';
import {
  ReclaimPolicy,
  holdIdleReclaim,
  READ_LOOK_BYTES,
  YoungPromptPolicy,
  idleReclaimRunning,
  noteBytesRead,
  promptCollection,
  promptedYoungCollections,
} from '../../../src/broker/idle-memory-reclaim.js';

const MiB = 1024 * 1024;

describe('ReclaimPolicy', () => {
  it('prompts once the footprint is past its lowest by the threshold and the loop is idle', () => {
    const p = new ReclaimPolicy(16 * MiB, 0.1);
    expect(p.sample(40 * MiB, 0, 0.5)).toBe(false);
    expect(p.sample(30 * MiB, 0, 0.02)).toBe(false); // the floor goes down to 30
    expect(p.sample(45 * MiB, 0, 0.02)).toBe(false); // 15 MiB past it
    expect(p.sample(46 * MiB, 0, 0.02)).toBe(true);
  });

  it('prompts once the listeners gave back the threshold, though the footprint does not show it', () => {
    const p = new ReclaimPolicy(16 * MiB, 0.1);
    expect(p.sample(30 * MiB, 100 * MiB, 1)).toBe(false);
    expect(p.sample(30 * MiB, 115 * MiB, 0)).toBe(false);
    expect(p.sample(30 * MiB, 116 * MiB, 0)).toBe(true);
  });

  it('does not prompt while the event loop is busy, however much there is to collect', () => {
    const p = new ReclaimPolicy(16 * MiB, 0.1);
    p.sample(50 * MiB, 0, 0);
    expect(p.sample(300 * MiB, 500 * MiB, 0.1)).toBe(false);
    expect(p.sample(300 * MiB, 500 * MiB, 0.9)).toBe(false);
    expect(p.sample(300 * MiB, 500 * MiB, 0.05)).toBe(true);
  });

  it('asks a large footprint to grow by a share of itself, not by the threshold alone', () => {
    const p = new ReclaimPolicy(16 * MiB, 0.1, 0.25);
    p.sample(1000 * MiB, 0, 0);
    expect(p.sample(1200 * MiB, 200 * MiB, 0)).toBe(false); // 200 MiB is less than a quarter of 1000
    expect(p.sample(1250 * MiB, 200 * MiB, 0)).toBe(true);
  });

  it('measures from what a prompted collection left, and waits its samples before the next', () => {
    const p = new ReclaimPolicy(16 * MiB, 0.1, 0.25, 3);
    p.sample(50 * MiB, 0, 0);
    expect(p.sample(120 * MiB, 0, 0)).toBe(true);
    expect(p.sample(60 * MiB, 0, 0)).toBe(false); // the collection left 60 MiB live: the new floor
    expect(p.sample(100 * MiB, 0, 0)).toBe(false); // far past it, but only 2 samples since the last
    expect(p.sample(100 * MiB, 0, 0)).toBe(true);
    expect(p.sample(100 * MiB, 0, 0)).toBe(false); // the new floor: 100
    expect(p.sample(110 * MiB, 0, 0)).toBe(false);
    expect(p.sample(115 * MiB, 20 * MiB, 0)).toBe(false); // 15 MiB past the floor, 20 given back: not a quarter of 100
    expect(p.sample(100 * MiB, 25 * MiB, 0)).toBe(true); // 25 MiB given back since the last
    expect(p.sample(100 * MiB, 25 * MiB, 0)).toBe(false);
  });

  it('does not count a fall of the bytes-given-back total (a broker gone) as growth later', () => {
    const p = new ReclaimPolicy(16 * MiB, 0.1);
    p.sample(30 * MiB, 100 * MiB, 1);
    expect(p.sample(30 * MiB, 10 * MiB, 0)).toBe(false); // one source left: the mark follows it down
    expect(p.sample(30 * MiB, 25 * MiB, 0)).toBe(false);
    expect(p.sample(30 * MiB, 26 * MiB, 0)).toBe(true);
  });
});

describe('YoungPromptPolicy', () => {
  it('prompts when external memory grew by the threshold past its lowest look, then starts over', () => {
    const p = new YoungPromptPolicy(4 * MiB);
    expect(p.sample(100 * MiB)).toBe(false);
    expect(p.sample(96 * MiB)).toBe(false); // the floor goes down to 96
    expect(p.sample(99 * MiB)).toBe(false);
    expect(p.sample(100 * MiB)).toBe(true); // 4 MiB past 96
    expect(p.sample(120 * MiB)).toBe(false); // a new floor after a prompt
    expect(p.sample(123 * MiB)).toBe(false);
    expect(p.sample(124 * MiB)).toBe(true);
  });

  it('never prompts while external memory stays flat or falls', () => {
    const p = new YoungPromptPolicy(4 * MiB);
    for (let i = 0; i < 100; i++) expect(p.sample((100 - (i % 3)) * MiB)).toBe(false);
  });
});

describe('holdIdleReclaim', () => {
  const releases: Array<() => void> = [];
  afterEach(() => {
    for (const r of releases.splice(0)) r();
  });

  it('runs one watcher while any broker holds it, and stops with the last release', () => {
    const a = holdIdleReclaim();
    const b = holdIdleReclaim();
    releases.push(a, b);
    expect(idleReclaimRunning()).toBe(true);
    a();
    a(); // a second release of the same hold does nothing
    expect(idleReclaimRunning()).toBe(true);
    b();
    expect(idleReclaimRunning()).toBe(false);
  });

  it('looks at external memory every READ_LOOK_BYTES read while held, and prompts when it grew', () => {
    noteBytesRead(READ_LOOK_BYTES * 4); // no holder: nothing is counted
    const release = holdIdleReclaim();
    releases.push(release);
    expect(promptedYoungCollections()).toBe(0);
    const held: Buffer[] = [];
    for (let i = 0; i < 8 && promptedYoungCollections() === 0; i++) {
      held.push(Buffer.alloc(2 * MiB, i)); // external memory grows by 2 MiB a step
      noteBytesRead(READ_LOOK_BYTES - 1);
      noteBytesRead(1);
    }
    expect(promptedYoungCollections()).toBe(1);
    release();
    expect(promptedYoungCollections()).toBe(0);
    expect(held.length).toBeGreaterThanOrEqual(3); // looks at +0, +2 and +4 MiB: the third prompts (or later, after a collection)
  });
});

describe('promptCollection', () => {
  it("borrows V8's gc() and leaves new contexts as it found them", () => {
    const before = runInNewContext('typeof gc') as string;
    expect(promptCollection()).toBe(true);
    expect(promptCollection()).toBe(true);
    expect(runInNewContext('typeof gc')).toBe(before);
  });
});
