/**
 * The store's small control files: the lock (one live process per store), the abort marker (present
 * while the store is open: found at open means the last run did not shut down) and the checkpoint
 * (flush and dispatch progress). Byte tables are in docs/storage.md.
 */
import fs, { promises as fsp } from 'node:fs';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { RocketMQError } from '../common/errors.js';
import { ABORT_FILE, CHECKPOINT_FILE, LOCK_FILE } from './layout.js';

/** Another live process (or another open MessageStore in this one) holds the store. */
export class StoreLockedError extends RocketMQError {
  readonly pid: number;
  constructor(storePath: string, pid: number) {
    super('ERR_STORE_LOCKED', `the store ${storePath} is in use by process ${pid} (lock file ${LOCK_FILE})`);
    this.pid = pid;
  }
}

/**
 * The files of a store do not fit the options it is opened with (a different segment size), or a
 * segment is missing between two others. `setting` names the option concerned. Nothing was changed.
 */
export class StoreLayoutError extends RocketMQError {
  readonly setting: string;
  constructor(setting: string, message: string) {
    super('ERR_STORE_LAYOUT', message);
    this.setting = setting;
  }
}

const openInThisProcess = new Set<string>();

/**
 * Takes the lock: creates `lock` holding our pid and the start time of our process. A lock whose
 * process is gone is taken over, and so is one whose pid now belongs to another process (a container
 * restarted as PID 1, a pid reused after a reboot): the start time recorded differs from that pid's.
 * A lock held by a live process (or by this process) throws StoreLockedError. Returns the release function.
 */
export function acquireLock(storePath: string): () => void {
  const real = fs.realpathSync(storePath);
  const file = path.join(storePath, LOCK_FILE);
  if (openInThisProcess.has(real)) throw new StoreLockedError(storePath, process.pid);
  const own = processStartTime(process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx');
      fs.writeSync(fd, own === null ? `${process.pid}\n` : `${process.pid} ${own}\n`);
      fs.closeSync(fd);
      openInThisProcess.add(real);
      let released = false;
      return () => {
        if (released) return;
        released = true;
        openInThisProcess.delete(real);
        fs.rmSync(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
    }
    const [pidText, startText] = readText(file).trim().split(/\s+/);
    const pid = Number.parseInt(pidText ?? '', 10);
    if (Number.isInteger(pid) && pid > 0 && holds(pid, startText)) throw new StoreLockedError(storePath, pid);
    // A stale lock (dead or reused pid, or unreadable): remove it and try again.
    fs.rmSync(file, { force: true });
  }
  throw new StoreLockedError(storePath, -1);
}

function readText(file: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** Whether the process `pid`, started at `startText` (when recorded), still runs. */
function holds(pid: number, startText: string | undefined): boolean {
  // Our own pid in a lock this process does not hold: a previous process that had our pid (PID 1).
  if (pid === process.pid || !isAlive(pid)) return false;
  const current = processStartTime(pid);
  // Without a start time on either side (an old lock, no /proc), only liveness can tell.
  if (startText === undefined || current === null) return true;
  return startText === current;
}

/**
 * The start time of a process in clock ticks since boot (field 22 of /proc/<pid>/stat, Linux), or null
 * where it cannot be read. With the boot id it tells a pid's process apart from a later one.
 */
export function processStartTime(pid: number): string | null {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = fields[19];
    if (start === undefined || !/^\d+$/.test(start)) return null;
    return `${bootId() ?? 'boot'}:${start}`;
  } catch {
    return null;
  }
}

let cachedBootId: string | null | undefined;
function bootId(): string | null {
  if (cachedBootId === undefined) {
    try {
      cachedBootId = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
    } catch {
      cachedBootId = null;
    }
  }
  return cachedBootId;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** True when the abort file exists (the previous run ended without shutdown). Creates it. */
export function markOpen(storePath: string): boolean {
  const file = path.join(storePath, ABORT_FILE);
  const abnormal = fs.existsSync(file);
  fs.writeFileSync(file, `${process.pid}\n`);
  return abnormal;
}

export function markClosed(storePath: string): void {
  fs.rmSync(path.join(storePath, ABORT_FILE), { force: true });
}

/** Flush progress. The three timestamps sit where RocketMQ's StoreCheckpoint keeps them. */
export interface Checkpoint {
  physicMsgTimestamp: number;
  logicsMsgTimestamp: number;
  /** Commit-log bytes below this offset are fsynced. */
  commitLogFlushedOffset: number;
  /** Consume-queue units of every record below this commit-log offset are in their files, fsynced. */
  dispatchedOffset: number;
}

const CHECKPOINT_LENGTH = 44;
const CHECKPOINT_MAGIC = 0x524d5143; // "RMQC"

/** Reads the checkpoint; null when missing or damaged (then recovery checks the whole log). */
export function readCheckpoint(storePath: string): Checkpoint | null {
  let b: Buffer;
  try {
    b = fs.readFileSync(path.join(storePath, CHECKPOINT_FILE));
  } catch {
    return null;
  }
  if (b.length < CHECKPOINT_LENGTH + 8) return null;
  if (b.readInt32BE(CHECKPOINT_LENGTH) !== CHECKPOINT_MAGIC) return null;
  if ((crc32(b.subarray(0, CHECKPOINT_LENGTH)) | 0) !== b.readInt32BE(CHECKPOINT_LENGTH + 4)) return null;
  const n = (p: number): number => Number(b.readBigInt64BE(p));
  return {
    physicMsgTimestamp: n(0),
    logicsMsgTimestamp: n(8),
    commitLogFlushedOffset: n(24),
    dispatchedOffset: n(32),
  };
}

/**
 * Writes the checkpoint atomically (temp file, fsync, rename). Asynchronous on purpose: it runs every
 * second while messages flow, and a synchronous fdatasync would stall the event loop — every send and
 * pull in flight — for as long as the disk takes.
 */
export async function writeCheckpoint(storePath: string, c: Checkpoint): Promise<void> {
  const b = Buffer.alloc(CHECKPOINT_LENGTH + 8);
  b.writeBigInt64BE(BigInt(c.physicMsgTimestamp), 0);
  b.writeBigInt64BE(BigInt(c.logicsMsgTimestamp), 8);
  b.writeBigInt64BE(0n, 16); // RocketMQ: indexMsgTimestamp (no index service here)
  b.writeBigInt64BE(BigInt(c.commitLogFlushedOffset), 24);
  b.writeBigInt64BE(BigInt(c.dispatchedOffset), 32);
  b.writeInt32BE(0, 40);
  b.writeInt32BE(CHECKPOINT_MAGIC, CHECKPOINT_LENGTH);
  b.writeInt32BE(crc32(b.subarray(0, CHECKPOINT_LENGTH)) | 0, CHECKPOINT_LENGTH + 4);
  const file = path.join(storePath, CHECKPOINT_FILE);
  const tmp = `${file}.tmp`;
  const fh = await fsp.open(tmp, 'w');
  try {
    await fh.writeFile(b);
    await fh.datasync();
  } finally {
    await fh.close();
  }
  await fsp.rename(tmp, file);
}
