#!/usr/bin/env node
// `npm run demo`: the bundled broker on a temporary store, a producer sending tagged messages with
// properties, two push consumer groups of two members each — one subscribed by tag, one by an SQL92
// expression — and live progress (produced, consumed and lag per group) until every group has
// caught up; then a summary, and everything is closed. Builds dist/ first when it is missing.
import { Buffer } from 'node:buffer';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { setInterval, clearInterval, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (!existsSync(path.join(root, 'dist', 'index.js'))) {
  process.stdout.write('building dist/ (first run) ...\n');
  const r = spawnSync(process.execPath, [path.join(root, 'scripts', 'prepare.mjs')], { stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(path.join(root, 'dist', 'index.js'))) {
    process.stderr.write('demo: building dist/ failed (run `npm install` first)\n');
    process.exit(1);
  }
}

const { AdminClient, ConsumeFromWhere, MessageSelector, Producer, PushConsumer } = await import('rocketmq-ts');
const { Broker } = await import('rocketmq-ts/broker');

const COUNT = Number(process.env.DEMO_MESSAGES ?? 1000);
const TOPIC = 'DemoOrders';
const SQL = 'amount >= 50';
const tty = process.stdout.isTTY === true;

function fmt(n) {
  return n.toLocaleString('en-US');
}

async function main() {
  const storePath = await mkdtemp(path.join(os.tmpdir(), 'rocketmq-ts-demo-'));
  const broker = await Broker.start({ storePath, port: 0 });
  const endpoints = broker.address;
  process.stdout.write(`broker listening on ${endpoints} (store ${storePath})\n`);
  const admin = new AdminClient({ endpoints });
  await admin.createTopic(TOPIC, { queueNums: 4 });

  const groups = [
    {
      name: 'demo_paid_orders',
      selector: MessageSelector.byTag('Paid'),
      label: "tag 'Paid'",
      expected: 0,
      consumed: 0,
      seen: new Set(),
    },
    {
      name: 'demo_big_orders',
      selector: MessageSelector.bySql(SQL),
      label: `SQL '${SQL}'`,
      expected: 0,
      consumed: 0,
      seen: new Set(),
    },
  ];
  const consumers = [];
  for (const g of groups) {
    for (let member = 1; member <= 2; member++) {
      const consumer = new PushConsumer({
        consumerGroup: g.name,
        endpoints,
        instanceName: `${g.name}_${member}`,
        consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
        persistConsumerOffsetIntervalMs: 200,
        // A held pull wakes only for a message that matches the subscription (as in RocketMQ), so a
        // queue whose last messages match no subscription shows lag until the hold ends and the pull
        // steps past them. A short hold lets the demo reach lag 0 within a second of the last message.
        brokerSuspendMaxTimeMs: 1000,
      });
      consumer.subscribe(TOPIC, g.selector);
      consumer.registerMessageListener((messages) => {
        g.consumed += messages.length;
        for (const m of messages) g.seen.add(m.properties?.KEYS);
      });
      consumers.push(consumer);
    }
  }
  await Promise.all(consumers.map((c) => c.start()));

  const producer = new Producer({ producerGroup: 'demo_producer', endpoints, sendMsgTimeoutMs: 15_000 });
  await producer.start();
  let produced = 0;
  const lags = new Map(groups.map((g) => [g.name, 0]));
  const status = () =>
    `produced ${fmt(produced)}/${fmt(COUNT)}  ` +
    groups
      .map((g) => `${g.name}: consumed ${fmt(g.seen.size)}/${fmt(g.expected)} lag ${fmt(lags.get(g.name))}`)
      .join('  ');
  let lastPlain = 0;
  const show = (force = false) => {
    if (tty) process.stdout.write(`\r\x1b[2K${status()}`);
    else if (force || Date.now() - lastPlain >= 1000) {
      lastPlain = Date.now();
      process.stdout.write(`${status()}\n`);
    }
  };
  const refreshLag = async () => {
    for (const g of groups) lags.set(g.name, (await admin.consumerProgress(g.name, TOPIC)).diffTotal);
  };
  const ticker = setInterval(() => {
    refreshLag().then(
      () => show(),
      () => show(),
    );
  }, 250);

  const started = Date.now();
  const inFlight = new Set();
  for (let i = 0; i < COUNT; i++) {
    const tags = i % 3 === 0 ? 'Cancelled' : 'Paid';
    const amount = (i * 37) % 100;
    if (tags === 'Paid') groups[0].expected += 1;
    if (amount >= 50) groups[1].expected += 1;
    const p = producer
      .send({
        topic: TOPIC,
        tags,
        keys: `order-${i}`,
        properties: { amount: String(amount) },
        body: Buffer.from(`order ${i}`),
      })
      .then(() => {
        produced += 1;
        inFlight.delete(p);
      });
    inFlight.add(p);
    if (inFlight.size >= 16) await Promise.race(inFlight);
  }
  await Promise.all(inFlight);
  const produceMs = Date.now() - started;

  // Until every group has consumed what matched its subscription and committed it (lag 0).
  const deadline = Date.now() + 120_000;
  for (;;) {
    await refreshLag();
    if (groups.every((g) => g.seen.size >= g.expected && lags.get(g.name) === 0)) break;
    if (Date.now() > deadline) throw new Error(`the consumers did not catch up in time: ${status()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const totalMs = Date.now() - started;
  clearInterval(ticker);
  show(true);
  if (tty) process.stdout.write('\n');

  const consumed = groups.reduce((s, g) => s + g.consumed, 0);
  process.stdout.write(
    [
      '',
      'summary',
      `  produced  ${fmt(COUNT)} messages in ${produceMs} ms (${fmt(Math.round((COUNT * 1000) / Math.max(1, produceMs)))} msg/s)`,
      ...groups.map(
        (g) =>
          `  ${g.name.padEnd(18)} ${g.label.padEnd(18)} consumed ${fmt(g.seen.size)} of ${fmt(g.expected)} matching (${fmt(g.consumed - g.seen.size)} duplicates: delivery is at-least-once), lag ${lags.get(g.name)}`,
      ),
      `  consumed  ${fmt(consumed)} messages in ${totalMs} ms (${fmt(Math.round((consumed * 1000) / Math.max(1, totalMs)))} msg/s end to end)`,
      '',
    ].join('\n'),
  );

  await producer.shutdown();
  await Promise.all(consumers.map((c) => c.shutdown()));
  await admin.shutdown();
  await broker.shutdown();
  await rm(storePath, { recursive: true, force: true });
  process.stdout.write('everything closed.\n');
}

main().catch((e) => {
  process.stderr.write(`\ndemo failed: ${e?.stack ?? e}\n`);
  process.exit(1);
});
