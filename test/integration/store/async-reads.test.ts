/**
 * How the pull path reads what the read cache does not hold. Consume-queue units of older files and
 * commit-log records the store takes to be on disk (further behind the head than
 * accessMessageInMemoryMaxRatio of RAM, RocketMQ's estimate) are read without a synchronous read on the
 * event loop, and the answers are the same — also while retention deletes segments and when the store
 * shuts down mid-read. Records near the head, which the page cache holds, are read on the loop: a memory
 * copy, cheaper than a trip through the thread pool.
 */
import { jest } from '@jest/globals';
import fs from 'node:fs';
import { bodiesOf, drainBodies, fillAlternating, useTinyStores } from '../../support/store-fixture.js';
import { msg, uniqueTopic } from './conformance.js';

/**
 * No read cache, and every record counted as on disk (a 1-byte RAM); the in-memory transfer caps still
 * apply (32 messages / 256 KiB a pull), so the pulls are the same as the in-memory tests' pulls.
 */
const ON_DISK = {
  readCacheSizeBytes: 0,
  totalPhysicalMemoryBytes: 1,
  maxTransferCountOnMessageInDisk: 32,
  maxTransferBytesOnMessageInDisk: 256 * 1024,
};

describe('pull reads outside the read cache', () => {
  const stores = useTinyStores('rmq-asyncread-');
  afterEach(() => jest.restoreAllMocks());

  test('a pull of messages on disk (queue files and records) makes no synchronous read', async () => {
    const topic = uniqueTopic();
    const s = await stores.open(ON_DISK);
    await fillAlternating(s, topic, 120);
    await s.shutdown();
    // Reopened: only the newest consume-queue file of each queue is in memory, no record is cached.
    const again = await stores.open(ON_DISK);
    const readSync = jest.spyOn(fs, 'readSync');
    const read = jest.spyOn(fs, 'read');
    expect(await drainBodies(again, topic, 0)).toEqual(bodiesOf(120, 0));
    expect(await drainBodies(again, topic, 1)).toEqual(bodiesOf(120, 1));
    expect(readSync).not.toHaveBeenCalled();
    expect(read).toHaveBeenCalled();
  });

  test('retention while pulls read: every answer is either the right messages or MESSAGE_WAS_REMOVING', async () => {
    const topic = uniqueTopic();
    const s = await stores.open(ON_DISK);
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
    const s = await stores.open(ON_DISK);
    await fillAlternating(s, topic, 120);
    await s.shutdown();
    const again = await stores.open(ON_DISK);
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

  /** `n` 1 KiB messages sent one by one to `queues` queues in turn (as a client that sends each message alone). */
  async function fillRoundRobin(s: Awaited<ReturnType<typeof stores.open>>, topic: string, queues: number, n: number) {
    for (let i = 0; i < n; i++) {
      const body = Buffer.alloc(1024, i % 251);
      body.writeUInt32BE(i, 0);
      await s.putMessage(msg(topic, body, { queueId: i % queues }));
    }
  }
  /**
   * A store without read cache (every pull reads the file) on log segments of `logMiB`, holding `n` records
   * of `queues` queues filled in turn, and spies on `fs.read` and `fs.readSync` set after the filling.
   * The records count as on disk unless `extra` says otherwise.
   */
  async function roundRobinStore(logMiB: number, queues: number, n: number, extra: object = ON_DISK) {
    const topic = uniqueTopic();
    const s = await stores.open({
      mappedFileSizeCommitLog: logMiB * 1024 * 1024,
      mappedFileSizeConsumeQueue: 300 * 20,
      readCacheSizeBytes: 0,
      ...extra,
    });
    await fillRoundRobin(s, topic, queues, n);
    return { s, topic, read: jest.spyOn(fs, 'read'), readSync: jest.spyOn(fs, 'readSync') };
  }
  const seqs = (r: { messages: Buffer[] }): number[] => r.messages.map((m) => m.readUInt32BE(88));
  /** The sequence numbers of queue `first`'s 32 records when `queues` queues were filled in turn from `from`. */
  const every = (first: number, queues: number, from = 0): number[] =>
    [...Array(32).keys()].map((i) => first + queues * (from + i));

  test('a pull of a queue whose records lie between those of 7 other queues is one read of the disk', async () => {
    const { s, topic, read } = await roundRobinStore(4, 8, 8 * 64);
    // 32 records of 1 KiB, one every 8 records of the log: about 290 KiB of log for one pull.
    const first = await s.getMessage('G', topic, 3, 0, 32);
    expect(first.status).toBe('FOUND');
    expect(seqs(first)).toEqual(every(3, 8));
    expect(read).toHaveBeenCalledTimes(1);
    // The pull after it reads the next stretch, again in one read; the bodies are whole.
    const second = await s.getMessage('G', topic, 3, 32, 32);
    expect(seqs(second)).toEqual(every(3, 8, 32));
    expect(read).toHaveBeenCalledTimes(2);
    for (const m of [...first.messages, ...second.messages]) expect(m.length).toBeGreaterThan(1024);
  });

  test('a pull spread over more log than one read covers is served whole by a few reads, in order', async () => {
    // 32 records of queue 5 spread over about 2.3 MiB of log (one every 64 records).
    const { s, topic, read } = await roundRobinStore(8, 64, 64 * 40);
    const r = await s.getMessage('G', topic, 5, 0, 32);
    expect(seqs(r)).toEqual(every(5, 64));
    expect(r.messagesBuffer?.length).toBe(r.bufferTotalSize);
    // Each read covers at most 512 KiB of log (7 or 8 of these records): 4 or 5 reads, never one per record.
    expect(read.mock.calls.length).toBeGreaterThanOrEqual(4);
    expect(read.mock.calls.length).toBeLessThanOrEqual(6);
    // Read again (new pool slots, some reused): the same records.
    const again = await s.getMessage('G', topic, 5, 0, 32);
    expect(seqs(again)).toEqual(seqs(r));
  });

  test('records near the head, which the page cache holds, are read on the event loop: one read, same answers', async () => {
    const { s, topic, read, readSync } = await roundRobinStore(4, 8, 8 * 64, {});
    const first = await s.getMessage('G', topic, 3, 0, 32);
    expect(seqs(first)).toEqual(every(3, 8));
    expect(readSync).toHaveBeenCalledTimes(1);
    const second = await s.getMessage('G', topic, 3, 32, 32);
    expect(seqs(second)).toEqual(every(3, 8, 32));
    expect(readSync).toHaveBeenCalledTimes(2);
    expect(read).not.toHaveBeenCalled();
    for (const m of [...first.messages, ...second.messages]) expect(m.length).toBeGreaterThan(1024);
  });

  test('RocketMQ estimate decides: records beyond accessMessageInMemoryMaxRatio of RAM behind the head are read off the loop', async () => {
    // About 560 KiB of log; 40% of a 512 KiB RAM is 205 KiB: the older records count as on disk.
    const { s, topic, read, readSync } = await roundRobinStore(4, 8, 8 * 64, { totalPhysicalMemoryBytes: 512 * 1024 });
    const old = await s.getMessage('G', topic, 3, 0, 8);
    expect(seqs(old)).toEqual(every(3, 8).slice(0, 8));
    expect(read).toHaveBeenCalled();
    expect(readSync).not.toHaveBeenCalled();
    read.mockClear();
    const recent = await s.getMessage('G', topic, 3, 56, 8);
    expect(seqs(recent)).toEqual(every(3, 8, 56).slice(0, 8));
    expect(readSync).toHaveBeenCalled();
    expect(read).not.toHaveBeenCalled();
  });
});
