/**
 * The decompressed size of zlib bodies, checked on a worker thread of its own. Inflating a bomb up to the
 * limit is the costly part of checking it, and on the main thread (even with the inflating itself on the
 * thread pool) the output chunks it makes and collects cost other clients' calls their latency. The
 * worker inflates with the limit as its output cap, into one buffer of the limit's size (many small ones
 * would be scattered through the C allocator's heap of the thread, which keeps them after a flood of
 * bombs), and says only whether the body fits; it is started with the first zlib body, does not keep the
 * process alive, and ends after a few idle seconds.
 */
import { Worker } from 'node:worker_threads';

/** The worker's code: CommonJS evaluated as is, so that it needs no file of its own next to this one. */
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { inflateSync } = require('node:zlib');
parentPort.on('message', ({ id, body, limit }) => {
  let error = null;
  try {
    inflateSync(body, { maxOutputLength: limit, chunkSize: limit + 1 });
  } catch (e) {
    error = { code: e && e.code ? String(e.code) : null, message: String(e && e.message) };
  }
  parentPort.postMessage({ id, error });
});
`;

const IDLE_MS = 5000;

interface Pending {
  resolve(): void;
  reject(e: Error): void;
}

let worker: Worker | undefined;
let seq = 0;
const pending = new Map<number, Pending>();
let idleTimer: ReturnType<typeof setTimeout> | undefined;

function failAll(e: Error): void {
  for (const p of pending.values()) p.reject(e);
  pending.clear();
}

function start(): Worker {
  const w = new Worker(WORKER_SOURCE, { eval: true });
  w.unref();
  w.on('message', ({ id, error }: { id: number; error: { code: string | null; message: string } | null }) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (error) p.reject(Object.assign(new Error(error.message), error.code ? { code: error.code } : {}));
    else p.resolve();
    if (pending.size === 0) idleTimer = setTimeout(stop, IDLE_MS).unref();
  });
  w.on('error', (e) => {
    if (worker === w) worker = undefined;
    failAll(e);
  });
  w.on('exit', () => {
    if (worker === w) worker = undefined;
    failAll(new Error('the zlib check worker stopped'));
  });
  return w;
}

function stop(): void {
  idleTimer = undefined;
  if (pending.size > 0 || !worker) return;
  const w = worker;
  worker = undefined;
  void w.terminate();
}

/**
 * Resolves when the zlib body inflates to at most `limit` bytes; rejects with the inflater's error
 * otherwise (code ERR_BUFFER_TOO_LARGE past the limit).
 */
export function checkInflatedSize(body: Uint8Array, limit: number): Promise<void> {
  if (idleTimer) {
    clearTimeout(idleTimer);
    idleTimer = undefined;
  }
  worker ??= start();
  const id = ++seq;
  const w = worker;
  // A copy of the body's own bytes, moved to the worker (cloning the view would copy all of its buffer).
  const copy = Uint8Array.prototype.slice.call(body);
  return new Promise<void>((resolve, reject) => {
    pending.set(id, { resolve, reject });
    w.postMessage({ id, body: copy, limit }, [copy.buffer]);
  });
}
