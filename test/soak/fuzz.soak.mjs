#!/usr/bin/env node
// Soak: the broker fuzz, long version. N fuzzed requests (default 200,000) over every command against an
// in-process broker from dist/ (run `npm run build` first), 32 at a time over 16 keep-alive connections.
// Pass: not one HTTP 5xx, no transport error other than abandoned holding calls, the broker serves a send
// and a pull afterwards, and its heap after a forced GC is within 48 MiB of the heap after a 5,000-request
// warm-up. Prints progress and a last line `RESULT {json}` (a docs/reliability.md row).
// Usage: node test/soak/fuzz.soak.mjs [N] [--seed S]
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request } from 'undici';
import { Broker } from '../../dist/broker/index.js';
import { COMMANDS, decodeFrame, encodeFrame } from '../../dist/protocol/index.js';
import { createFuzzer, describeCommands, seededRandom } from '../support/fuzz-requests.mjs';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const heapMiB = () => {
  gc();
  return process.memoryUsage().heapUsed / 2 ** 20;
};

const total = Number(process.argv[2] ?? 200_000);
const seedAt = process.argv.indexOf('--seed');
const seed = seedAt > 0 ? Number(process.argv[seedAt + 1]) : Date.now() % 1_000_000;
const HOLDING = /PULL_MESSAGE|WATCH_CONSUMER_IDS/;

const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-fuzz-soak-'));
const broker = await Broker.start({ storePath, port: 0 });
const topics = [...Array.from({ length: 16 }, (_, i) => `FZ_${i}`), 'TBW102', '%RETRY%fz', 'SCHEDULE_TOPIC_XXXX'];
const groups = [...Array.from({ length: 16 }, (_, i) => `fzg_${i}`), 'TBW102', 'x'.repeat(300)];
const next = createFuzzer({
  commands: describeCommands(COMMANDS),
  encodeFrame,
  random: seededRandom(seed),
  topics,
  groups,
});
const agent = new Agent({ connections: 16, pipelining: 1 });
const byStatus = {};
const problems = [];
let sent = 0;
let abandoned = 0;

async function fire(n) {
  let left = n;
  const worker = async () => {
    while (left-- > 0) {
      const req = next();
      sent++;
      try {
        const res = await request(broker.address + req.path, {
          method: req.method,
          body: req.body,
          headers: { 'content-type': 'application/x-rocketmq-command' },
          dispatcher: agent,
          signal: globalThis.AbortSignal.timeout(HOLDING.test(req.command) ? 1500 : 30_000),
        });
        const body = Buffer.from(await res.body.arrayBuffer());
        byStatus[res.statusCode] = (byStatus[res.statusCode] ?? 0) + 1;
        if (res.statusCode >= 500) problems.push(`${req.command}: HTTP ${res.statusCode} ${body}`);
        if (res.statusCode === 200 && typeof decodeFrame(body).header.code !== 'number')
          problems.push(`${req.command}: a 200 without a response code`);
      } catch (e) {
        if ((e.name === 'TimeoutError' || e.code === 'UND_ERR_ABORTED') && HOLDING.test(req.command)) abandoned++;
        else problems.push(`${req.command}: ${e.name} ${e.code ?? ''} ${e.message}`);
      }
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
}

const t0 = Date.now();
await fire(5000);
const baseline = heapMiB();
for (let done = 0; done < total;) {
  const step = Math.min(20_000, total - done);
  await fire(step);
  done += step;
  console.log(
    `${done}/${total} requests, ${Math.round((Date.now() - t0) / 1000)} s, heap ${heapMiB().toFixed(1)} MiB (baseline ${baseline.toFixed(1)}), problems ${problems.length}`,
  );
}
const grewMiB = heapMiB() - baseline;
const after = await request(`${broker.address}/v1/GET_MAX_OFFSET`, {
  method: 'POST',
  body: encodeFrame({ topic: 'FZ_0', queueId: 0 }),
  dispatcher: agent,
});
const stillServing =
  after.statusCode === 200 && decodeFrame(Buffer.from(await after.body.arrayBuffer())).header.code === 0;
await agent.close();
await broker.shutdown();
fs.rmSync(storePath, { recursive: true, force: true });

const ok = problems.length === 0 && grewMiB < 48 && stillServing;
for (const p of problems.slice(0, 20)) console.log(`problem: ${p}`);
console.log(
  `RESULT ${JSON.stringify({
    scenario: 'broker fuzz, every command',
    runs: 1,
    sent,
    acknowledged: byStatus[200] ?? 0,
    consumed: null,
    lost: 0,
    duplicates: null,
    notes: `seed ${seed}; HTTP ${JSON.stringify(byStatus)}; 5xx ${Object.keys(byStatus).filter((s) => s >= 500).length}; abandoned holds ${abandoned}; heap +${grewMiB.toFixed(1)} MiB; ${Math.round((Date.now() - t0) / 1000)} s; ${ok ? 'ok' : 'FAILED'}`,
  })}`,
);
process.exit(ok ? 0 : 1);
