/**
 * The pull path reads the disk asynchronously: consume-queue units of older files and commit-log records
 * outside the read cache are read without a synchronous read on the event loop, and the answers are the
 * same as before — also while retention deletes segments and when the store shuts down mid-read.
 */
import { jest } from '@jest/globals';
import fs from 'node:fs';
import { bodiesOf, drainBodies, fillAlternating, useTinyStores } from '../../support/store-fixture.js';
import { uniqueTopic } from './conformance.js';

describe('asynchronous pull reads', () => {
  const stores = useTinyStores('rmq-asyncread-');
  afterEach(() => jest.restoreAllMocks());

  test('a pull of messages on disk (queue files and records) makes no synchronous read', async () => {
    const topic = uniqueTopic();
    const s = await stores.open({ readCacheSizeBytes: 0 });
    await fillAlternating(s, topic, 120);
    await s.shutdown();
    // Reopened: only the newest consume-queue file of each queue is in memory, no record is cached.
    const again = await stores.open({ readCacheSizeBytes: 0 });
    const readSync = jest.spyOn(fs, 'readSync');
    const read = jest.spyOn(fs, 'read');
    expect(await drainBodies(again, topic, 0)).toEqual(bodiesOf(120, 0));
    expect(await drainBodies(again, topic, 1)).toEqual(bodiesOf(120, 1));
    expect(readSync).not.toHaveBeenCalled();
    expect(read).toHaveBeenCalled();
  });

  test('retention while pulls read: every answer is either the right messages or MESSAGE_WAS_REMOVING', async () => {
    const topic = uniqueTopic();
    const s = await stores.open({ readCacheSizeBytes: 0 });
    await fillAlternating(s, topic, 160);
    const pulls = [];
    for (let q = 0; q < 2; q++) for (let off = 0; off < 80; off += 8) pulls.push(s.getMessage('G', topic, q, off, 8));
    const later = Date.now() + 100 * 3_600_000;
    const deleting = s.deleteExpiredFiles(later);
    const results = await Promise.all(pulls);
    // A segment that a pull is reading is kept until the read ends (the next retention run takes it), so
    // whether this run deleted anything depends on timing; once the pulls have settled, one more run must.
    const deleted = (await deleting) + (await s.deleteExpiredFiles(later));
    expect(deleted).toBeGreaterThan(0);
    const want = [bodiesOf(160, 0), bodiesOf(160, 1)];
    results.forEach((r, i) => {
      const q = i < 10 ? 0 : 1;
      const off = (i % 10) * 8;
      if (r.status === 'FOUND') {
        const got = r.messages.map((m) => {
          const bodyLen = m.readInt32BE(84);
          return m.subarray(88, 88 + bodyLen).toString();
        });
        expect(got).toEqual(want[q]?.slice(off, off + got.length));
        expect(r.queueOffsets[0]).toBe(off);
      } else expect(['MESSAGE_WAS_REMOVING', 'OFFSET_TOO_SMALL', 'NO_MATCHED_MESSAGE']).toContain(r.status);
    });
    // After retention the rest is still served in order.
    const min = s.getMinOffsetInQueue(topic, 0);
    expect(await drainBodies(s, topic, 0)).toEqual(bodiesOf(160, 0).slice(min));
  });

  test('a shutdown while pulls read from disk: pulls settle (served or refused), nothing stays open', async () => {
    const topic = uniqueTopic();
    const s = await stores.open({ readCacheSizeBytes: 0 });
    await fillAlternating(s, topic, 120);
    await s.shutdown();
    const again = await stores.open({ readCacheSizeBytes: 0 });
    const pulls = [0, 1].map((q) => again.getMessage('G', topic, q, 0, 32));
    const closing = again.shutdown();
    const settled = await Promise.allSettled(pulls);
    await closing;
    for (const p of settled) {
      if (p.status === 'fulfilled') expect(p.value.messageCount).toBeGreaterThan(0);
      else expect(String(p.reason)).toMatch(/shut down/);
    }
    const real = fs.realpathSync(stores.dir);
    const open = fs.readdirSync('/proc/self/fd').filter((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(real);
      } catch {
        return false;
      }
    });
    expect(open).toEqual([]);
  });
});
