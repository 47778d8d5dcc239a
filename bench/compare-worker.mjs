// One consumer process of the comparison harness (bench/compare.mjs starts it; not meant to be run by hand).
// argv[2] is a JSON config: { kind: 'push' | 'lite' | 'redis', endpoints? | namesrvAddr? | redisPort?,
// topic, group, consumers, mode: 'drain' | 'latency', messages, queues, liteLoop }.
// Talks JSON lines on stdout; reads commands (one word a line) on stdin:
//   -> {type:'loaded'}                 modules loaded; waits for 'go' (so the parent can snapshot CPU first)
//   <- go                              start `consumers` consumers
//   -> {type:'ready', at}              every consumer holds its queues (latency mode) / has started (drain)
//   -> {type:'progress', deliveries, distinct, received}    every 200 ms
//   <- counts                          (drain) -> {type:'counts', counts (base64), firstAt, lastNewAt, startAt,
//                                      milestones: [time, distinct, ...] at every 1/200 of the messages}
//   <- stop                            shut down, then -> {type:'done', latencies (base64 Float64Array ms), seqs (base64 Uint32Array)}
// Times are process.hrtime in ms (CLOCK_MONOTONIC, the same clock in every process of the machine).
// Message body: bytes 0..3 the sequence (uint32 BE), 8..15 the send time in hrtime ns (int64 BE, latency).
import { Buffer } from 'node:buffer';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { setInterval, clearInterval, setTimeout } from 'node:timers';
import { SeqCounter, xreadgroupArgs } from './compare-lib.mjs';

