// PushConsumer: drain throughput (a backlog consumed by one push consumer with a no-op listener),
// end-to-end latency at a steady send rate (send → listener), and peak RSS while a slow listener works
// through a large backlog (bounded by flow control). The broker runs as a child process (the CLI), so
// the figures are the consumer's own; producer and consumer share this process. Imports the compiled
// package (npm run build). One line per figure: name, value, unit.
//
// The drain phase drains a backlog with one consumer, then (in the same round, on a fresh backlog) with
// PC_CONSUMERS consumers of one group spread over PC_PROCESSES child processes (each consumer has its
// own instanceName; with PC_PROCESSES=0 both drains run in this process, else the single consumer has a
// child process of its own too), and prints msg/s, the ratio to the one consumer of
// the same round, the consumers' and the broker's CPU time per message (µs, from process.cpuUsage and
// /proc/<pid>/stat over the drain window: first to last delivery) and the duplicates (deliveries beyond
// the distinct queue offsets).
//
//   npm run build && PC_CONSUMERS=4 PC_PROCESSES=2 PC_PHASES=drain node bench/push-consumer.bench.mjs
//
// Scale with env vars (defaults in brackets):
//   PC_PHASES [drain,latency,memory]  PC_TRANSPORT [http] (or tcp: the broker's remoting port, namesrvAddr)
//   PC_DRAIN_MESSAGES [200000]  PC_DRAIN_BODY_BYTES [1024]  PC_CONSUMERS [4]  PC_PROCESSES [1]  PC_ROUNDS [1]
//   PC_CHILD_NODE_ARGS (node flags for the consumer children, e.g. --cpu-prof)  PC_PULL_BATCH [32]  PC_LISTENER_BATCH [32] (consumeMessageBatchMaxSize, drain phase)
//   PC_LATENCY_RATE [2000] msg/s  PC_LATENCY_SECONDS [10]  PC_LATENCY_WARMUP_SECONDS [0] (0: measured from
//     the first message the ready consumer gets, as a user sees it, with p99 of the first second printed
//     on its own; N: N s sent first and not measured)
//   PC_MEMORY_MESSAGES [1000000]  PC_MEMORY_BODY_BYTES [256]  PC_MEMORY_SECONDS [15] (the memory phase's
//     consumer runs in a child process; its RSS bare, with the SDK imported and at its peak, and the
//     broker's, are printed)
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { ConsumeConcurrentlyStatus, Producer, PushConsumer } from '../dist/index.js';
import { sendBacklog, startCliBroker } from './bench-broker.mjs';
import {
  ChildDrainHost,
  DrainHost,
  consumerReady,
  cpuMicros,
  distinctSeen,
  rssOf,
  seenOf,
} from './push-consumer-drain.mjs';

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const DRAIN_N = env('PC_DRAIN_MESSAGES', 200_000);
const DRAIN_BODY = env('PC_DRAIN_BODY_BYTES', 1024);
const LAT_RATE = env('PC_LATENCY_RATE', 2000);
const LAT_SECONDS = env('PC_LATENCY_SECONDS', 10);
const LAT_WARMUP_SECONDS = env('PC_LATENCY_WARMUP_SECONDS', 0);
const MEM_N = env('PC_MEMORY_MESSAGES', 1_000_000);
const MEM_BODY = env('PC_MEMORY_BODY_BYTES', 256);
const MEM_SECONDS = env('PC_MEMORY_SECONDS', 15);
const CONSUMERS = env('PC_CONSUMERS', 4);
const PROCESSES = env('PC_PROCESSES', 1);
const ROUNDS = env('PC_ROUNDS', 1);
const PULL_BATCH = env('PC_PULL_BATCH', 32);
const LISTENER_BATCH = env('PC_LISTENER_BATCH', 32);
const PHASES = new Set((process.env.PC_PHASES ?? 'drain,latency,memory').split(','));
const TRANSPORT = process.env.PC_TRANSPORT ?? 'http';
if (TRANSPORT !== 'http' && TRANSPORT !== 'tcp') throw new Error(`PC_TRANSPORT must be http or tcp, got ${TRANSPORT}`);
const QUEUES = 8;
/** Extra node flags for the broker child, e.g. PC_BROKER_NODE_ARGS=--trace-gc to see its collections. */
const brokerNodeArgs = (process.env.PC_BROKER_NODE_ARGS ?? '').split(' ').filter(Boolean);

