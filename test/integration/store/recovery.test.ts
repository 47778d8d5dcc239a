/**
 * Recovery of the file store: torn tail, flipped CRC byte, a crash without shutdown (abort file),
 * missing consume queues, consume-queue units past the commit log, the lock and the control files.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { decodeMessages } from '../../../src/common/codec/index.js';
import type { Logger } from '../../../src/common/logger.js';
import { MessageStore } from '../../../src/store/message-store.js';
import type { MessageStoreOptions } from '../../../src/store/options.js';
import type { PutMessageResult } from '../../../src/store/types.js';
import { SEGMENT, TINY, msg, uniqueTopic } from './conformance.js';

const segFile = (dir: string, offset: number): string =>
  path.join(dir, 'commitlog', String(offset - (offset % SEGMENT)).padStart(20, '0'));

function spyLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return {
    warnings,
    debug: () => {},
    info: () => {},
    warn: (_o: unknown, m?: string) => warnings.push(m ?? ''),
    error: (_o: unknown, m?: string) => warnings.push(m ?? ''),
  };
}

/** A pid that belonged to a process that has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
  return Number(r.stdout);
}

describe('file store recovery', () => {
  let dir: string;
  const stores: MessageStore[] = [];
  const open = async (extra: Partial<MessageStoreOptions> = {}, at = dir): Promise<MessageStore> => {
    const s = await MessageStore.open({ ...TINY, ...extra, storePath: at });
    stores.push(s);
    return s;
  };
  const fill = async (s: MessageStore, topic: string, n: number): Promise<PutMessageResult[]> => {
    const out: PutMessageResult[] = [];
    for (let i = 0; i < n; i++)
      out.push(await s.putMessage(msg(topic, `m${i}-${'q'.repeat(i % 40)}`, { queueId: i % 2 })));
    return out;
  };
  const readAll = async (s: MessageStore, topic: string, queueId: number): Promise<number[]> => {
    const seen: number[] = [];
    let offset = s.getMinOffsetInQueue(topic, queueId);
    while (offset < s.getMaxOffsetInQueue(topic, queueId)) {
      const g = await s.getMessage('G', topic, queueId, offset, 32);
      expect(g.status).toBe('FOUND');
      for (const m of decodeMessages(Buffer.concat(g.messages), { checkCRC: true })) seen.push(m.queueOffset);
      offset = g.nextBeginOffset;
    }
    return seen;
  };

  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-recover-'));
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.shutdown();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('a clean shutdown leaves a checkpoint, no abort file, no lock and no open descriptor', async () => {
    const s = await open();
    expect(fs.existsSync(path.join(dir, 'abort'))).toBe(true);
    expect(fs.readFileSync(path.join(dir, 'lock'), 'utf8').split(' ')[0]).toBe(String(process.pid));
    await fill(s, uniqueTopic(), 50);
    await s.shutdown();
    expect(fs.existsSync(path.join(dir, 'abort'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'lock'))).toBe(false);
    expect(fs.existsSync(path.join(dir, 'checkpoint'))).toBe(true);
    const real = fs.realpathSync(dir);
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
    fs.truncateSync(segFile(dir, last.physicalOffset), (last.physicalOffset % SEGMENT) + 30);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(log.warnings.some((w) => /torn or corrupt tail/.test(w))).toBe(true);
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
    const file = segFile(dir, victim.physicalOffset);
    const fd = fs.openSync(file, 'r+');
    const b = Buffer.alloc(1);
    const at = (victim.physicalOffset % SEGMENT) + victim.wroteBytes - 30; // inside the body
    fs.readSync(fd, b, 0, 1, at);
    b[0] = (b[0] as number) ^ 0xff;
    fs.writeSync(fd, b, 0, 1, at);
    fs.closeSync(fd);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(log.warnings).toContain('commit log: damaged record skipped; the records after it are kept');
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
    fs.rmSync(segFile(dir, lastStart));
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
      fs.cpSync(dir, crashed, { recursive: true });
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
    fs.rmSync(path.join(dir, 'consumequeue'), { recursive: true });
    const again = await open();
    expect(again.getMaxOffsetInQueue(topic, 0)).toBe(25);
    expect(await readAll(again, topic, 0)).toEqual([...Array(25).keys()]);
  });

  test('a lock held by a live process is refused with ERR_STORE_LOCKED; a stale one is taken over', async () => {
    fs.writeFileSync(path.join(dir, 'lock'), `${process.ppid}\n`);
    await expect(open()).rejects.toMatchObject({ code: 'ERR_STORE_LOCKED', pid: process.ppid });
    fs.writeFileSync(path.join(dir, 'lock'), `${deadPid()}\n`);
    const s = await open();
    expect(fs.readFileSync(path.join(dir, 'lock'), 'utf8').split(' ')[0]).toBe(String(process.pid));
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
