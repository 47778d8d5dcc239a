// Broker SIGKILL through the clients: a CLI broker child (dist/cli.js) serves a Producer (4 senders) and
// a PushConsumer group in this process; after every `killAfterAcks` acknowledged sends it is SIGKILLed
// and restarted on the same store and port. Then sending stops and the group must consume every
// acknowledged message. Used by test/integration/broker/broker-kill.test.ts (short) and
// test/soak/broker-kill.soak.mjs (long). Needs dist/ (`npm run build`).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cli = path.join(root, 'dist', 'cli.js');

async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Starts `rocketmq-ts broker` and resolves once it prints where it listens. */
async function startBroker(storePath, port, syncFlush) {
  const args = [cli, 'broker', '--store', storePath, '--port', String(port)];
  if (syncFlush) args.push('--sync-flush');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  const exited = new Promise((r) => child.on('exit', r));
  await until(() => /listening on http:\/\/\S+/.test(out) || child.exitCode !== null, 60_000, 'the broker to listen');
  if (child.exitCode !== null) throw new Error(`broker exited at start: ${err}`);
  const address = /listening on (http:\/\/\S+)/.exec(out)[1];
  return { child, address, exited, port: Number(new URL(address).port) };
}

/**
 * One run: `kills` SIGKILLs, each after `killAfterAcks` more acknowledged sends. Resolves with the
 * counts: sent (send calls), acknowledged (SEND_OK), consumed (distinct bodies), lost (acknowledged and
 * never consumed), duplicates (deliveries beyond the first).
 */
export async function brokerKillRun({ syncFlush, kills, killAfterAcks, tag, drainTimeoutMs = 60_000 }) {
  const { Producer, PushConsumer } = await import(path.join(root, 'dist', 'index.js'));
  const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-bkill-'));
  let broker = await startBroker(storePath, 0, syncFlush);
  const port = broker.port;
  const killBroker = () => broker.child.kill('SIGKILL');
  process.once('exit', killBroker);
  const topic = `BK_${tag}_${process.pid}`;
  const producer = new Producer({
    endpoints: broker.address,
    defaultTopicQueueNums: 4,
    sendMsgTimeoutMs: 5_000,
    retryTimesWhenSendFailed: 0,
  });
  const consumer = new PushConsumer({
    endpoints: broker.address,
    consumerGroup: `bk_${tag}_${process.pid}`,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  const acked = new Set();
  const deliveries = new Map();
  let sent = 0;
  let stop = false;
  try {
    await producer.start();
    consumer.subscribe(topic, '*');
    consumer.registerMessageListener((msgs) => {
      for (const m of msgs) {
        const b = m.body.toString();
        deliveries.set(b, (deliveries.get(b) ?? 0) + 1);
      }
      return 'CONSUME_SUCCESS';
    });
    for (;;) {
      try {
        const r = await producer.send({ topic, body: Buffer.from(`${tag}-warmup`) });
        if (r.sendStatus === 'SEND_OK') acked.add(`${tag}-warmup`);
        break;
      } catch {
        await sleep(50);
      }
    }
    sent++;
    await consumer.start();
    const senders = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; !stop; i++) {
        const body = `${tag}-${w}-${i}`;
        sent++;
        try {
          const r = await producer.send({ topic, body: Buffer.from(body) });
          // SYNC_FLUSH acknowledges SEND_OK only once fsynced; other statuses are not acknowledgements.
          if (r.sendStatus === 'SEND_OK') acked.add(body);
        } catch {
          await sleep(20); // the broker is down: try the next message once it is back
        }
      }
    });
    for (let k = 0; k < kills; k++) {
      const target = acked.size + killAfterAcks;
      await until(() => acked.size >= target, 60_000, `${killAfterAcks} more acknowledgements`);
      broker.child.kill('SIGKILL');
      await broker.exited;
      broker = await startBroker(storePath, port, syncFlush);
    }
    const target = acked.size + killAfterAcks;
    await until(() => acked.size >= target, 60_000, 'acknowledgements after the last restart');
    stop = true;
    await Promise.all(senders);
    await until(
      () => [...acked].every((b) => deliveries.has(b)),
      drainTimeoutMs,
      'every acknowledged message to be consumed',
    ).catch(() => undefined); // counted as lost below
  } finally {
    stop = true;
    await consumer.shutdown().catch(() => undefined);
    await producer.shutdown().catch(() => undefined);
    broker.child.kill('SIGTERM');
    await broker.exited;
    process.off('exit', killBroker);
    fs.rmSync(storePath, { recursive: true, force: true });
  }
  const lost = [...acked].filter((b) => !deliveries.has(b)).length;
  let duplicates = 0;
  for (const n of deliveries.values()) duplicates += n - 1;
  return { sent, acknowledged: acked.size, consumed: deliveries.size, lost, duplicates };
}
