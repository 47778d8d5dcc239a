// LitePullConsumer: drain throughput of a `for await` loop next to the PushConsumer on the same
// backlog in one run (two groups reading one topic from the first offset), and the consumer's peak RSS
// while a caller that polls once a second faces a large backlog (the buffer bounds hold memory). The
// broker runs as a child process (the CLI); the memory consumer runs in its own child process, so its
// RSS is the consumer's alone. Imports the compiled package (npm run build). One line per figure.
//
// Scale with env vars (defaults in brackets):
//   LP_DRAIN_MESSAGES [200000]  LP_DRAIN_BODY_BYTES [1024]  LP_PULL_BATCH_SIZE [32] (both consumers)
//   LP_MEMORY_MESSAGES [1000000]  LP_MEMORY_BODY_BYTES [256]  LP_MEMORY_SECONDS [15]
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { ConsumeConcurrentlyStatus, LitePullConsumer, Producer, PushConsumer } from '../dist/index.js';
import { sendBacklog, startCliBroker } from './bench-broker.mjs';

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const DRAIN_N = env('LP_DRAIN_MESSAGES', 200_000);
const DRAIN_BODY = env('LP_DRAIN_BODY_BYTES', 1024);
const BATCH = env('LP_PULL_BATCH_SIZE', 32);
const MEM_N = env('LP_MEMORY_MESSAGES', 1_000_000);
const MEM_BODY = env('LP_MEMORY_BODY_BYTES', 256);
const MEM_SECONDS = env('LP_MEMORY_SECONDS', 15);
const QUEUES = 8;

const report = (name, value, unit) => console.log(`${name} ${Number(Number(value).toFixed(3))} ${unit}`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');

// ---- the memory child: a lite consumer that polls once a second, reporting its own peak RSS
if (process.argv[2] === '--memory-child') {
  const [, , , address, topic, seconds] = process.argv;
  const c = new LitePullConsumer({
    endpoints: address,
    consumerGroup: 'BenchLiteMemoryGroup',
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  c.subscribe(topic);
  await c.start();
  let peak = process.memoryUsage().rss;
  let polled = 0;
  let maxBuffered = 0;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
    maxBuffered = Math.max(maxBuffered, c.bufferedMessageCount);
  }, 50);
  const end = performance.now() + Number(seconds) * 1000;
  while (performance.now() < end) {
    polled += (await c.poll({ timeoutMs: 1000 })).length;
    await sleep(1000);
  }
  clearInterval(sampler);
  await c.shutdown();
  console.log(JSON.stringify({ peak, polled, maxBuffered }));
  process.exit(0);
}

const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-lite-'));

async function drainPush(address, topic, total) {
  let consumed = 0;
  let done;
  const finished = new Promise((r) => (done = r));
  const c = new PushConsumer({
    endpoints: address,
    consumerGroup: 'BenchLiteCmpPushGroup',
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    pullBatchSize: BATCH,
  });
  c.subscribe(topic, '*');
  c.registerMessageListener((msgs) => {
    consumed += msgs.length;
    if (consumed >= total) done();
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  await c.start();
  while (consumed === 0) await sleep(1);
  const s0 = performance.now();
  const c0 = consumed;
  await finished;
  const ms = performance.now() - s0;
  await c.shutdown();
  return ((consumed - c0) / ms) * 1000;
}

async function drainLite(address, topic, total) {
  const c = new LitePullConsumer({
    endpoints: address,
    consumerGroup: 'BenchLiteCmpLiteGroup',
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    pullBatchSize: BATCH,
  });
  c.subscribe(topic);
  await c.start();
  let consumed = 0;
  let s0 = 0;
  // Timed from the first message to the last, as the push figure (start-up excluded).
  for await (const m of c) {
    if (consumed++ === 0) s0 = performance.now();
    if (m.body === undefined) throw new Error('message without body');
    if (consumed >= total) break;
  }
  const ms = performance.now() - s0;
  await c.shutdown();
  return ((consumed - 1) / ms) * 1000;
}

const { child: brokerProcess, http: address } = await startCliBroker({ root, storePath });
const producer = new Producer({ endpoints: address, defaultTopicQueueNums: QUEUES });
await producer.start();
console.log(
  `# broker child at ${address}; drain ${DRAIN_N} x ${DRAIN_BODY} B (pullBatchSize ${BATCH}), memory ${MEM_N} x ${MEM_BODY} B for ${MEM_SECONDS} s`,
);

try {
  {
    const topic = 'BenchLiteDrain';
    await producer.send({ topic, body: Buffer.from('warm') });
    await sendBacklog(producer, topic, DRAIN_N, DRAIN_BODY);
    const total = DRAIN_N + 1;
    const push = await drainPush(address, topic, total);
    report('lite.compare.push.drain.throughput', push, 'msg/s');
    const lite = await drainLite(address, topic, total);
    report('lite.forAwait.drain.throughput', lite, 'msg/s');
    report('lite.forAwait.vs.push', (lite / push) * 100, '%');
  }

  {
    const topic = 'BenchLiteMemory';
    await producer.send({ topic, body: Buffer.from('warm') });
    const t0 = performance.now();
    await sendBacklog(producer, topic, MEM_N, MEM_BODY);
    console.log(`# memory backlog of ${MEM_N} sent in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    const child = spawn(process.execPath, [self, '--memory-child', address, topic, String(MEM_SECONDS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const code = await new Promise((r) => child.once('exit', r));
    if (code !== 0) throw new Error(`memory child exited with ${code}`);
    const r = JSON.parse(out.trim().split('\n').pop());
    report('lite.memory.rss.peak', r.peak / 1048576, 'MiB');
    report('lite.memory.polled', r.polled, 'msgs');
    report('lite.memory.buffered.max', r.maxBuffered, 'msgs');
  }
} finally {
  await producer.shutdown();
  brokerProcess.kill('SIGTERM');
  await new Promise((r) => brokerProcess.once('exit', r));
  rmSync(storePath, { recursive: true, force: true });
}
