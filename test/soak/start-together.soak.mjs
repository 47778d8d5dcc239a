#!/usr/bin/env node
// Soak: members of a new group starting together, long version (the Jest test runs 2 rounds). Each
// round creates a topic of 16 queues with a backlog of 2,000 messages and starts 4 members of a new
// group at once: over HTTP and over TCP, 4 in this process (Promise.all) and 2 x 2 in two child
// processes told to start at the same moment. Pass: 0 messages delivered twice in every round. Also
// prints how soon a lone consumer gets its first message. Uses dist/ (run `npm run build`).
// Usage: node test/soak/start-together.soak.mjs [rounds]   (default 20)
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { Broker } from '../../dist/broker/index.js';
import { AdminClient, Producer, PushConsumer } from '../../dist/index.js';
import { twoProcessRound } from '../support/start-together.mjs';

const rounds = Number(process.argv[2] ?? process.env.SOAK_ROUNDS ?? 20);
const QUEUES = 16;
const BACKLOG = 2000;

async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-together-'));
const broker = await Broker.start({ port: 0, remotingPort: 0, storePath });
const admin = new AdminClient({ endpoints: broker.address });
const producer = new Producer({ endpoints: broker.address, sendMsgTimeoutMs: 30_000 });
await producer.start();
let seq = 0;
const addressing = (t) => (t === 'http' ? { endpoints: broker.address } : { namesrvAddr: broker.remotingAddress });

async function backlogTopic() {
  const topic = `Together_${process.pid}_${++seq}`;
  await admin.createTopic(topic, { queueNums: QUEUES });
  let next = 0;
  const worker = async () => {
    while (next < BACKLOG) {
      const i = next++;
      await producer.send({ topic, body: Buffer.from(`m-${i}`) });
    }
  };
  await Promise.all(Array.from({ length: 16 }, worker));
  return topic;
}

function options(t, group) {
  return { ...addressing(t), consumerGroup: group, consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' };
}

async function inProcessRound(t) {
  const topic = await backlogTopic();
  const group = `together_${process.pid}_${seq}`;
  const bodies = [];
  const members = Array.from({ length: 4 }, () => {
    const c = new PushConsumer(options(t, group)).subscribe(topic, '*');
    c.registerMessageListener(async (msgs) => {
      await new Promise((r) => setTimeout(r, 1));
      for (const m of msgs) bodies.push(m.body.toString());
    });
    return c;
  });
  try {
    await Promise.all(members.map((c) => c.start()));
    await until(() => new Set(bodies).size === BACKLOG, 120_000, 'the backlog');
  } finally {
    await Promise.all(members.map((c) => c.shutdown()));
  }
  return { consumed: new Set(bodies).size, duplicates: bodies.length - new Set(bodies).size };
}

async function twoProcesses(t) {
  const topic = await backlogTopic();
  return twoProcessRound(options(t, `pair_${process.pid}_${seq}`), topic, BACKLOG);
}

async function loneFirstMessage(t) {
  const topic = await backlogTopic();
  let first = 0;
  const c = new PushConsumer(options(t, `alone_${process.pid}_${seq}`)).subscribe(topic, '*');
  c.registerMessageListener(() => {
    first ||= Date.now();
  });
  const t0 = Date.now();
  try {
    await c.start();
    await until(() => first > 0, 30_000, 'the first message');
  } finally {
    await c.shutdown();
  }
  return first - t0;
}

let failed = false;
try {
  for (const t of ['http', 'tcp']) {
    for (const [name, round] of [
      ['4 members in one process', inProcessRound],
      ['2 x 2 members in two processes', twoProcesses],
    ]) {
      let consumed = 0;
      let duplicates = 0;
      const perRound = [];
      for (let i = 0; i < rounds; i++) {
        const r = await round(t);
        consumed += r.consumed;
        duplicates += r.duplicates;
        perRound.push(r.duplicates);
        process.stdout.write(`${t} ${name} round ${i + 1}/${rounds}: duplicates ${r.duplicates}\n`);
      }
      if (duplicates > 0) failed = true;
      const row = {
        scenario: `new group, ${name} started together, ${t}`,
        runs: rounds,
        sent: rounds * BACKLOG,
        acknowledged: rounds * BACKLOG,
        consumed,
        lost: rounds * BACKLOG - consumed,
        duplicates,
        notes: `rounds with duplicates: ${perRound.filter((d) => d > 0).length}`,
      };
      process.stdout.write(`SOAK ${JSON.stringify(row)}\n`);
    }
    const firsts = [];
    for (let i = 0; i < 5; i++) firsts.push(await loneFirstMessage(t));
    firsts.sort((a, b) => a - b);
    process.stdout.write(`${t}: a lone consumer's first message after start(): ${firsts.join(', ')} ms\n`);
  }
} finally {
  await producer.shutdown();
  await admin.shutdown();
  await broker.shutdown();
  fs.rmSync(storePath, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
