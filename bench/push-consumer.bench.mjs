// PushConsumer: drain throughput (a backlog consumed by one push consumer with a no-op listener),
// end-to-end latency at a steady send rate (send → listener), and peak RSS while a slow listener works
// through a large backlog (bounded by flow control). The broker runs as a child process (the CLI), so
// the figures are the consumer's own; producer and consumer share this process. Imports the compiled
// package (npm run build). One line per figure: name, value, unit.
//
// Scale with env vars (defaults in brackets):
//   PC_DRAIN_MESSAGES [200000]  PC_DRAIN_BODY_BYTES [1024]
//   PC_LATENCY_RATE [2000] msg/s  PC_LATENCY_SECONDS [10]  PC_LATENCY_WARMUP_SECONDS [3] (sent, not measured)
//   PC_MEMORY_MESSAGES [1000000]  PC_MEMORY_BODY_BYTES [256]  PC_MEMORY_SECONDS [15]
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { ConsumeConcurrentlyStatus, Producer, PushConsumer } from '../dist/index.js';

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const DRAIN_N = env('PC_DRAIN_MESSAGES', 200_000);
const DRAIN_BODY = env('PC_DRAIN_BODY_BYTES', 1024);
const LAT_RATE = env('PC_LATENCY_RATE', 2000);
const LAT_SECONDS = env('PC_LATENCY_SECONDS', 10);
const LAT_WARMUP_SECONDS = env('PC_LATENCY_WARMUP_SECONDS', 3);
const MEM_N = env('PC_MEMORY_MESSAGES', 1_000_000);
const MEM_BODY = env('PC_MEMORY_BODY_BYTES', 256);
const MEM_SECONDS = env('PC_MEMORY_SECONDS', 15);
const QUEUES = 8;
/** Extra node flags for the broker child, e.g. PC_BROKER_NODE_ARGS=--trace-gc to see its collections. */
const brokerNodeArgs = (process.env.PC_BROKER_NODE_ARGS ?? '').split(' ').filter(Boolean);

const report = (name, value, unit) => console.log(`${name} ${Number(Number(value).toFixed(3))} ${unit}`);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-push-'));

async function startBrokerChild() {
  const child = spawn(
    process.execPath,
    [...brokerNodeArgs, path.join(root, 'dist/cli.js'), 'broker', '--store', storePath, '--port', '0'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const address = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      if (brokerNodeArgs.length > 0) process.stderr.write(d);
      out += d;
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`broker exited with ${code}`)));
  });
  return { child, address };
}

