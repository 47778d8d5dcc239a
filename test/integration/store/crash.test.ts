/**
 * Crash test: a child process appends under load and is killed with SIGKILL once it has acknowledged a
 * random number of appends (a condition, never a timer, so a busy machine cannot make it vacuous); after
 * reopening, every acknowledged append is present, byte for byte, and nothing corrupt is returned.
 * Three rounds on the same store (each round recovers what the previous kill left). `npm run soak` runs the same check
 * in a loop (test/soak/store-crash.soak.mjs).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCrashRound } from '../../support/store-crash.mjs';

describe('store crash test (SIGKILL under load)', () => {
  let dir: string;
  beforeAll(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-crash-'));
  });
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const round of [1, 2, 3]) {
    test(`round ${round}: every acknowledged append survives the kill, nothing corrupt is served`, async () => {
      const r = await runCrashRound(dir, { mode: round === 2 ? 'sync' : 'async' });
      expect(r.problems).toEqual([]);
      expect(r.acknowledged).toBeGreaterThan(0);
    }, 60_000);
  }
});
