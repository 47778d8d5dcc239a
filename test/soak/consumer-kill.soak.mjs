#!/usr/bin/env node
// Soak: consumer SIGKILL with takeover, long version. Each round (default 10) starts a broker from dist/
// (run `npm run build` first), two push consumers of one group (one in a child process, one here), sends
// 1,000 messages while they consume, SIGKILLs the child after it has consumed a random 50-400 of them, and
// waits until the survivor holds every queue and every message sent was consumed by one of the two.
// Pass: lost 0 in every round. Prints a line per round and `RESULT {json}` (a docs/reliability.md row).
// Usage: node test/soak/consumer-kill.soak.mjs [rounds]
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Broker } from '../../dist/broker/index.js';
import { Producer, PushConsumer } from '../../dist/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '../../dist/index.js');
const rounds = Number(process.argv[2] ?? 10);

async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function spawnConsumer(endpoints, group, topic) {
  const script = `
    const { PushConsumer } = await import(${JSON.stringify(dist)});
    const c = new PushConsumer({ endpoints: ${JSON.stringify(endpoints)}, consumerGroup: ${JSON.stringify(group)},
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' });
    c.subscribe(${JSON.stringify(topic)}, '*');
    c.registerMessageListener(async (msgs) => {
      await new Promise((r) => setTimeout(r, 2));
      for (const m of msgs) process.stdout.write('consumed ' + m.body.toString() + '\\n');
      return 'CONSUME_SUCCESS';
    });
    await c.start();
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const consumed = [];
  let partial = '';
  child.stdout.on('data', (d) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.startsWith('consumed ')) consumed.push(l.slice(9));
  });
  return { child, consumed };
}

// A soak stopped by a signal still takes its consumer child down with it.
for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, () => process.exit(130));

let totalSent = 0;
let totalConsumed = 0;
let totalLost = 0;
let totalDuplicates = 0;
for (let round = 1; round <= rounds; round++) {
  const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-ckill-soak-'));
  const broker = await Broker.start({ storePath, port: 0, watchRenewGraceMs: 1000, clientScanIntervalMs: 200 });
  const topic = `CK_${round}`;
  const group = `ck_${round}`;
  const producer = new Producer({ endpoints: broker.address, defaultTopicQueueNums: 8, sendMsgTimeoutMs: 30_000 });
  await producer.start();
  const { child, consumed } = spawnConsumer(broker.address, group, topic);
  const killChild = () => child.kill('SIGKILL');
  process.once('exit', killChild);
  const survivorSeen = [];
  const survivor = new PushConsumer({
    endpoints: broker.address,
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  survivor.subscribe(topic, '*');
  survivor.registerMessageListener((msgs) => {
    for (const m of msgs) survivorSeen.push(m.body.toString());
    return 'CONSUME_SUCCESS';
  });
  await survivor.start();
  const killAfter = 50 + Math.floor(Math.random() * 350);
  const sent = [];
  let next = 0;
  const sending = Promise.all(
    Array.from({ length: 4 }, async () => {
      while (next < 1000) {
        const body = `r${round}-${next++}`;
        await producer.send({ topic, body: Buffer.from(body) });
        sent.push(body);
      }
    }),
  );
  sending.catch(() => undefined); // handled below; not an unhandled rejection meanwhile
  let lost = -1;
  try {
    await until(() => consumed.length >= killAfter || sent.length === 1000, 60_000, 'the child to consume');
    child.kill('SIGKILL');
    await sending;
    await until(
      () => {
        const seen = new Set([...consumed, ...survivorSeen]);
        return sent.every((b) => seen.has(b));
      },
      60_000,
      'every message to be consumed',
    );
  } catch (e) {
    console.log(`round ${round}: ${e.message}`);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    process.off('exit', killChild);
    await sending.catch((e) => console.log(`round ${round}: a send failed: ${e.message}`));
    const seen = new Set([...consumed, ...survivorSeen]);
    lost = sent.filter((b) => !seen.has(b)).length;
    const deliveries = consumed.length + survivorSeen.length;
    totalSent += sent.length;
    totalConsumed += seen.size;
    totalLost += lost;
    totalDuplicates += deliveries - seen.size;
    console.log(
      `round ${round}/${rounds}: killed after ${consumed.length} consumed by the child; sent ${sent.length}, consumed ${seen.size}, lost ${lost}, duplicates ${deliveries - seen.size}`,
    );
    await survivor.shutdown().catch(() => undefined);
    await producer.shutdown().catch(() => undefined);
    await broker.shutdown();
    fs.rmSync(storePath, { recursive: true, force: true });
  }
}
console.log(
  `RESULT ${JSON.stringify({
    scenario: 'consumer SIGKILL with takeover',
    runs: rounds,
    sent: totalSent,
    acknowledged: totalSent,
    consumed: totalConsumed,
    lost: totalLost,
    duplicates: totalDuplicates,
    notes: totalLost === 0 ? 'ok' : 'FAILED',
  })}`,
);
process.exit(totalLost === 0 ? 0 : 1);
