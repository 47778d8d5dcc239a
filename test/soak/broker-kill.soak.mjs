#!/usr/bin/env node
// Soak: broker SIGKILL through the clients, long version of test/integration/broker/broker-kill.test.ts.
// For each flush mode, SOAK_ROUNDS (default 4) runs of 5 kills each: a CLI broker child under a Producer
// (4 senders) and a PushConsumer group is SIGKILLed after every 200 more acknowledged sends and restarted
// on the same store. Pass: lost 0 (acknowledged, never consumed). Needs dist/ (`npm run soak` builds it).
import { brokerKillRun } from '../support/broker-kill.mjs';

const rounds = Number(process.env.SOAK_ROUNDS ?? 4);
const KILLS = 5;
let failed = 0;
for (const [mode, syncFlush] of [
  ['ASYNC_FLUSH', false],
  ['SYNC_FLUSH', true],
]) {
  const t = { runs: 0, sent: 0, acknowledged: 0, consumed: 0, lost: 0, duplicates: 0 };
  for (let round = 1; round <= rounds; round++) {
    const r = await brokerKillRun({ syncFlush, kills: KILLS, killAfterAcks: 200, tag: `s${mode[0]}${round}` });
    console.log(`${mode} round ${round}/${rounds}: ${JSON.stringify(r)} ${r.lost === 0 ? 'ok' : 'FAILED'}`);
    if (r.lost !== 0) failed++;
    t.runs++;
    for (const k of ['sent', 'acknowledged', 'consumed', 'lost', 'duplicates']) t[k] += r[k];
  }
  console.log(
    `SOAK ${JSON.stringify({
      scenario: `broker SIGKILL through the clients (${mode})`,
      ...t,
      notes: `${KILLS} kills per run, each after 200 more acknowledged sends; CLI broker child, Producer with 4 senders, one PushConsumer group; sent counts attempts while the broker was down`,
    })}`,
  );
}
process.exit(failed === 0 ? 0 : 1);
