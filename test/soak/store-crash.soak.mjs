// Long version of test/integration/store/crash.test.ts: SIGKILL of a process appending to the store
// under load, after a random number of acknowledged appends, SOAK_ROUNDS times (default 30) on one
// store, alternating ASYNC_FLUSH and SYNC_FLUSH. Every acknowledged append must be read back, byte for
// byte, through its consume queue. Needs dist/ (`npm run soak` builds it).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runCrashRound } from '../support/store-crash.mjs';

const rounds = Number(process.env.SOAK_ROUNDS ?? 30);
const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-soak-crash-'));
let failed = 0;
const total = {
  async: { runs: 0, acknowledged: 0, consumed: 0, lost: 0, duplicates: 0 },
  sync: { runs: 0, acknowledged: 0, consumed: 0, lost: 0, duplicates: 0 },
};
try {
  for (let i = 1; i <= rounds; i++) {
    const mode = i % 2 === 0 ? 'sync' : 'async';
    const r = await runCrashRound(dir, { mode });
    const t = total[mode];
    t.runs++;
    t.acknowledged += r.acknowledged;
    t.consumed += r.readBack;
    t.lost += r.acknowledged - r.readBack;
    t.duplicates += r.duplicates;
    const verdict = r.problems.length === 0 ? 'ok' : `FAILED: ${r.problems.slice(0, 5).join('; ')}`;
    console.log(`round ${i}/${rounds} ${mode}: killed after ${r.acknowledged} acknowledged appends, ${verdict}`);
    if (r.problems.length > 0) failed++;
  }
} finally {
  fs.rmSync(dir, { recursive: true, force: true });
}
for (const [mode, t] of Object.entries(total)) {
  console.log(
    `SOAK ${JSON.stringify({
      scenario: `store: SIGKILL under load (${mode === 'sync' ? 'SYNC_FLUSH' : 'ASYNC_FLUSH'})`,
      runs: t.runs,
      sent: 'n/a',
      acknowledged: t.acknowledged,
      consumed: t.consumed,
      lost: t.lost,
      duplicates: t.duplicates,
      notes:
        'store API in a child process, 64 appends in flight, 4 queues, 64 KiB segments; reopened and read back after each kill',
    })}`,
  );
}
process.exit(failed === 0 ? 0 : 1);
