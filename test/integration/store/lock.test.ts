/**
 * The store lock: a broker killed with SIGKILL (or whose pid now names another process) leaves a lock
 * that the next start takes over; a store held by a live process is never opened by another.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageStore } from '../../../src/store/message-store.js';
import { processStartTime } from '../../../src/store/store-files.js';
import { TINY } from './conformance.js';

const HOLDER = path.join(path.dirname(fileURLToPath(import.meta.url)), '../../support/store-holder-child.mjs');

/** Starts a child holding the store at `dir`; resolves once it has opened it. */
async function holder(dir: string): Promise<ChildProcessWithoutNullStreams> {
  const child = spawn(process.execPath, [HOLDER, dir], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
  await new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.includes('READY')) resolve();
    });
    child.on('exit', (code) => reject(new Error(`holder exited with ${code}: ${err}`)));
  });
  return child;
}

const exited = (c: ChildProcessWithoutNullStreams): Promise<void> =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', () => r()));

describe('store lock', () => {
  let dir: string;
  const children: ChildProcessWithoutNullStreams[] = [];
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-lock-'));
  });
  afterEach(async () => {
    for (const c of children.splice(0)) {
      c.kill('SIGKILL');
      await exited(c);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test('two live processes never share a store; after a SIGKILL the lock is taken over', async () => {
    const child = await holder(dir);
    children.push(child);
    await expect(MessageStore.open({ ...TINY, storePath: dir })).rejects.toMatchObject({
      code: 'ERR_STORE_LOCKED',
      pid: child.pid,
    });
    child.kill('SIGKILL');
    await exited(child);
    expect(fs.existsSync(path.join(dir, 'lock'))).toBe(true);
    const s = await MessageStore.open({ ...TINY, storePath: dir });
    await s.shutdown();
  }, 30_000);

  test('a lock naming our own pid (a container restarted as PID 1) is stale', async () => {
    fs.writeFileSync(path.join(dir, 'lock'), `${process.pid} boot:1\n`);
    const s = await MessageStore.open({ ...TINY, storePath: dir });
    expect(fs.readFileSync(path.join(dir, 'lock'), 'utf8').trim()).toBe(
      `${process.pid} ${processStartTime(process.pid)}`,
    );
    await s.shutdown();
    fs.writeFileSync(path.join(dir, 'lock'), `${process.pid}\n`); // the older format, pid only
    await (await MessageStore.open({ ...TINY, storePath: dir })).shutdown();
  });

  test('a lock whose pid now belongs to another live process (pid reused) is stale', async () => {
    const child = await holder(fs.mkdtempSync(path.join(dir, 'other-')));
    children.push(child);
    const start = processStartTime(child.pid as number);
    expect(start).not.toBeNull();
    // Same pid, another start time: the process that wrote the lock is gone.
    fs.writeFileSync(path.join(dir, 'lock'), `${child.pid} ${start}0\n`);
    await (await MessageStore.open({ ...TINY, storePath: dir })).shutdown();
    // Same pid and start time: held.
    fs.writeFileSync(path.join(dir, 'lock'), `${child.pid} ${start}\n`);
    await expect(MessageStore.open({ ...TINY, storePath: dir })).rejects.toMatchObject({ code: 'ERR_STORE_LOCKED' });
  }, 30_000);
});
