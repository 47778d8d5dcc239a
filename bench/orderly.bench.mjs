// Orderly consumption: throughput of one queue holding many keys, with a listener that takes 1 ms per
// message (awaited), per-queue order (RocketMQ's) against per-key order at several keyConcurrency values.
// The broker runs in this process (port 0, a temp store). Imports the compiled package (npm run build).
// One line per figure: name, value, unit.
//
// Scale with env vars (defaults in brackets): OR_KEYS [1000]  OR_PER_KEY [3]  OR_LISTENER_MS [1]
//   OR_CONCURRENCY ["1,16,64"] (keyConcurrency values; "queue" is always run first)
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { Broker } from '../dist/broker/index.js';
import { Producer, PushConsumer } from '../dist/index.js';

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const KEYS = env('OR_KEYS', 1000);
const PER_KEY = env('OR_PER_KEY', 3);
const LISTENER_MS = env('OR_LISTENER_MS', 1);
const CONCURRENCY = (process.env.OR_CONCURRENCY ?? '1,16,64').split(',').map(Number);
const TOTAL = KEYS * PER_KEY;
const report = (name, value, unit) => console.log(`${name} ${Number(Number(value).toFixed(3))} ${unit}`);

const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-orderly-'));
const broker = await Broker.start({ storePath, port: 0 });
const endpoints = broker.address;
const producer = new Producer({ endpoints });
await producer.start();
const topic = `OrderlyBench_${process.pid}`;
await broker.handle(
  {
    code: 17,
    header: {
      topic,
      defaultTopic: 'TBW102',
      readQueueNums: 1,
      writeQueueNums: 1,
      perm: 6,
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0,
      order: false,
    },
  },
  {
    remoteAddress: '127.0.0.1:0',
    signal: new globalThis.AbortController().signal,
    gone: false,
    onGone: () => () => {},
  },
);
// Keys interleaved, as independent orders arrive; each key's messages sent one after another.
for (let seq = 0; seq < PER_KEY; seq++) {
  for (let k0 = 0; k0 < KEYS; k0 += 50) {
    const sends = [];
    for (let k = k0; k < Math.min(KEYS, k0 + 50); k++)
      sends.push(producer.send({ topic, body: Buffer.from(`${k}:${seq}`) }, { shardingKey: `key-${k}` }));
    await Promise.all(sends);
  }
}

async function run(label, keyConcurrency) {
  const lastSeq = new Map();
  let done = 0;
  let outOfOrder = 0;
  /** From the first delivery: start-up (route, lock, first pull) is not what is measured. */
  let t0;
  let finish;
  const finished = new Promise((r) => (finish = r));
  const consumer = new PushConsumer({
    endpoints,
    consumerGroup: `orderly_bench_${label}_${process.pid}`,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  consumer.subscribe(topic, '*');
  consumer.registerMessageListenerOrderly(
    async (msgs) => {
      for (const m of msgs) {
        const [k, s] = m.body.toString().split(':').map(Number);
        t0 ??= performance.now();
        if ((lastSeq.get(k) ?? -1) !== s - 1) outOfOrder++;
        lastSeq.set(k, s);
        await sleep(LISTENER_MS);
        if (++done === TOTAL) finish();
      }
    },
    keyConcurrency === undefined ? {} : { keyConcurrency },
  );
  await consumer.start();
  await finished;
  const secs = (performance.now() - t0) / 1000;
  await consumer.shutdown();
  report(`orderly_${label}_throughput`, TOTAL / secs, 'msg/s');
  report(`orderly_${label}_out_of_order`, outOfOrder, 'messages');
}

try {
  await run('per_queue', undefined);
  for (const n of CONCURRENCY) await run(`per_key_${n}`, n);
} finally {
  await producer.shutdown();
  await broker.shutdown();
  rmSync(storePath, { recursive: true, force: true });
}
