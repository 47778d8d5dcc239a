// Pull push, POP push and SimpleConsumer side by side on the bundled broker (TCP remoting), for
// docs/consumer.md's "Pull, push or POP": for each, the drain throughput of a backlog and the
// end-to-end latency (send to listener, p50 / p99) of messages sent at a steady rate to a running
// consumer. Run from a clone with dist/ built (`npm run build`):
//
//   node bench/pop.mjs [--messages 5000] [--rate 200] [--seconds 3] [--body-bytes 256]
//
// One process runs the broker, the producer and the consumer, so the figures compare the three ways of
// consuming under the same conditions; they are not the broker's limits (bench/compare.mjs is).
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg, cpus } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { parseArgs } from 'node:util';
import { Broker } from '../dist/broker/index.js';
import { Producer, PushConsumer, SimpleConsumer } from '../dist/index.js';

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '5000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '3' },
    'body-bytes': { type: 'string', default: '256' },
  },
});
const MESSAGES = Number(args.messages);
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const BODY = Buffer.alloc(Number(args['body-bytes']), 'x');
const QUEUES = 4;
const SENT_AT = 'benchSentAt';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not done in ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** One consumer kind: start(onMessages) and stop(). */
function pushKind(mode, connect, group, topic) {
  let c;
  return {
    async start(on) {
      c = new PushConsumer({
        ...connect,
        consumerGroup: group,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        consumeMode: mode,
        brokerSuspendMaxTimeMs: 2000,
      });
      c.subscribe(topic, '*');
      c.registerMessageListener((msgs) => on(msgs));
      await c.start();
      await c.ready;
    },
    stop: () => c.shutdown(),
  };
}

function simpleKind(connect, group, topic) {
  let c;
  let stopped = false;
  let loop;
  return {
    async start(on) {
      c = new SimpleConsumer({ ...connect, consumerGroup: group, awaitDurationMs: 2000 });
      c.subscribe(topic, '*');
      await c.start();
      // Four receive loops, as an application would run to keep up; each acks what it received.
      const one = async () => {
        while (!stopped) {
          let got = [];
          try {
            got = await c.receive(32, 30_000);
          } catch (e) {
            if (stopped) return;
            throw e;
          }
          on(got);
          await Promise.all(got.map((m) => c.ack(m)));
        }
      };
      loop = Promise.all([one(), one(), one(), one()]);
    },
    async stop() {
      stopped = true;
      await c.shutdown();
      await loop.catch(() => undefined);
    },
  };
}

async function send(producer, topic, n, stamp) {
  const batch = [];
  for (let i = 0; i < n; i++) {
    const properties = stamp ? { [SENT_AT]: String(now()) } : undefined;
    batch.push(producer.send({ topic, body: BODY, properties }));
    if (batch.length === 64) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
}

async function measure(name, makeKind, broker, producer) {
  const connect = { namesrvAddr: broker.remotingAddress };
  const tag = `${name.replace(/\W/g, '')}_${process.pid}_${Date.now().toString(36)}`;
  // Drain: a backlog sent first, then the consumer started; from its start to the last message.
  const drainTopic = `PopBenchDrain_${tag}`;
  await send(producer, drainTopic, MESSAGES, false);
  let received = 0;
  const drain = makeKind(connect, `PopBenchG_${tag}_d`, drainTopic);
  const t0 = now();
  await drain.start((msgs) => void (received += msgs.length));
  await until(() => received >= MESSAGES, 120_000, `${name} drain`);
  const drainMs = now() - t0;
  const drainReceived = received;
  await drain.stop();
  // Latency: a running consumer, messages sent at RATE per second for SECONDS.
  const latTopic = `PopBenchLat_${tag}`;
  await send(producer, latTopic, 1, false);
  const lat = [];
  const live = makeKind(connect, `PopBenchG_${tag}_l`, latTopic);
  await live.start((msgs) => {
    const t = now();
    for (const m of msgs) {
      const sentAt = Number(m.properties?.[SENT_AT]);
      if (sentAt > 0) lat.push(t - sentAt);
    }
  });
  const total = RATE * SECONDS;
  const start = now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - now();
    if (wait > 1) await sleep(wait);
    void producer.send({ topic: latTopic, body: BODY, properties: { [SENT_AT]: String(now()) } });
  }
  await until(() => lat.length >= total, 60_000, `${name} latency`);
  await live.stop();
  lat.sort((a, b) => a - b);
  return {
    name,
    drainMsgPerS: Math.round((MESSAGES / drainMs) * 1000),
    drainDuplicates: drainReceived - MESSAGES,
    p50Ms: Number(pct(lat, 50).toFixed(1)),
    p99Ms: Number(pct(lat, 99).toFixed(1)),
  };
}

const storePath = mkdtempSync(path.join(tmpdir(), 'rmq-pop-bench-'));
const broker = await Broker.start({
  port: 0,
  remotingPort: 0,
  host: '127.0.0.1',
  storePath,
  popReviveIntervalMs: 200,
});
const producer = new Producer({ endpoints: broker.address, defaultTopicQueueNums: QUEUES });
await producer.start();
const rows = [];
try {
  const load = loadavg()[0].toFixed(1);
  console.log(
    `pop bench: ${MESSAGES} messages drained, ${RATE} msg/s for ${SECONDS} s, ${BODY.length}-byte bodies, ` +
      `${QUEUES} queues, TCP remoting; ${cpus().length} CPUs, load ${load} at start`,
  );
  rows.push(await measure('push (pull)', (c, g, t) => pushKind('PULL', c, g, t), broker, producer));
  rows.push(await measure('push (POP)', (c, g, t) => pushKind('POP', c, g, t), broker, producer));
  rows.push(await measure('SimpleConsumer', (c, g, t) => simpleKind(c, g, t), broker, producer));
  console.table(rows);
  console.log(`load ${loadavg()[0].toFixed(1)} at the end`);
} finally {
  await producer.shutdown();
  await broker.shutdown();
  rmSync(storePath, { recursive: true, force: true });
}