const report = (name, value, unit) => console.log(`${name} ${Number(Number(value).toFixed(3))} ${unit}`);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-push-'));

/**
 * Sends one message every 1/rate s for `seconds` (on schedule, not waiting for acks); the body is
 * `bodyOf(sentAt)`. Resolves once every send is acknowledged, with the ack times in ms.
 */
async function sendAtRate(producer, topic, rate, seconds, bodyOf) {
  const total = Math.round(rate * seconds);
  const start = performance.now();
  const inflight = new Set();
  const acks = [];
  let failed = 0;
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await sleep(wait);
    const sentAt = performance.now();
    const p = producer
      .send({ topic, body: Buffer.from(bodyOf(sentAt)) })
      .then(
        () => acks.push(performance.now() - sentAt),
        (err) => {
          if (failed++ === 0) console.log(`# first failed send: ${err?.message ?? err}`);
        },
      )
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  return { sent: total - failed, failed, acks };
}

/**
 * One drain of a fresh backlog by `consumers` consumers of one group: in this process when
 * `processes` is 0, else spread over that many child processes. Reports and returns the rate.
 */
async function drain(round, consumers, processes) {
  const name = `push.drain.r${round}.${consumers}c${processes}p`;
  const topic = `BenchDrain_${round}_${consumers}_${processes}`;
  await producer.send({ topic, body: Buffer.from('warm') });
  const t0 = performance.now();
  await sendBacklog(producer, topic, DRAIN_N, DRAIN_BODY);
  report(`${name}.backlog.send`, (DRAIN_N / (performance.now() - t0)) * 1000, 'msg/s');
  const total = DRAIN_N + 1;
  const config = {
    connect,
    group: `${topic}_Group`,
    topic,
    queues: QUEUES,
    slots: total,
    pullBatchSize: PULL_BATCH,
    consumeMessageBatchMaxSize: LISTENER_BATCH,
    tag: `bench${round}`,
  };
  const hosts = [];
  if (processes === 0) hosts.push(new DrainHost({ ...config, consumers }));
  else {
    for (let p = 0; p < processes; p++) {
      const share = Math.floor(consumers / processes) + (p < consumers % processes ? 1 : 0);
      hosts.push(new ChildDrainHost({ ...config, consumers: share }));
    }
  }
  await Promise.all(hosts.map((h) => h.start()));
  const received = () => hosts.reduce((n, h) => n + h.progress().received, 0);
  const pids = [...new Set(hosts.map((h) => h.pid ?? process.pid))];
  // The window runs from the first delivery to the last, so start-up (rebalance, first-pull delay) is out.
  while (received() === 0) await sleep(1);
  const cpu0 = pids.map(cpuMicros);
  const broker0 = cpuMicros(brokerProcess.pid);
  const c0 = received();
  const deadline = performance.now() + 600_000;
  let distinct = 0;
  for (;;) {
    if (received() >= total) {
      distinct = distinctSeen(await Promise.all(hosts.map(seenOf)));
      if (distinct >= total) break;
      await sleep(50);
    }
    if (performance.now() > deadline) throw new Error(`${name}: ${distinct} of ${total} after 600 s`);
    await sleep(2);
  }
  const cpu = pids.map(cpuMicros).reduce((s, v, i) => s + v - cpu0[i], 0);
  const brokerCpu = cpuMicros(brokerProcess.pid) - broker0;
  const first = Math.min(...hosts.map((h) => h.progress().first));
  const last = Math.max(...hosts.map((h) => h.progress().last));
  const n = received() - c0;
  const rate = (n / (last - first)) * 1000;
  report(`${name}.throughput`, rate, 'msg/s');
  report(`${name}.duration`, (last - first) / 1000, 's');
  report(`${name}.cpu.consumer`, cpu / n, 'us/msg');
  report(`${name}.cpu.broker`, brokerCpu / n, 'us/msg');
  report(`${name}.duplicates`, received() - distinct, 'msgs');
  await Promise.all(hosts.map((h) => h.stop()));
  return { rate };
}

