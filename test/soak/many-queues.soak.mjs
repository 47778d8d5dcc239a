#!/usr/bin/env node
// Soak: many queues on one broker, long version (the Jest test holds 15 s). Over HTTP and TCP: one
// member holds 1,000 queues for 60 s while messages keep coming (no call may time out, no eviction),
// then a second member joins and the queues split cleanly (duplicates bounded by what was in flight).
// Then a group holding 512 queues across two processes for 60 s. Uses dist/ (run `npm run build`).
// Usage: node test/soak/many-queues.soak.mjs [holdMs]
import { IN_FLIGHT_BOUND, runManyQueues, runSplitAcrossProcesses } from '../support/many-queues.mjs';

const holdMs = Number(process.argv[2] ?? 60_000);
const log = (l) => process.stdout.write(`${l}\n`);
let failed = false;

/** Prints the soak row of one scenario; `bad` lists what failed. */
function report(scenario, r, bad, note) {
  if (bad.length) failed = true;
  const row = {
    scenario,
    runs: 1,
    sent: r.sent,
    acknowledged: r.sent,
    consumed: r.delivered,
    lost: r.sent - r.delivered,
    duplicates: r.duplicates,
    notes: bad.length ? `FAILED: ${bad.join('; ')}` : note,
  };
  process.stdout.write(`SOAK ${JSON.stringify(row)}\n`);
}

for (const transport of ['http', 'tcp']) {
  const r = await runManyQueues({ transport, queues: 1000, holdMs, log });
  const bad = [];
  if (r.problems.length) bad.push(`${r.problems.length} timeouts/heartbeat failures (${r.problems[0]})`);
  if (r.pullErrors.length) bad.push(`${r.pullErrors.length} unreachable pulls`);
  if (r.missing.length) bad.push(`evicted at ${r.missing.length} checks`);
  if (r.removedBeforeJoin) bad.push('queues taken before the join');
  if (r.split[0] !== 500 || r.split[1] !== 500) bad.push(`split ${r.split.join('/')}`);
  if (r.delivered !== r.sent) bad.push(`${r.sent - r.delivered} lost`);
  if (r.duplicates > IN_FLIGHT_BOUND) bad.push(`${r.duplicates} duplicates > ${IN_FLIGHT_BOUND}`);
  report(
    `1,000 queues one broker, ${transport}, ${holdMs / 1000} s held, then split`,
    r,
    bad,
    `ready ${r.readyA} / ${r.readyB} ms; split ${r.split.join('/')}`,
  );
}

for (const transport of ['http', 'tcp']) {
  const r = await runSplitAcrossProcesses({ transport, queues: 512, holdMs, log });
  const problems = r.members.flatMap((m) => m.problems).filter((p) => /timed out|heartbeat failed/.test(p));
  const bad = [];
  if (r.held[0] !== 256 || r.held[1] !== 256) bad.push(`held ${r.held.join('/')}`);
  if (r.missing.length) bad.push(`evicted at ${r.missing.length} checks`);
  if (problems.length) bad.push(`${problems.length} timeouts (${problems[0]})`);
  if (r.delivered !== r.sent) bad.push(`${r.sent - r.delivered} lost`);
  if (r.duplicates) bad.push(`${r.duplicates} duplicates`);
  report(`512 queues across two processes, ${transport}, ${holdMs / 1000} s`, r, bad, `held ${r.held.join('/')}`);
}
process.exit(failed ? 1 : 0);
