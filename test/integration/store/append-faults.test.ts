/**
 * Faults in the append path, each reproduced on the real file store: a segment roll that fails, a batch
 * with one bad message, a SYNC_FLUSH fsync slower than its timeout, a lookup by a forged offset, and the
 * arrival announcement of a batch.
 */
import { jest } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { MAGIC_CODE_V1 } from '../../../src/common/codec/index.js';
import { silentLogger } from '../../../src/common/logger.js';
import { CommitLog } from '../../../src/store/commit-log.js';
import { ConsumeQueue } from '../../../src/store/consume-queue.js';
import { MessageStore } from '../../../src/store/message-store.js';
import type { MessageStoreOptions } from '../../../src/store/options.js';
import { drainQueue, useTinyStores } from '../../support/store-fixture.js';
import { SEGMENT, msg, uniqueTopic } from './conformance.js';

describe('append faults', () => {
  const stores = useTinyStores('rmq-append-');
  const open = (extra: Partial<MessageStoreOptions> = {}): Promise<MessageStore> => stores.open(extra);
  /** The bodies of a queue; every pull answers FOUND and the queue offsets follow each other. */
  const readQueue = async (s: MessageStore, topic: string, queueId: number): Promise<string[]> => {
    const msgs = await drainQueue(s, topic, queueId, true);
    const min = s.getMinOffsetInQueue(topic, queueId);
    expect(msgs.map((m) => m.queueOffset)).toEqual(msgs.map((_, i) => min + i));
    return msgs.map((m) => (m.body as Buffer).toString());
  };

  test('a failed segment roll refuses the batch and takes back its offsets: later messages are all delivered', async () => {
    const topic = uniqueTopic();
    const s = await open();
    // The next segment's file name is taken by a directory: opening it fails with EISDIR.
    const blocker = path.join(stores.dir, 'commitlog', String(SEGMENT).padStart(20, '0'));
    fs.mkdirSync(blocker);
    const acked: string[] = [];
    let refused = 0;
    for (let i = 0; refused === 0 && i < 200; i++) {
      const body = `m${i}-${'x'.repeat(100)}`;
      try {
        await s.putMessage(msg(topic, body));
        acked.push(body);
      } catch (e) {
        expect((e as NodeJS.ErrnoException).code).toBe('EISDIR');
        refused++;
      }
    }
    expect(refused).toBe(1);
    const maxBefore = s.getMaxOffsetInQueue(topic, 0);
    expect(maxBefore).toBe(acked.length);
    // A batch that needs the roll is refused as a whole, with no offset taken.
    await expect(s.putMessages([msg(topic, 'b1'), msg(topic, 'b2-'.padEnd(SEGMENT / 2, 'y'))])).rejects.toThrow();
    expect(s.getMaxOffsetInQueue(topic, 0)).toBe(maxBefore);
    fs.rmdirSync(blocker);
    for (let i = 0; i < 20; i++) {
      const body = `after${i}-${'z'.repeat(150)}`;
      await s.putMessage(msg(topic, body));
      acked.push(body);
    }
    expect(await readQueue(s, topic, 0)).toEqual(acked);
    await s.shutdown();
    const again = await open();
    expect(await readQueue(again, topic, 0)).toEqual(acked);
  });

  test('a batch with one oversized message stores nothing (all or nothing)', async () => {
    const topic = uniqueTopic();
    const s = await open({ maxMessageSize: 1000 });
    await s.putMessage(msg(topic, 'first'));
    const logEnd = s.getCommitLogMaxOffset();
    const rs = await s.putMessages([msg(topic, 'a'), msg(topic, Buffer.alloc(1001)), msg(topic, 'c')]);
    expect(rs.map((r) => r.status)).toEqual(['MESSAGE_ILLEGAL', 'MESSAGE_ILLEGAL', 'MESSAGE_ILLEGAL']);
    expect(rs[0]?.remark).toMatch(/message 1 of the batch.*maxMessageSize/);
    expect(s.getCommitLogMaxOffset()).toBe(logEnd);
    expect(s.getMaxOffsetInQueue(topic, 0)).toBe(1);
    const ok = await s.putMessages([msg(topic, 'a'), msg(topic, 'c')]);
    expect(ok.map((r) => [r.status, r.queueOffset])).toEqual([
      ['PUT_OK', 1],
      ['PUT_OK', 2],
    ]);
  });

  test('SYNC_FLUSH answers FLUSH_DISK_TIMEOUT at syncFlushTimeoutMs while the fsync still runs', async () => {
    let release: () => void = () => {};
    const held = new Promise<void>((r) => (release = r));
    const log = new CommitLog(stores.dir, {
      fileSize: SEGMENT,
      readCacheSizeBytes: 0,
      syncFlush: true,
      syncFlushTimeoutMs: 50,
      logger: silentLogger,
      setTimeout: (fn, ms) => {
        const t = setTimeout(fn, ms);
        return () => clearTimeout(t);
      },
      fdatasync: () => held,
    });
    log.recover(0, 0, 0, () => {});
    const record = Buffer.alloc(100, 1);
    record.writeInt32BE(100, 0);
    const started = Date.now();
    const settled = await new Promise<{ err: Error | null; flushOk: boolean }>((resolve) =>
      log.append({
        record,
        assign: () => {},
        rollback: () => {},
        written: () => {},
        settle: (err, flushOk) => resolve({ err, flushOk }),
      }),
    );
    expect(settled).toEqual({ err: null, flushOk: false });
    expect(Date.now() - started).toBeGreaterThanOrEqual(45);
    release();
    await log.close();
  });

  test('a lookup by a forged offset never reads more than the largest record and returns null', async () => {
    const topic = uniqueTopic();
    const s = await open({ mappedFileSizeCommitLog: 1024 * 1024, maxMessageSize: 4096 });
    // A body that looks like a record header claiming 1,000,000 bytes.
    const body = Buffer.alloc(64);
    body.writeInt32BE(1_000_000, 0);
    body.writeInt32BE(MAGIC_CODE_V1, 4);
    const r = await s.putMessage(msg(topic, body));
    for (let i = 0; i < 300; i++) await s.putMessage(msg(topic, 'x'.repeat(3000)));
    const forged = r.physicalOffset + r.wroteBytes - 64 - 2 - 1 - topic.length; // where the body starts
    const raw = fs.readFileSync(path.join(stores.dir, 'commitlog', '0'.repeat(20)));
    expect(raw.readInt32BE(forged)).toBe(1_000_000);
    const reads: number[] = [];
    const internals = s as unknown as { commitLog: CommitLog };
    const read = internals.commitLog.read.bind(internals.commitLog);
    internals.commitLog.read = (offset: number, size: number) => {
      reads.push(size);
      return read(offset, size);
    };
    expect(await s.lookMessageByOffsetRaw(forged)).toBeNull();
    expect(await s.lookMessageByOffsetRaw(r.physicalOffset + 1)).toBeNull();
    expect(await s.lookMessageByOffsetRaw(Number.MAX_SAFE_INTEGER)).toBeNull();
    expect(reads.every((n) => n <= 8)).toBe(true);
    expect((await s.lookMessageByOffsetRaw(r.physicalOffset))?.length).toBe(r.wroteBytes);
  });

  test('a held reader woken by a batch finds the whole batch', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const found: number[] = [];
    let woken = false;
    const off = s.onMessageArriving((a) => {
      if (a.topic !== topic || woken) return;
      woken = true;
      // What a held pull does on wake-up: read the queue from its offset.
      void s.getMessage('G', topic, 0, 0, 32).then((g) => found.push(g.messageCount));
    });
    await s.putMessages([1, 2, 3, 4, 5].map((i) => msg(topic, `b${i}`)));
    await new Promise<void>((r) => setImmediate(r));
    off();
    expect(found).toEqual([5]);
  });

  test('retention moves a queue minimum with a binary search, not one read per unit', async () => {
    const topic = uniqueTopic();
    const s = await open({ mappedFileSizeConsumeQueue: 20 * 100_000 });
    for (let i = 0; i < 30; i++) {
      await s.putMessages(Array.from({ length: 100 }, (_, k) => msg(topic, `r${i}-${k}-${'p'.repeat(60)}`)));
    }
    const unitReads = jest.spyOn(ConsumeQueue.prototype, 'unit');
    try {
      await s.deleteExpiredFiles(Date.now() + 100 * 3_600_000);
      const min = s.getMinOffsetInQueue(topic, 0);
      expect(min).toBeGreaterThan(2500);
      expect(unitReads.mock.calls.length).toBeLessThan(60);
      const first = await s.getMessage('G', topic, 0, min, 1);
      expect(first.status).toBe('FOUND');
      expect(s.getCommitLogMinOffset()).toBeGreaterThan(0);
      expect((await s.getMessage('G', topic, 0, min - 1, 1)).status).toBe('OFFSET_TOO_SMALL');
    } finally {
      unitReads.mockRestore();
    }
  });

  test("RocketMQ's disk thresholds: appends accepted at 80 %, refused over 90 %; over 85 % young segments are deleted", async () => {
    let used = 80;
    const topic = uniqueTopic();
    const s = await open({ diskUsedRatio: () => used, diskCheckIntervalMs: 0 });
    for (let i = 0; i < 60; i++)
      expect((await s.putMessage(msg(topic, `d${i}-${'w'.repeat(200)}`))).status).toBe('PUT_OK');
    expect(await s.deleteExpiredFiles()).toBe(0); // over 75 %: only expired files go, and none has expired
    used = 91;
    expect((await s.putMessage(msg(topic, 'refused'))).status).toBe('SERVICE_NOT_AVAILABLE');
    used = 87;
    expect((await s.putMessage(msg(topic, 'accepted again'))).status).toBe('PUT_OK');
    // Nothing has expired (72 h), but over 85 % the oldest segments go.
    expect(await s.deleteExpiredFiles()).toBeGreaterThan(0);
    expect(s.getCommitLogMinOffset()).toBeGreaterThan(0);
    expect(s.getMinOffsetInQueue(topic, 0)).toBeGreaterThan(0);
    used = 50;
    expect(await s.deleteExpiredFiles()).toBe(0);
  });
});
