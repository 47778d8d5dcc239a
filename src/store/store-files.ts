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

const openInThisProcess = new Set<string>();

/**
 * Takes the lock: creates `lock` holding our pid. A lock left by a dead process is taken over; one held
 * by a live process (or by this process) throws StoreLockedError. Returns the release function.
 */
export function acquireLock(storePath: string): () => void {
  const real = fs.realpathSync(storePath);
  const file = path.join(storePath, LOCK_FILE);
  if (openInThisProcess.has(real)) throw new StoreLockedError(storePath, process.pid);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = fs.openSync(file, 'wx');
      fs.writeSync(fd, `${process.pid}\n`);
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
    const pid = Number.parseInt(readText(file), 10);
    if (Number.isInteger(pid) && pid > 0 && isAlive(pid)) throw new StoreLockedError(storePath, pid);
    // A stale lock (dead or unreadable pid): remove it and try again.
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

function isAlive(pid: number): boolean {
  if (pid === process.pid) return true;
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
 * second while messages flow, and a synchronous fdatasync stalled the event loop — every send and pull
 * in flight — for as long as the disk took (measured up to ~40 ms).
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
