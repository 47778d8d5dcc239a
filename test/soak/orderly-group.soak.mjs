#!/usr/bin/env node
// Soak: the orderly group scenario (test/support/orderly-group.mjs), long version. For each transport
// (HTTP endpoints, TCP remoting) and each mode (per queue with batches of 3, per key with keyConcurrency
// 8), runs more keys and more rounds of join / join / leave / kill / join than the Jest test, and checks
// per-key order, queue exclusion against the broker's lock grants and samples, and that nothing is lost.
// Uses dist/ (`npm run soak` builds it). Prints a line per case and a `SOAK {json}` line per case.
// Usage: node test/soak/orderly-group.soak.mjs [rounds]   (SOAK_ROUNDS=N also sets the rounds)
import { runOrderlyGroupScenario } from '../support/orderly-group.mjs';

const rounds = Number(process.argv[2] ?? process.env.SOAK_ROUNDS ?? 4);
const only = process.env.ORDERLY_CASE ?? '';
let failed = 0;
for (const transport of ['http', 'tcp'])
  for (const keyConcurrency of [undefined, 8]) {
    const name = `orderly group ${transport} ${keyConcurrency ? `keyConcurrency ${keyConcurrency}` : 'per queue'}`;
    if (!name.includes(only)) continue;
    const started = Date.now();
    let r;
    try {
      r = await runOrderlyGroupScenario({
        transport,
        keyConcurrency,
        batch: keyConcurrency ? 1 : 3,
        keys: 64,
        perRound: 8,
        rounds,
      });
    } catch (err) {
      r = { problems: [String(err?.message ?? err)], sent: 0, deliveries: 0, lost: NaN, redelivered: 0, kills: 0 };
    }
    const secs = ((Date.now() - started) / 1000).toFixed(1);
    const ok = r.problems.length === 0;
    if (!ok) failed++;
    process.stdout.write(
      `${ok ? 'ok  ' : 'FAIL'} ${name}: ${JSON.stringify({ ...r, problems: r.problems.slice(0, 10) })} (${secs} s)\n`,
    );
    const row = {
      scenario: name,
      runs: rounds,
      sent: r.sent,
      acknowledged: r.sent,
      consumed: r.deliveries,
      lost: r.lost,
      duplicates: r.redelivered,
      notes: `${r.kills} kills, ${r.leaves ?? 0} leaves; ${ok ? 'order, exclusion and locks held' : r.problems.length + ' problems'}`,
    };
    process.stdout.write(`SOAK ${JSON.stringify(row)}\n`);
  }
process.exit(failed === 0 ? 0 : 1);