const started = await startCliBroker({
  root,
  storePath,
  tcp: TRANSPORT === 'tcp',
  nodeArgs: brokerNodeArgs,
  echo: brokerNodeArgs.length > 0,
});
const brokerProcess = started.child;
const address = TRANSPORT === 'tcp' ? started.tcp : started.http;
// The broker child never outlives the bench, even when it fails outside the `finally` below.
process.on('exit', () => brokerProcess.kill('SIGKILL'));
const connect = TRANSPORT === 'tcp' ? { namesrvAddr: address } : { endpoints: address };
const producer = new Producer({ ...connect, defaultTopicQueueNums: QUEUES });
await producer.start();
console.log(
  `# broker child at ${address} (${TRANSPORT}); load average ${os
    .loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}; ` +
    `drain ${DRAIN_N} x ${DRAIN_BODY} B, 1 consumer vs ${CONSUMERS} in ${PROCESSES} process(es), ${ROUNDS} round(s); ` +
    `latency ${LAT_RATE}/s x ${LAT_SECONDS} s after ${LAT_WARMUP_SECONDS} s warm-up; memory ${MEM_N} x ${MEM_BODY} B for ${MEM_SECONDS} s`,
);

try {
  // ---- drain throughput: 1 consumer, then PC_CONSUMERS in PC_PROCESSES, each round on a fresh backlog
  if (PHASES.has('drain')) {
    const ratios = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const one = await drain(round, 1, Math.min(PROCESSES, 1));
      if (CONSUMERS === 1 && PROCESSES <= 1) continue;
      const many = await drain(round, CONSUMERS, PROCESSES);
      ratios.push(many.rate / one.rate);
      report(`push.drain.r${round}.ratio_${CONSUMERS}c${PROCESSES}p_to_1c`, many.rate / one.rate, 'x');
    }
    if (ratios.length > 0) {
      const r = ratios.sort((a, b) => a - b);
      const mid = r.length >> 1;
      const median = r.length % 2 === 1 ? r[mid] : (r[mid - 1] + r[mid]) / 2;
      report(`push.drain.ratio_${CONSUMERS}c${PROCESSES}p_to_1c.median`, median, 'x');
    }
  }

  // ---- end-to-end latency at a steady rate
  if (PHASES.has('latency')) {
    const topic = 'BenchLatency';
    await producer.send({ topic, body: Buffer.from('warm') });
    let measuring = false;
    let measureStart = Infinity;
    let received = 0;
    const samples = [];
    const firstSecond = [];
    const c = new PushConsumer({ ...connect, consumerGroup: 'BenchLatencyGroup' });
    c.subscribe(topic, '*');
    c.registerMessageListener((msgs) => {
      const now = performance.now();
      received += msgs.length;
      if (measuring) {
        for (const m of msgs) {
          const s = m.body?.toString();
          if (s && s.startsWith('t:')) {
            const sentAt = Number(s.slice(2));
            samples.push(now - sentAt);
            if (sentAt < measureStart + 1000) firstSecond.push(now - sentAt);
          }
        }
      }
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await c.start();
    await consumerReady(c, topic, QUEUES);
    // Warm-up at the same rate, not measured: until the JIT has compiled the send, pull and consume
    // paths and the connection pools have their sockets. With 0 s, the first message sent is measured.
    if (LAT_WARMUP_SECONDS > 0) {
      const warmed = await sendAtRate(producer, topic, LAT_RATE, LAT_WARMUP_SECONDS, () => 'w');
      const warmDeadline = performance.now() + 10_000;
      while (received < warmed.sent && performance.now() < warmDeadline) await sleep(10);
    }
    measuring = true;
    measureStart = performance.now();
    const total = LAT_RATE * LAT_SECONDS;
    const { acks, failed } = await sendAtRate(producer, topic, LAT_RATE, LAT_SECONDS, (sentAt) => `t:${sentAt}`);
    const deadline = performance.now() + 10_000;
    while (samples.length < total - failed && performance.now() < deadline) await sleep(10);
    const sorted = samples.sort((a, b) => a - b);
    report('push.latency.warmup', LAT_WARMUP_SECONDS, 's');
    report('push.latency.messages', sorted.length, 'msgs');
    report('push.latency.p50', pct(sorted, 50), 'ms');
    report('push.latency.p99', pct(sorted, 99), 'ms');
    report('push.latency.p99.9', pct(sorted, 99.9), 'ms');
    report('push.latency.max', sorted[sorted.length - 1] ?? NaN, 'ms');
    report(
      'push.latency.first_second.p99',
      pct(
        firstSecond.sort((a, b) => a - b),
        99,
      ),
      'ms',
    );
    // How long the broker took to acknowledge the sends: the part of the latency before the consumer.
    const ackSorted = acks.sort((a, b) => a - b);
    report('push.latency.send_ack.p50', pct(ackSorted, 50), 'ms');
    report('push.latency.send_ack.p99', pct(ackSorted, 99), 'ms');
    report('push.latency.send_ack.max', ackSorted[ackSorted.length - 1] ?? NaN, 'ms');
    report('push.latency.send_failed', failed, 'msgs');
    await c.shutdown();
  }

  // ---- memory with a large backlog and a slow listener, the consumer in a child process of its own
  if (PHASES.has('memory')) {
    const topic = 'BenchMemory';
    await producer.send({ topic, body: Buffer.from('warm') });
    const t0 = performance.now();
    await sendBacklog(producer, topic, MEM_N, MEM_BODY);
    console.log(`# memory backlog of ${MEM_N} sent in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const host = new ChildDrainHost({
      connect,
      group: 'BenchMemoryGroup',
      topic,
      queues: QUEUES,
      slots: 0,
      consumers: 1,
      pullBatchSize: 32,
      consumeMessageBatchMaxSize: 1,
      slowListenerMs: 5, // slow: about 20 listeners x 200 calls/s
      tag: 'benchmem',
    });
    const brokerRss0 = rssOf(brokerProcess.pid);
    let brokerPeak = brokerRss0;
    const sampler = setInterval(() => (brokerPeak = Math.max(brokerPeak, rssOf(brokerProcess.pid))), 100);
    await host.start();
    await sleep(MEM_SECONDS * 1000);
    clearInterval(sampler);
    const p = host.progress();
    report('push.memory.rss.bare_process', p.rssBare / 1048576, 'MiB');
    report('push.memory.rss.sdk_imported', p.rssImported / 1048576, 'MiB');
    report('push.memory.rss.peak', p.rssPeak / 1048576, 'MiB');
    report('push.memory.consumed', p.received, 'msgs');
    report('push.memory.broker.rss.start', brokerRss0 / 1048576, 'MiB');
    report('push.memory.broker.rss.peak', brokerPeak / 1048576, 'MiB');
    await host.stop();
  }
} finally {
  await producer.shutdown();
  brokerProcess.kill('SIGTERM');
  await new Promise((r) => brokerProcess.once('exit', r));
  rmSync(storePath, { recursive: true, force: true });
}