/** Sends `n` messages of `bodyBytes` to `topic` in batches, spread over the queues by the producer. */
async function backlog(producer, topic, n, bodyBytes) {
  const body = Buffer.alloc(bodyBytes, 0x61);
  const perBatch = Math.max(1, Math.min(256, Math.floor((1024 * 1024) / (bodyBytes + 64))));
  let sent = 0;
  const worker = async () => {
    while (sent < n) {
      const k = Math.min(perBatch, n - sent);
      sent += k;
      await producer.sendBatch(Array.from({ length: k }, () => ({ topic, body })));
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/**
 * Sends one message every 1/rate s for `seconds` (on schedule, not waiting for acks); the body is
 * `bodyOf(sentAt)`. Resolves once every send is acknowledged, with the ack times in ms.
 */
async function sendAtRate(producer, topic, rate, seconds, bodyOf) {
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const inflight = new Set();
  const acks = [];
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const sentAt = performance.now();
    const p = producer
      .send({ topic, body: Buffer.from(bodyOf(sentAt)) })
      .then(() => acks.push(performance.now() - sentAt))
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  return { sent: total, acks };
}

const { child: brokerProcess, address } = await startBrokerChild();
const producer = new Producer({ endpoints: address, defaultTopicQueueNums: QUEUES });
await producer.start();
console.log(
  `# broker child at ${address}; drain ${DRAIN_N} x ${DRAIN_BODY} B, latency ${LAT_RATE}/s x ${LAT_SECONDS} s, memory ${MEM_N} x ${MEM_BODY} B for ${MEM_SECONDS} s`,
);

try {
  // ---- drain throughput
  {
    const topic = 'BenchDrain';
    await producer.send({ topic, body: Buffer.from('warm') });
    const t0 = performance.now();
    await backlog(producer, topic, DRAIN_N, DRAIN_BODY);
    report('push.backlog.send', (DRAIN_N / (performance.now() - t0)) * 1000, 'msg/s');
    let consumed = 0;
    let done;
    const finished = new Promise((r) => (done = r));
    const total = DRAIN_N + 1;
    const c = new PushConsumer({
      endpoints: address,
      consumerGroup: 'BenchDrainGroup',
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    c.subscribe(topic, '*');
    c.registerMessageListener((msgs) => {
      consumed += msgs.length;
      if (consumed >= total) done();
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await c.start();
    // Time from the first delivery to the last, so the start-up (rebalance, 500 ms first-pull delay) is excluded.
    while (consumed === 0) await sleep(1);
    const s0 = performance.now();
    const c0 = consumed;
    await finished;
    const ms = performance.now() - s0;
    report('push.drain.throughput', ((consumed - c0) / ms) * 1000, 'msg/s');
    report('push.drain.duration', ms / 1000, 's');
    await c.shutdown();
  }

  // ---- end-to-end latency at a steady rate
  {
    const topic = 'BenchLatency';
    await producer.send({ topic, body: Buffer.from('warm') });
    let measuring = false;
    let received = 0;
    const samples = [];
    const c = new PushConsumer({ endpoints: address, consumerGroup: 'BenchLatencyGroup' });
    c.subscribe(topic, '*');
    c.registerMessageListener((msgs) => {
      const now = performance.now();
      received += msgs.length;
      if (measuring) {
        for (const m of msgs) {
          const s = m.body?.toString();
          if (s && s.startsWith('t:')) samples.push(now - Number(s.slice(2)));
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await c.start();
    while (c.assignedQueues().filter((q) => q.topic === topic).length < QUEUES) await sleep(10);
    await sleep(1000); // first pulls (500 ms after assignment) are held on the broker now
    // Warm-up at the same rate, not measured: until the JIT has compiled the send, pull and consume
    // paths (the first second runs several times slower) and the connection pools have their sockets.
    const warmed = await sendAtRate(producer, topic, LAT_RATE, LAT_WARMUP_SECONDS, () => 'w');
    const warmDeadline = performance.now() + 10_000;
    while (received < warmed.sent + 1 && performance.now() < warmDeadline) await sleep(10);
    measuring = true;
    const total = LAT_RATE * LAT_SECONDS;
    const { acks } = await sendAtRate(producer, topic, LAT_RATE, LAT_SECONDS, (sentAt) => `t:${sentAt}`);
    const deadline = performance.now() + 10_000;
    while (samples.length < total && performance.now() < deadline) await sleep(10);
    const sorted = samples.sort((a, b) => a - b);
    report('push.latency.messages', sorted.length, 'msgs');
    report('push.latency.p50', pct(sorted, 50), 'ms');
    report('push.latency.p99', pct(sorted, 99), 'ms');
    report('push.latency.max', sorted[sorted.length - 1] ?? NaN, 'ms');
    // How long the broker took to acknowledge the sends: the part of the latency before the consumer.
    const ackSorted = acks.sort((a, b) => a - b);
    report('push.latency.send_ack.p50', pct(ackSorted, 50), 'ms');
    report('push.latency.send_ack.p99', pct(ackSorted, 99), 'ms');
    await c.shutdown();
  }

  // ---- memory with a large backlog and a slow listener
  {
    const topic = 'BenchMemory';
    await producer.send({ topic, body: Buffer.from('warm') });
    const t0 = performance.now();
    await backlog(producer, topic, MEM_N, MEM_BODY);
    console.log(`# memory backlog of ${MEM_N} sent in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const baseline = process.memoryUsage().rss;
    let peak = baseline;
    let consumed = 0;
    const c = new PushConsumer({
      endpoints: address,
      consumerGroup: 'BenchMemoryGroup',
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    c.subscribe(topic, '*');
    c.registerMessageListener(async (msgs) => {
      await sleep(5); // slow: about 20 listeners x 200 calls/s
      consumed += msgs.length;
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    let flowControl = 0;
    c.events.on('flowControl', () => flowControl++);
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
    await c.start();
    await sleep(MEM_SECONDS * 1000);
    clearInterval(sampler);
    report('push.memory.rss.baseline', baseline / 1048576, 'MiB');
    report('push.memory.rss.peak', peak / 1048576, 'MiB');
    report('push.memory.rss.growth', (peak - baseline) / 1048576, 'MiB');
    report('push.memory.consumed', consumed, 'msgs');
    report('push.memory.flowControlEvents', flowControl, 'events');
    await c.shutdown({ timeoutMs: 2000 });
  }
} finally {
  await producer.shutdown();
  brokerProcess.kill('SIGTERM');
  await new Promise((r) => brokerProcess.once('exit', r));
  rmSync(storePath, { recursive: true, force: true });
}
