// Message store: append of 1 KiB messages (ASYNC_FLUSH and SYNC_FLUSH, many appends in flight),
// getMessage of 32-message batches from a hot store and from disk (no read cache), and recovery
// after a SIGKILL of a process that wrote a 1 GiB commit log (from the checkpoint, and with no checkpoint: a full scan and rebuild).
// Imports the compiled package (npm run build). One line per figure: name, value, unit.
// Env: BENCH_STORE_RECOVERY_MIB (default 1024) sizes the recovery log; 0 skips it.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { MessageStore } from '../dist/store/index.js';

const BODY = Buffer.alloc(1024, 97);
const message = (i, body = BODY) => ({
  topic: 'BenchTopic',
  queueId: i % 8,
  flag: 0,
  body,
  properties: { TAGS: 'TagA', KEYS: `k${i}` },
  sysFlag: 0,
  bornTimestamp: Date.now(),
  bornHost: { ip: '127.0.0.1', port: 40000 },
  reconsumeTimes: 0,
  preparedTransactionOffset: 0,
});

async function appendMany(store, total, concurrency, body = BODY) {
  let i = 0;
  const worker = async () => {
    while (i < total) {
      const r = await store.putMessage(message(i++, body));
      if (r.status !== 'PUT_OK') throw new Error(r.status);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

const tmp = (p) => fs.mkdtempSync(path.join(os.tmpdir(), p));
const print = (name, value, unit) => console.log(`${name} ${value} ${unit}`);

async function appendBench() {
  const dir = tmp('rmq-bench-store-');
  try {
    const store = await MessageStore.open({ storePath: dir });
    // Warm-up: past the 128 MiB read cache once, so the figure is the steady state (no first-touch page faults).
    await appendMany(store, 130_000, 512);
    const n = 200_000;
    let t = performance.now();
    await appendMany(store, n, 512);
    print('store.append.async.1KiB', Math.round(n / ((performance.now() - t) / 1000)), 'msg/s');

    // getMessage from the hot store (the newest 3200 messages of each of 8 queues): 32-message batches.
    const perQueue = store.getMaxOffsetInQueue('BenchTopic', 0);
    const from = perQueue - 3200;
    let got = 0;
    t = performance.now();
    while (performance.now() - t < 2000) {
      for (let q = 0; q < 8; q++) {
        for (let off = from; off + 32 <= perQueue; off += 32) {
          const r = await store.getMessage('G', 'BenchTopic', q, off, 32);
          got += r.messageCount;
        }
      }
    }
    print('store.getMessage.hot.32batch', Math.round(got / ((performance.now() - t) / 1000)), 'msg/s');
    await store.shutdown();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }

  // getMessage from disk: no read cache, so every record (and every consume-queue unit of an older
  // file) is read from the file, asynchronously. CPU per message counts the read threads too.
  const cdir = tmp('rmq-bench-store-cold-');
  try {
    const store = await MessageStore.open({ storePath: cdir, readCacheSizeBytes: 0 });
    await appendMany(store, 40_000, 256);
    const perQueue = store.getMaxOffsetInQueue('BenchTopic', 0);
    let got = 0;
    const t = performance.now();
    const cpu = process.cpuUsage();
    while (performance.now() - t < 2000) {
      for (let q = 0; q < 8; q++) {
        for (let off = 0; off + 32 <= perQueue; off += 32)
          got += (await store.getMessage('G', 'BenchTopic', q, off, 32)).messageCount;
      }
    }
    const used = process.cpuUsage(cpu);
    print('store.getMessage.cold.32batch', Math.round(got / ((performance.now() - t) / 1000)), 'msg/s');
    print('store.getMessage.cold.cpu_per_message', ((used.user + used.system) / got).toFixed(2), 'us/msg');
    await store.shutdown();
  } finally {
    fs.rmSync(cdir, { recursive: true, force: true });
  }

  const sdir = tmp('rmq-bench-store-sync-');
  try {
    const store = await MessageStore.open({ storePath: sdir, flushDiskType: 'SYNC_FLUSH' });
    const n = 30_000;
    const t = performance.now();
    await appendMany(store, n, 256);
    print('store.append.sync.1KiB.256inflight', Math.round(n / ((performance.now() - t) / 1000)), 'msg/s');
    const t1 = performance.now();
    for (let i = 0; i < 300; i++) await store.putMessage(message(i));
    print('store.append.sync.1KiB.latency.sequential', ((performance.now() - t1) / 300).toFixed(2), 'ms');
    await store.shutdown();
  } finally {
    fs.rmSync(sdir, { recursive: true, force: true });
  }
}

/** Child: appends 4 KiB messages until the log passes `targetBytes`, then waits to be killed. */
async function child(dir, targetBytes) {
  const store = await MessageStore.open({ storePath: dir });
  const body = Buffer.alloc(4096, 98);
  let i = 0;
  const worker = async () => {
    while (store.getCommitLogMaxOffset() < targetBytes) await store.putMessage(message(i++, body));
  };
  await Promise.all(Array.from({ length: 256 }, worker));
  process.stdout.write('FULL\n');
  // Keep appending (under load) until the parent kills us.
  for (;;) await Promise.all(Array.from({ length: 64 }, () => store.putMessage(message(i++, body))));
}

async function recoveryBench(mib) {
  const dir = tmp('rmq-bench-recovery-');
  try {
    const self = fileURLToPath(import.meta.url);
    const proc = spawn(process.execPath, [self, '--child', dir, String(mib * 1024 * 1024)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    proc.stdout.on('data', (d) => (out += d));
    const exited = new Promise((r) => proc.on('exit', r));
    while (!out.includes('FULL') && proc.exitCode === null) await sleep(20);
    await sleep(100);
    proc.kill('SIGKILL');
    await exited;
    let t = performance.now();
    let store = await MessageStore.open({ storePath: dir });
    const size = store.getCommitLogMaxOffset();
    print(`store.recovery.afterKill.${Math.round(size / 1048576)}MiB`, Math.round(performance.now() - t), 'ms');
    await store.shutdown();
    // No checkpoint and no consume queues: every record is verified (size, magic, CRC) and re-dispatched.
    fs.rmSync(path.join(dir, 'checkpoint'));
    fs.rmSync(path.join(dir, 'consumequeue'), { recursive: true });
    t = performance.now();
    store = await MessageStore.open({ storePath: dir });
    print(
      `store.recovery.fullScanAndRebuild.${Math.round(size / 1048576)}MiB`,
      Math.round(performance.now() - t),
      'ms',
    );
    await store.shutdown();
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--child') {
  await child(process.argv[3], Number(process.argv[4]));
} else {
  await appendBench();
  const mib = Number(process.env.BENCH_STORE_RECOVERY_MIB ?? 1024);
  if (mib > 0) await recoveryBench(mib);
}
