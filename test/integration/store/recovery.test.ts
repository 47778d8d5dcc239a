/**
 * Recovery of the file store: torn tail, flipped CRC byte, a crash without shutdown (abort file),
 * missing consume queues, consume-queue units past the commit log, the lock and the control files.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { MessageStore } from '../../../src/store/message-store.js';
import type { PutMessageResult } from '../../../src/store/types.js';
import {
  drainQueue,
  fillAlternating as fill,
  flip,
  segFile,
  spyLogger,
  useTinyStores,
} from '../../support/store-fixture.js';
import { SEGMENT, msg, uniqueTopic } from './conformance.js';

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('file store recovery', () => {
  const stores = useTinyStores('rmq-recover-');
  const open = stores.open;
  /** The queue offsets a consumer reads from the queue; every pull must answer FOUND. */
  const readAll = async (s: MessageStore, topic: string, queueId: number): Promise<number[]> =>
    (await drainQueue(s, topic, queueId, true)).map((m) => m.queueOffset);
  const warningsOf = (log: ReturnType<typeof spyLogger>): string[] => log.warnings.map((w) => w.msg);

  test('a clean shutdown leaves a checkpoint, no abort file, no lock and no open descriptor', async () => {
    const s = await open();
    expect(fs.existsSync(path.join(stores.dir, 'abort'))).toBe(true);
    expect(fs.readFileSync(path.join(stores.dir, 'lock'), 'utf8').split(' ')[0]).toBe(String(process.pid));
    await fill(s, uniqueTopic(), 50);
    await s.shutdown();
    expect(fs.existsSync(path.join(stores.dir, 'abort'))).toBe(false);
    expect(fs.existsSync(path.join(stores.dir, 'lock'))).toBe(false);
    expect(fs.existsSync(path.join(stores.dir, 'checkpoint'))).toBe(true);
    const real = fs.realpathSync(stores.dir);
    const fds = fs.readdirSync('/proc/self/fd').map((fd) => {
      try {
        return fs.readlinkSync(`/proc/self/fd/${fd}`);
      } catch {
        return '';
      }
    });
    expect(fds.filter((p) => p.startsWith(real))).toEqual([]);
  });

  test('a torn tail (a record cut short) is cut off and logged; appends continue there', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 40);
    await s.shutdown();
    const last = rs.at(-1) as PutMessageResult;
    fs.truncateSync(segFile(stores.dir, last.physicalOffset), (last.physicalOffset % SEGMENT) + 30);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(warningsOf(log).some((w) => /torn or corrupt tail/.test(w))).toBe(true);
    expect(again.getCommitLogMaxOffset()).toBe(last.physicalOffset);
    expect(again.getMaxOffsetInQueue(topic, 1)).toBe(19);
    expect(await readAll(again, topic, 1)).toEqual([...Array(19).keys()]);
    expect(await readAll(again, topic, 0)).toEqual([...Array(20).keys()]);
    const next = await again.putMessage(msg(topic, 'replacement', { queueId: 1 }));
    expect(next).toMatchObject({ physicalOffset: last.physicalOffset, queueOffset: 19 });
  });

  test('a flipped CRC byte skips only the damaged record: it is never served, everything after it is kept', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 40);
    await s.shutdown();
    const victim = rs[36] as PutMessageResult;
    const file = segFile(stores.dir, victim.physicalOffset);
    flip(file, (victim.physicalOffset % SEGMENT) + victim.wroteBytes - 30); // inside the body
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(warningsOf(log)).toContain('commit log: damaged record skipped; the records after it are kept');
    expect(again.getCommitLogMaxOffset()).toBe(s.getCommitLogMaxOffset());
    expect(await again.lookMessageByOffset(victim.physicalOffset)).toBeNull();
    expect(await readAll(again, topic, 0)).toEqual([...Array(20).keys()].filter((q) => q !== 18));
    expect(await readAll(again, topic, 1)).toEqual([...Array(20).keys()]);
  });

  test('a whole missing tail segment: consume-queue units past the commit log are cut', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 80);
    await s.shutdown();
    const last = rs.at(-1) as PutMessageResult;
    const lastStart = last.physicalOffset - (last.physicalOffset % SEGMENT);
    fs.rmSync(segFile(stores.dir, lastStart));
    const again = await open();
    expect(again.getCommitLogMaxOffset()).toBe(lastStart);
    const kept = rs.filter((r) => r.physicalOffset < lastStart).length;
    expect(again.getMaxOffsetInQueue(topic, 0) + again.getMaxOffsetInQueue(topic, 1)).toBe(kept);
    expect((await readAll(again, topic, 0)).length + (await readAll(again, topic, 1)).length).toBe(kept);
  });

  test('after a crash (abort file, stale lock) everything written is recovered and re-dispatched', async () => {
    const topic = uniqueTopic();
    // Long flush intervals: nothing is fsynced, no consume-queue unit or checkpoint reaches the disk.
    const s = await open({ flushIntervalCommitLogMs: 3_600_000, flushIntervalConsumeQueueMs: 3_600_000 });
    const rs = await fill(s, topic, 60);
    // "Crash": copy the store as the page cache holds it now, while it is open.
    const crashed = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-crashed-'));
    try {
      fs.cpSync(stores.dir, crashed, { recursive: true });
      expect(fs.existsSync(path.join(crashed, 'abort'))).toBe(true);
      fs.writeFileSync(path.join(crashed, 'lock'), `${deadPid()}\n`);
      const log = spyLogger();
      const again = await open({ logger: log }, crashed);
      expect(again.getCommitLogMaxOffset()).toBe(s.getCommitLogMaxOffset());
      expect(again.getMaxOffsetInQueue(topic, 0)).toBe(30);
      expect(await readAll(again, topic, 1)).toEqual([...Array(30).keys()]);
      const r = rs[41] as PutMessageResult;
      expect((await again.lookMessageByMsgId(r.msgId))?.queueOffset).toBe(r.queueOffset);
      expect((await again.putMessage(msg(topic, 'more'))).queueOffset).toBe(30);
      await again.shutdown();
    } finally {
      fs.rmSync(crashed, { recursive: true, force: true });
    }
  });

  test('missing consume queues are rebuilt from the commit log', async () => {
    const topic = uniqueTopic();
    const s = await open();
    await fill(s, topic, 50);
    await s.shutdown();
    fs.rmSync(path.join(stores.dir, 'consumequeue'), { recursive: true });
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(warningsOf(log)).toContain('consume queues missing: rebuilding them from the commit log');
    expect(again.getMaxOffsetInQueue(topic, 0)).toBe(25);
    expect(await readAll(again, topic, 0)).toEqual([...Array(25).keys()]);
  });

  test('an empty store reopens without a warning: no consume queue is missing when the commit log is empty', async () => {
    const s = await open();
    await s.shutdown();
    expect(fs.existsSync(path.join(stores.dir, 'checkpoint'))).toBe(true);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(warningsOf(log)).toEqual([]);
    expect(again.getCommitLogMaxOffset()).toBe(0);
    expect((await again.putMessage(msg(uniqueTopic(), 'first'))).status).toBe('PUT_OK');
  });

  test('a lock held by a live process is refused with ERR_STORE_LOCKED; a stale one is taken over', async () => {
    fs.writeFileSync(path.join(stores.dir, 'lock'), `${process.ppid}\n`);
    await expect(open()).rejects.toMatchObject({ code: 'ERR_STORE_LOCKED', pid: process.ppid });
    fs.writeFileSync(path.join(stores.dir, 'lock'), `${deadPid()}\n`);
    const s = await open();
    expect(fs.readFileSync(path.join(stores.dir, 'lock'), 'utf8').split(' ')[0]).toBe(String(process.pid));
    await s.shutdown();
  });

  test('retention survives a reopen: the min offsets stay where retention moved them', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 100);
    await s.deleteExpiredFiles(Date.now() + 100 * 3_600_000);
    const min0 = s.getMinOffsetInQueue(topic, 0);
    expect(min0).toBeGreaterThan(0);
    await s.shutdown();
    const again = await open();
    expect(again.getCommitLogMinOffset()).toBe(s.getCommitLogMinOffset());
    expect(again.getMinOffsetInQueue(topic, 0)).toBe(min0);
    expect(await again.getMessage('G', topic, 0, 0, 32)).toMatchObject({
      status: 'OFFSET_TOO_SMALL',
      nextBeginOffset: min0,
    });
    expect((await readAll(again, topic, 0)).at(-1)).toBe((rs.at(-2) as PutMessageResult).queueOffset);
  });
});
