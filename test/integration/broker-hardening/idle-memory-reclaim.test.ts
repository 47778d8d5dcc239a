/**
 * The idle-memory watcher: brokers hold it (unless `idleMemoryReclaim: false`) and the last one to shut
 * down stops it; and, in a quiet process of its own, 40 MiB of Buffers dropped (less than V8's own
 * external-memory trigger) stay resident in a process that does nothing more, and are given back within a
 * few of the watcher's samples when it runs.
 */
import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { idleReclaimRunning } from '../../../src/broker/idle-memory-reclaim.js';
import { startBroker } from '../../support/broker-fixture.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const MiB = 1024 * 1024;

interface Result {
  before: number;
  dropped: number;
  after: number;
  prompted: number;
}

function runChild<R = Result>(args: string[]): Promise<R> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(here, '../../support/idle-reclaim-child.mjs'), ...args], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.on('error', reject);
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || !line) reject(new Error(`idle-reclaim child exited ${code}: ${err}`));
      else resolve(JSON.parse(line.slice(7)) as R);
    });
  });
}

describe('idle memory reclaim', () => {
  it('runs while a broker that wants it runs, and stops with the last one', async () => {
    expect(idleReclaimRunning()).toBe(false);
    const started: Array<Awaited<ReturnType<typeof startBroker>>> = [];
    try {
      started.push(await startBroker({ idleMemoryReclaim: false }));
      expect(idleReclaimRunning()).toBe(false);
      const [a, b] = [await startBroker(), await startBroker()];
      started.push(a, b);
      expect(idleReclaimRunning()).toBe(true);
      await a.close();
      expect(idleReclaimRunning()).toBe(true);
      await b.close();
      expect(idleReclaimRunning()).toBe(false);
    } finally {
      // close() of a broker already closed only removes its (already removed) store again
      await Promise.all(started.map((f) => f.close()));
    }
  });

  it('a quiet process keeps dropped Buffers without the watcher and frees them with it', async () => {
    const [without, withWatcher] = await Promise.all([runChild(['none', '1500']), runChild(['watch', '20000'])]);
    for (const r of [without, withWatcher]) expect(r.dropped - r.before).toBeGreaterThanOrEqual(36 * MiB);
    // Without: nothing collects them (this is what the watcher is for).
    expect(without.after - without.before).toBeGreaterThanOrEqual(32 * MiB);
    expect(without.prompted).toBe(0);
    // With: one prompted collection gave them back.
    expect(withWatcher.prompted).toBeGreaterThanOrEqual(1);
    expect(withWatcher.after - withWatcher.before).toBeLessThan(8 * MiB);
  });

  it("borrows V8's gc() without changing --expose-gc, whether it was off or set on at run time", async () => {
    type FlagResult = { before: string; prompted: boolean; after: string };
    const [off, on] = await Promise.all([runChild<FlagResult>(['flag', 'off']), runChild<FlagResult>(['flag', 'on'])]);
    expect(off).toEqual({ before: 'undefined', prompted: true, after: 'undefined' });
    expect(on).toEqual({ before: 'function', prompted: true, after: 'function' });
  });
});
