// Client core: send throughput (1 KiB bodies, one Producer, awaited sends with a concurrency of 32) and
// pull throughput (PullConsumer.pull of 32 messages in a loop, decode and tag re-check included),
// against an in-process broker over loopback HTTP (client and broker share one process and core).
// Imports the compiled package (npm run build). One line per figure: name, value, unit.
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Broker } from '../dist/broker/index.js';
import { Producer, PullConsumer, PullStatus } from '../dist/index.js';

const SEND_MS = Number(process.env.BENCH_CLIENT_SEND_MS ?? 5000);
const PULL_MS = Number(process.env.BENCH_CLIENT_PULL_MS ?? 4000);
const CONCURRENCY = 32;
const BODY = Buffer.alloc(1024, 'x');

const report = (name, value, unit) => console.log(`${name} ${Number(value.toFixed(3))} ${unit}`);
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-client-'));
const broker = await Broker.start({ storePath, port: 0 });
const producer = new Producer({ endpoints: broker.address });
const consumer = new PullConsumer({ endpoints: broker.address, consumerGroup: 'bench_pull' });
try {
  await producer.start();
  await consumer.start();
  const topic = `BenchClient${Date.now()}`;
  await producer.send({ topic, body: BODY, tags: 'TagA' });

  // Warm-up, then timed sends: CONCURRENCY workers, each awaiting its send before the next.
  async function sendFor(ms, latencies) {
    let sent = 0;
    const end = performance.now() + ms;
    const worker = async () => {
      while (performance.now() < end) {
        const t = performance.now();
        await producer.send({ topic, body: BODY, tags: 'TagA', keys: `k${sent}` });
        latencies?.push(performance.now() - t);
        sent++;
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    return sent;
  }
  await sendFor(500);
  const lat = [];
  const t0 = performance.now();
  const sent = await sendFor(SEND_MS, lat);
  const secs = (performance.now() - t0) / 1000;
  lat.sort((a, b) => a - b);
  report('client.send.1KiB.c32', sent / secs, 'msg/s');
  report('client.send.1KiB.c32.throughput', (sent * BODY.length) / secs / 1024 / 1024, 'MiB/s');
  report('client.send.latency.p50', pct(lat, 50), 'ms');
  report('client.send.latency.p99', pct(lat, 99), 'ms');

  // Pulls of 32 messages, queue after queue, from offset 0 (wrapping round when a queue is drained).
  const mqs = await consumer.fetchSubscribeMessageQueues(topic);
  const offsets = new Map(mqs.map((q) => [q.queueId, 0]));
  let pulled = 0;
  let pulls = 0;
  const pullOnce = async (mq) => {
    const r = await consumer.pull(mq, 'TagA', offsets.get(mq.queueId), 32);
    pulls++;
    pulled += r.msgFoundList.length;
    offsets.set(mq.queueId, r.pullStatus === PullStatus.FOUND ? r.nextBeginOffset : 0);
  };
  const warmEnd = performance.now() + 300;
  for (let i = 0; performance.now() < warmEnd; i++) await pullOnce(mqs[i % mqs.length]);
  pulled = 0;
  pulls = 0;
  const p0 = performance.now();
  const pullEnd = p0 + PULL_MS;
  for (let i = 0; performance.now() < pullEnd; i++) await pullOnce(mqs[i % mqs.length]);
  const pullSecs = (performance.now() - p0) / 1000;
  report('client.pull.32.sequential', pulled / pullSecs, 'msg/s');
  report('client.pull.32.sequential.calls', pulls / pullSecs, 'pull/s');
  report('client.pull.msgs_per_pull', pulled / Math.max(1, pulls), 'msg');
} finally {
  await consumer.shutdown();
  await producer.shutdown();
  await broker.shutdown();
  rmSync(storePath, { recursive: true, force: true });
}