const cfg = JSON.parse(process.argv[2] ?? '{}');
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const send = (obj) => process.stdout.write(`${JSON.stringify(obj)}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const counter = new SeqCounter(cfg.mode === 'drain' ? cfg.messages : 0);
const latencies = [];
/** The sequence of each latency sample, so the parent can split the run by send time. */
const seqs = [];
let received = 0;
/** Drain: [time, distinct] each time this process's distinct count reaches a multiple of `milestoneEvery`. */
const milestones = [];
const milestoneEvery = Math.max(1, Math.floor(cfg.messages / 200));
let firstAt = 0;
let lastNewAt = 0;
let startAt = 0;

/** Records a batch of bodies delivered at `at`. */
function record(bodies, at) {
  if (firstAt === 0) firstAt = at;
  if (cfg.mode === 'drain') {
    for (const b of bodies) {
      if (!counter.add(b.readUInt32BE(0))) continue;
      lastNewAt = at;
      if (counter.distinct % milestoneEvery === 0) milestones.push(at, counter.distinct);
    }
    return;
  }
  const nowNs = BigInt(Math.round(at * 1e6));
  for (const b of bodies) {
    received++;
    seqs.push(b.readUInt32BE(0));
    latencies.push(Number(nowNs - b.readBigInt64BE(8)) / 1e6);
  }
}

const lib = cfg.kind === 'redis' ? undefined : await import('../dist/index.js');
const Redis = cfg.kind === 'redis' ? (await import('ioredis')).default : undefined;
const address = cfg.endpoints !== undefined ? { endpoints: cfg.endpoints } : { namesrvAddr: cfg.namesrvAddr };

/** Resolves when the consumer has its queues and its first pulls are out: its `ready` signal when it has one. */
async function whenReady(consumer, held) {
  if (typeof consumer.ready?.then === 'function') return consumer.ready;
  if (typeof consumer.ready === 'function') return consumer.ready();
  while (held() < cfg.queues) await sleep(5);
  // No ready signal: RocketMQ's rule delays the first pull of a new queue; give it that long.
  await sleep(600);
}

/** What the push and lite consumers share: the group, from the first offset, 32 messages a pull. */
const consumerOptions = (i) => ({
  ...address,
  consumerGroup: cfg.group,
  instanceName: `${cfg.group}_${process.pid}_${i}`,
  consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  pullBatchSize: 32,
});

function startPush(i) {
  const c = new lib.PushConsumer({ ...consumerOptions(i), consumeMessageBatchMaxSize: 32 });
  c.subscribe(cfg.topic, '*');
  c.registerMessageListener((msgs) => {
    record(
      msgs.map((m) => m.body),
      nowMs(),
    );
    return lib.ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  return {
    start: () => c.start(),
    ready: () => whenReady(c, () => c.assignedQueues().filter((q) => q.topic === cfg.topic).length),
    stop: () => c.shutdown({ timeoutMs: 5000 }),
  };
}

function startLite(i) {
  const c = new lib.LitePullConsumer(consumerOptions(i));
  c.subscribe(cfg.topic);
  let stopping = false;
  let loop;
  const consume = async () => {
    if (cfg.liteLoop === 'poll') {
      while (!stopping) {
        const msgs = await c.poll({ timeoutMs: 200 });
        if (msgs.length > 0)
          record(
            msgs.map((m) => m.body),
            nowMs(),
          );
      }
      return;
    }
    for await (const m of c) {
      record([m.body], nowMs());
      if (stopping) break;
    }
  };
  return {
    start: async () => {
      await c.start();
      loop = consume().catch((e) => {
        if (!stopping) throw e;
      });
    },
    ready: () => whenReady(c, () => c.assignment().filter((q) => q.topic === cfg.topic).length),
    stop: async () => {
      stopping = true;
      await c.shutdown();
      await loop;
    },
  };
}

function startRedis(i) {
  const r = new Redis({ host: '127.0.0.1', port: cfg.redisPort, lazyConnect: true, maxRetriesPerRequest: 1 });
  let stopping = false;
  let loop;
  let firstRead;
  const issued = new Promise((resolve) => (firstRead = resolve));
  const consume = async () => {
    while (!stopping) {
      const read = r.xreadgroupBuffer(...xreadgroupArgs(cfg.group, `c${i}`, cfg.topic));
      firstRead();
      const res = await read;
      if (res === null) continue;
      const entries = res[0][1];
      const at = nowMs();
      const ids = [];
      const bodies = [];
      for (const [id, fields] of entries) {
        ids.push(id);
        bodies.push(fields[1]);
      }
      record(bodies, at);
      await r.xack(cfg.topic, cfg.group, ...ids);
    }
  };
  return {
    start: async () => {
      await r.connect();
      loop = consume().catch((e) => {
        if (!stopping) throw e;
      });
    },
    ready: () => issued,
    stop: async () => {
      stopping = true;
      await loop;
      r.disconnect();
    },
  };
}

const factory = { push: startPush, lite: startLite, redis: startRedis }[cfg.kind];
if (factory === undefined) throw new Error(`unknown worker kind '${cfg.kind}'`);
const consumers = Array.from({ length: cfg.consumers }, (_, i) => factory(i));

let ticker;
async function go() {
  startAt = nowMs();
  await Promise.all(consumers.map((c) => c.start()));
  if (cfg.mode === 'latency') await Promise.all(consumers.map((c) => c.ready()));
  send({ type: 'ready', at: nowMs() });
  ticker = setInterval(
    () => send({ type: 'progress', deliveries: counter.deliveries, distinct: counter.distinct, received }),
    200,
  );
}

async function stop() {
  clearInterval(ticker);
  await Promise.all(consumers.map((c) => c.stop()));
  // The answer can be hundreds of KiB: exit only once the pipe has taken all of it (an exit right after
  // the write cut it short, and the parent waited for it forever).
  const done = {
    type: 'done',
    latencies: Buffer.from(Float64Array.from(latencies).buffer).toString('base64'),
    seqs: Buffer.from(Uint32Array.from(seqs).buffer).toString('base64'),
  };
  process.stdout.write(`${JSON.stringify(done)}\n`, () => process.exit(0));
}

process.on('unhandledRejection', (e) => {
  send({ type: 'error', message: String(e?.stack ?? e) });
  process.exit(1);
});

createInterface({ input: process.stdin }).on('line', (line) => {
  const cmd = line.trim();
  if (cmd === 'go') void go().catch((e) => send({ type: 'error', message: String(e?.stack ?? e) }));
  else if (cmd === 'counts')
    send({ type: 'counts', counts: counter.toBase64(), firstAt, lastNewAt, startAt, milestones });
  else if (cmd === 'stop') void stop();
});
// The parent went away (Ctrl-C, crash): don't linger.
process.stdin.on('end', () => process.exit(0));
send({ type: 'loaded' });
