#!/usr/bin/env node
// Page faults and latency of the store's put path at a steady rate: what appends pay for memory they
// touch for the first time (the read cache's ring, on its first pass).
//
//   npm run build && node bench/store-put-faults.mjs [--messages 6000]
//   BENCH_DIST=/other/checkout/dist  runs another build (A/B).
//
// Opens a MessageStore in a temp dir, lets it idle 1 s (its background work starts), then puts MESSAGES
// messages of 1 KiB, two at a time with 1 ms between pairs (~1,500 msg/s), and prints the minor page
// faults taken inside the puts (from the call to its acknowledgement) and in the whole process, the
// process CPU, and put latency p50 / p99 / max.
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.env.BENCH_DIST ?? path.join(root, 'dist'));
const i = process.argv.indexOf('--messages');
const total = i >= 0 ? Number(process.argv[i + 1]) : 6000;

const { MessageStore } = await import(pathToFileURL(path.join(dist, 'store/message-store.js')).href);
const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-put-faults-'));
const store = await MessageStore.open({ storePath: dir });
try {
  await sleep(1000);
  const body = Buffer.alloc(1024, 1);
  const bornHost = { ip: '127.0.0.1', port: 1 };
  const faults = () => process.resourceUsage().minorPageFault;
  const lat = [];
  let inPuts = 0;
  const r0 = process.resourceUsage();
  for (let n = 0; n < total; n++) {
    const f0 = faults();
    const t0 = performance.now();
    await store.putMessage({
      topic: 'PutFaults',
      queueId: n & 7,
      flag: 0,
      body,
      properties: { UNIQ_KEY: `k${n}` },
      sysFlag: 0,
      bornTimestamp: Date.now(),
      bornHost,
      reconsumeTimes: 0,
      preparedTransactionOffset: 0,
    });
    lat.push(performance.now() - t0);
    inPuts += faults() - f0;
    if (n % 2 === 1) await sleep(1);
  }
  const r1 = process.resourceUsage();
  lat.sort((a, b) => a - b);
  const pct = (p) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))].toFixed(3);
  const cpuMs = (r1.userCPUTime + r1.systemCPUTime - r0.userCPUTime - r0.systemCPUTime) / 1000;
  console.log(
    `${dist}: ${total} puts: page faults inside puts ${inPuts}, in the process ${r1.minorPageFault - r0.minorPageFault}; ` +
      `CPU ${cpuMs.toFixed(0)} ms; put p50 ${pct(0.5)} p99 ${pct(0.99)} max ${lat.at(-1).toFixed(2)} ms`,
  );
} finally {
  await store.shutdown();
  rmSync(dir, { recursive: true, force: true });
}
