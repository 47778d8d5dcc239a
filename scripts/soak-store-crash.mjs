#!/usr/bin/env node
// Soak test of the store's crash safety: runs the crash round of test/support/store-crash.mjs N times
// (default 20) on one store directory — a child appends under load, is SIGKILLed after a random number of acknowledged appends,
// the store is reopened and every acknowledged append is checked byte for byte. Alternates ASYNC_FLUSH
// and SYNC_FLUSH. Needs the compiled store: run `npm run build` first.
// Usage: node scripts/soak-store-crash.mjs [N] [--keep]
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCrashRound } from '../test/support/store-crash.mjs';

const rounds = Number(process.argv[2] ?? 20);
const keep = process.argv.includes('--keep');
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-soak-'));
let failed = 0;
let acknowledged = 0;
for (let i = 1; i <= rounds; i++) {
  const mode = i % 3 === 0 ? 'sync' : 'async';
  const r = await runCrashRound(dir, { mode });
  acknowledged += r.acknowledged;
  const verdict = r.problems.length === 0 ? 'ok' : `FAILED: ${r.problems.slice(0, 5).join('; ')}`;
  console.log(
    `round ${i}/${rounds} ${mode} killed after ${r.killAfterAcks} acks: ${r.acknowledged} acknowledged, log ${r.commitLogMax} bytes, ${verdict}`,
  );
  if (r.problems.length > 0) failed++;
}
console.log(`${rounds - failed}/${rounds} rounds ok, ${acknowledged} acknowledged appends checked (store: ${dir})`);
if (!keep || failed === 0) fs.rmSync(dir, { recursive: true, force: true });
process.exit(failed === 0 ? 0 : 1);
