#!/usr/bin/env node
// Where publish-to-listener latency goes, message by message, from the first message (nothing excluded).
//
//   npm run build && node bench/latency-probe.mjs [--transport http|tcp] [--kind push|lite]
//                       [--rate 2000] [--seconds 10] [--body-bytes 1024] [--backlog 0] [--runs 1]
//   PROBE_DIST=/other/checkout/dist  runs another build (A/B); PROBE_CPU_PROF=DIR  CPU profiles of the
//   broker and the consumer into DIR; PROBE_NODE_ARGS='--trace-gc ...'  extra node flags for both
//   children; PROBE_BROKER_LOG=FILE  appends the broker's standard output to FILE.
//
// Starts our CLI broker and one consumer in child processes (both with bench/latency-probe-hooks.mjs
// loaded, which traces the broker's store and long-polling steps and the consumer's pulls), waits until
// the consumer is `ready`, then publishes at RATE msg/s for S s (open loop, from this process) and prints:
//   - per second: publish-to-listener p50/p99/max, send-acknowledge p99, the worst event-loop delay and
//     the GC time of each process;
//   - the mean time of each step (publish -> broker store -> written -> pull answered -> consumer got the
//     pull answer -> listener) for all messages and for the slowest 1%, and how the tail's pulls were
//     served (a held pull woken on arrival, or a pull that came in after the message was stored).
// `--backlog N` first sends and drains N messages through another group (as bench/compare.mjs does
// before its latency run). Everything started is stopped; temp dirs are removed.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brokerAddresses, xreadgroupArgs } from './compare-lib.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '..');
const hooks = path.join(here, 'latency-probe-hooks.mjs');
/** The build under test: this checkout's dist/, or PROBE_DIST (another checkout's dist/, for an A/B run). */
const dist = path.resolve(process.env.PROBE_DIST ?? path.join(root, 'dist'));
process.env.PROBE_DIST = dist;
const distUrl = (file) => pathToFileURL(path.join(dist, file)).href;
/** PROBE_PRODUCER_OPTIONS (JSON): extra Producer options, e.g. '{"connectionsPerBroker":4}' to A/B a setting. */
const producerOptions = JSON.parse(process.env.PROBE_PRODUCER_OPTIONS ?? '{}');
const nowMs = () => Number(process.hrtime.bigint()) / 1e6;

function parse(argv) {
  const o = { transport: 'http', kind: 'push', rate: 2000, seconds: 10, bodyBytes: 1024, backlog: 0, runs: 1 };
  for (let i = 0; i < argv.length; i++) {
    const [flag, v] = [argv[i], argv[i + 1]];
    i++;
    if (flag === '--transport' && (v === 'http' || v === 'tcp')) o.transport = v;
    else if (flag === '--kind' && (v === 'push' || v === 'lite' || v === 'redis')) o.kind = v;
    else if (flag === '--role') o.role = v;
    else if (flag === '--config') o.config = JSON.parse(v);
    else if (['--rate', '--seconds', '--body-bytes', '--backlog', '--runs'].includes(flag) && Number(v) >= 0) {
      o[flag.slice(2).replace(/-b/, 'B')] = Number(v);
    } else {
      console.error(
        `bad flag ${flag} ${v ?? ''}\nusage: node bench/latency-probe.mjs [--transport http|tcp] [--kind push|lite] ` +
          '[--rate N] [--seconds S] [--body-bytes B] [--backlog N] [--runs R]',
      );
      process.exit(2);
    }
  }
  return o;
}
const opts = parse(process.argv.slice(2));

// ---------------------------------------------------------------- the consumer child

if (opts.role === 'consumer') {
  const cfg = opts.config;
  const lib = await import(distUrl('index.js'));
  const seen = [];
  const address = cfg.endpoints ? { endpoints: cfg.endpoints } : { namesrvAddr: cfg.namesrvAddr };
  const base = {
    ...address,
    consumerGroup: cfg.group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    pullBatchSize: 32,
  };
  const recordOne = (m, at) => {
    if (m.body.length >= 4) seen.push([m.body.readUInt32BE(0), m.queueId, m.queueOffset, at]);
  };
  let stopping = false;
  let loop;
  let c;
  if (cfg.kind === 'redis') c = redisConsumer(cfg, seen, () => stopping);
  else if (cfg.kind === 'push') {
    c = new lib.PushConsumer({ ...base, consumeMessageBatchMaxSize: 32 });
    c.subscribe(cfg.topic, '*');
    c.registerMessageListener((msgs) => {
      const at = nowMs();
      for (const m of msgs) recordOne(m, at);
    });
  } else {
    c = new lib.LitePullConsumer(base);
    c.subscribe(cfg.topic);
  }
  await c.start();
  await c.ready;
  if (cfg.kind === 'redis') loop = c.loop();
  if (cfg.kind === 'lite') {
    loop = (async () => {
      for await (const m of c) {
        recordOne(m, nowMs());
        if (stopping) break;
      }
    })();
  }
  process.stdout.write(`${JSON.stringify({ type: 'ready' })}\n`);
  const ticker = setInterval(() => process.stdout.write(`${JSON.stringify({ type: 'seen', n: seen.length })}\n`), 100);
  process.stdin.on('end', () => process.exit(0)); // the driver went away
  createInterface({ input: process.stdin }).on('line', async (line) => {
    if (line.trim() !== 'stop') return;
    clearInterval(ticker);
    stopping = true;
    await c.shutdown();
    await loop;
    process.stdout.write(`${JSON.stringify({ type: 'done', seen })}\n`, () => process.exit(0));
  });
}

// ---------------------------------------------------------------- the driver

/** Children still running: killed if the driver is interrupted. */
const children = new Set();
for (const sig of ['SIGINT', 'SIGTERM']) {
  process.on(sig, () => {
    for (const c of children) c.kill('SIGKILL');
    process.exit(130);
  });
}

function child(args, env) {
  const prof = process.env.PROBE_CPU_PROF ? ['--cpu-prof', '--cpu-prof-dir', process.env.PROBE_CPU_PROF] : [];
  const extra = (process.env.PROBE_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const c = spawn(process.execPath, [...prof, ...extra, '--import', hooks, ...args], {
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: root,
    env: { ...process.env, ...env },
  });
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

const exited = (c) =>
  c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r));

function lines(c, onLine) {
  createInterface({ input: c.stdout }).on('line', onLine);
}

async function startBroker(dir, topicPrefix) {
  const store = path.join(dir, 'store');
  const args = [path.join(dist, 'cli.js'), 'broker', '--store', store, '--port', '0', '--log-level', 'warn'];
  if (opts.transport === 'tcp') args.push('--remoting-port', '0');
  const b = child(args, { PROBE_ROLE: 'broker', PROBE_TOPIC: topicPrefix, PROBE_OUT: path.join(dir, 'broker.json') });
  let err = '';
  b.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  const found = await new Promise((resolve, reject) => {
    let text = '';
    b.stdout.on('data', (d) => {
      if (process.env.PROBE_BROKER_LOG) appendFileSync(process.env.PROBE_BROKER_LOG, d);
      text += d;
      const got = brokerAddresses(text);
      if (got.http && (opts.transport === 'http' || got.tcp)) resolve(got);
    });
    b.once('exit', (code) => reject(new Error(`broker exited with ${code}: ${err}`)));
  });
  return { proc: b, ...found };
}

function startConsumer(dir, cfg, topicPrefix) {
  const c = child([fileURLToPath(import.meta.url), '--role', 'consumer', '--config', JSON.stringify(cfg)], {
    PROBE_ROLE: 'consumer',
    PROBE_TOPIC: topicPrefix,
    PROBE_OUT: path.join(dir, 'consumer.json'),
  });
  let err = '';
  c.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  const waiters = new Map();
  const state = { seen: 0 };
  lines(c, (line) => {
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      return;
    }
    if (m.type === 'seen') state.seen = m.n;
    waiters.get(m.type)?.(m);
  });
  const next = (type) =>
    new Promise((resolve, reject) => {
      waiters.set(type, resolve);
      c.once('exit', (code) => reject(new Error(`consumer exited with ${code} waiting for ${type}: ${err}`)));
    });
  return { proc: c, state, next };
}

function body(seq, stamp) {
  const b = Buffer.alloc(opts.bodyBytes, 0x61);
  b.writeUInt32BE(seq, 0);
  if (stamp) b.writeBigInt64BE(process.hrtime.bigint(), 8);
  return b;
}

async function main() {
  process.env.PROBE_ROLE = 'producer';
  const { rec: producerRec, threadCpu } = await import('./latency-probe-hooks.mjs');
  const lib = await import(distUrl('index.js'));
  for (let run = 1; run <= opts.runs; run++) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-latency-probe-'));
    const tag = `${Date.now()}`;
    const topic = `ProbeLat_${tag}`;
    let broker;
    let consumer;
    let producer;
    try {
      let address;
      if (opts.kind === 'redis') {
        broker = await startRedis(dir);
        address = { redisPort: broker.port };
        producer = await redisProducer(broker.port, topic, `ProbeG_${tag}`);
      } else {
        broker = await startBroker(dir, topic);
        address = opts.transport === 'tcp' ? { namesrvAddr: broker.tcp } : { endpoints: broker.http };
        const admin = new lib.AdminClient({ endpoints: broker.http });
        await admin.createTopic(topic, { queueNums: 8 });
        if (opts.backlog > 0) await admin.createTopic(`Backlog_${tag}`, { queueNums: 8 });
        await admin.shutdown();
        producer = new lib.Producer({ ...address, sendMsgTimeoutMs: 30_000, ...producerOptions });
        await producer.start();
        if (opts.backlog > 0) await backlog(lib, producer, address, `Backlog_${tag}`);
      }
      consumer = startConsumer(dir, { ...address, kind: opts.kind, topic, group: `ProbeG_${tag}` }, topic);
      await consumer.next('ready');
      const sends = await publish(producer, topic);
      const total = sends.length;
      const deadline = nowMs() + 30_000;
      while (consumer.state.seen < total && nowMs() < deadline) await sleep(20);
      const done = consumer.next('done');
      consumer.proc.stdin.write('stop\n');
      const { seen } = await done;
      await exited(consumer.proc);
      await producer.shutdown();
      producer = undefined;
      broker.proc.kill('SIGTERM');
      await exited(broker.proc);
      const brokerRec =
        opts.kind === 'redis'
          ? { eld: [], gc: [], cpu: [], put: [], arrival: [], suspend: [], wake: [], get: [] }
          : JSON.parse(readFileSync(path.join(dir, 'broker.json'), 'utf8'));
      const consumerRec = JSON.parse(readFileSync(path.join(dir, 'consumer.json'), 'utf8'));
      producerRec.threads = threadCpu();
      const over = opts.kind === 'redis' ? 'redis-server (XADD, XREADGROUP COUNT 32, XACK)' : opts.transport;
      console.log(`\n## run ${run}: ${opts.kind} over ${over}, ${opts.rate} msg/s x ${opts.seconds} s`);
      report(sends, seen, brokerRec, consumerRec, producerRec);
    } finally {
      if (producer) await producer.shutdown().catch(() => undefined);
      for (const p of [consumer?.proc, broker?.proc]) if (p && p.exitCode === null) p.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  }
}

/** Sends `opts.backlog` messages to `topic` and drains them with a throw-away group. */
async function backlog(lib, producer, address, topic) {
  for (let from = 0; from < opts.backlog; from += 64) {
    const n = Math.min(64, opts.backlog - from);
    await producer.sendBatch(Array.from({ length: n }, (_, i) => ({ topic, body: body(from + i, false) })));
  }
  const c = new lib.PushConsumer({ ...address, consumerGroup: `Drain_${topic}`, consumeMessageBatchMaxSize: 32 });
  let got = 0;
  c.subscribe(topic, '*');
  c.registerMessageListener((msgs) => void (got += msgs.length));
  await c.start();
  while (got < opts.backlog) await sleep(50);
  await c.shutdown();
}

/** Open-loop publishing; per message [sentAt, ackAt, queueId, queueOffset]. */
async function publish(producer, topic) {
  const total = opts.rate * opts.seconds;
  const sends = new Array(total);
  const inflight = new Set();
  const start = nowMs();
  for (let i = 0; i < total; i++) {
    const wait = start + (i * 1000) / opts.rate - nowMs();
    if (wait > 1) await sleep(wait);
    const entry = [nowMs(), NaN, -1, -1];
    sends[i] = entry;
    const p = producer
      .send({ topic, body: body(i, true) })
      .then((r) => {
        entry[1] = nowMs();
        entry[2] = r.messageQueue.queueId;
        entry[3] = r.queueOffset;
      })
      .catch(() => undefined) // a failed send is reported as missing
      .finally(() => inflight.delete(p));
    inflight.add(p);
  }
  await Promise.all(inflight);
  return sends;
}

// ---------------------------------------------------------------- Redis Streams, the outside reference

/** Debian's redis-server on a free port in `dir`, no persistence. */
async function startRedis(dir) {
  const port = await new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port: p } = srv.address();
      srv.close(() => resolve(p));
    });
  });
  const args = ['--port', `${port}`, '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no'];
  const proc = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  await new Promise((resolve, reject) => {
    let text = '';
    proc.stdout.on('data', (d) => {
      text += d;
      if (/Ready to accept connections/.test(text)) resolve();
    });
    proc.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${text.slice(-500)}`)));
  });
  return { proc, port };
}

/** `send` and `shutdown` as the Producer's, on XADD; the group reads from the stream's end. */
async function redisProducer(port, topic, group) {
  const Redis = (await import('ioredis')).default;
  const r = new Redis({ host: '127.0.0.1', port });
  await r.xgroup('CREATE', topic, group, '$', 'MKSTREAM');
  return {
    send: (m) => r.xadd(m.topic, '*', 'd', m.body).then(() => ({ messageQueue: { queueId: 0 }, queueOffset: -1 })),
    shutdown: async () => void r.disconnect(),
  };
}

/** The consumer child's Redis side: XREADGROUP COUNT 32 BLOCK 200, then XACK, as bench/compare-worker.mjs. */
function redisConsumer(cfg, seen, stopping) {
  let r;
  let loop;
  return {
    ready: Promise.resolve(),
    async start() {
      const Redis = (await import('ioredis')).default;
      r = new Redis({ host: '127.0.0.1', port: cfg.redisPort });
    },
    loop() {
      loop = (async () => {
        while (!stopping()) {
          const res = await r.xreadgroupBuffer(...xreadgroupArgs(cfg.group, 'c0', cfg.topic));
          if (res === null) continue;
          const at = nowMs();
          const ids = [];
          for (const [id, fields] of res[0][1]) {
            ids.push(id);
            seen.push([fields[1].readUInt32BE(0), 0, -1, at]);
          }
          await r.xack(cfg.topic, cfg.group, ...ids);
        }
      })();
      return loop;
    },
    async shutdown() {
      await loop;
      r.disconnect();
    },
  };
}

// ---------------------------------------------------------------- the report

const pct = (sorted, p) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const f = (x) => (Number.isFinite(x) ? x.toFixed(x >= 100 ? 0 : x >= 10 ? 1 : 2) : '-');
const mean = (xs) => (xs.length === 0 ? NaN : xs.reduce((a, b) => a + b, 0) / xs.length);

function report(sends, seen, broker, consumer, producer) {
  const t0 = sends[0][0];
  const listenerAt = new Map(seen.map(([seq, , , at]) => [seq, at]));
  const putBySeq = new Map(broker.put.map(([seq, , , at, written]) => [seq, { at, written }]));
  const key = (q, o) => q * 1e9 + o;
  const arrival = new Map(broker.arrival.map(([q, o, at]) => [key(q, o), at]));
  const byQueue = (rows) => {
    const m = new Map();
    for (const r of rows) {
      if (!m.has(r[0])) m.set(r[0], []);
      m.get(r[0]).push(r);
    }
    return m;
  };
  const gets = byQueue(broker.get.filter((g) => g[5] === 'FOUND'));
  const pulls = byQueue(consumer.pull.filter((p) => p[5] === 'FOUND'));
  const wakes = byQueue(broker.wake);
  // The first row of `rows` (per queue, [q, from, next, start, end]) covering offset o and ending after t.
  const covering = (rows, o, t) => rows?.find((r) => r[1] <= o && o < r[2] && r[4] >= t);

  const msgs = [];
  for (let seq = 0; seq < sends.length; seq++) {
    const [sent, acked, q, o] = sends[seq];
    const heard = listenerAt.get(seq);
    if (heard === undefined) continue;
    const put = putBySeq.get(seq);
    const get = covering(gets.get(q), o, put?.written ?? 0);
    const pull = covering(pulls.get(q), o, get?.[4] ?? 0);
    const wake = get && wakes.get(q)?.find((w) => w[1] <= o && Math.abs(w[2] - get[3]) < 2);
    msgs.push({
      seq,
      sec: Math.floor((sent - t0) / 1000),
      lat: heard - sent,
      ack: acked - sent,
      steps: [
        put ? put.at - sent : NaN,
        put ? put.written - put.at : NaN,
        put ? (arrival.get(key(q, o)) ?? NaN) - put.written : NaN,
        get && put ? get[3] - put.written : NaN,
        get ? get[4] - get[3] : NaN,
        get && pull ? pull[4] - get[4] : NaN,
        pull ? heard - pull[4] : NaN,
      ],
      held: wake !== undefined,
    });
  }
  const missing = sends.length - msgs.length;
  const cpuUs = (rec, from, to) => {
    const within = rec.cpu.filter((e) => e.at - 50 >= from && e.at - 50 < to);
    const ms = within.reduce((a, e) => a + e.ms, 0);
    const sysMs = within.reduce((a, e) => a + e.sysMs, 0);
    const n = sends.filter((x) => x[0] >= from && x[0] < to).length;
    return `${f((ms * 1000) / n)} (system ${f((sysMs * 1000) / n)})`;
  };
  const end = sends.at(-1)[0];
  const threads = (rec) =>
    Object.entries(rec.threads ?? {})
      .map(([name, ms]) => `${name} ${f(ms)}`)
      .join(', ');
  console.log(`CPU ms per thread over the whole process life: producer: ${threads(producer)}`);
  console.log(`  broker: ${threads(broker)}`);
  console.log(`  consumer: ${threads(consumer)}`);
  for (const [label, from, to] of [
    ['first second', t0, t0 + 1000],
    ['after it', t0 + 1000, end],
  ]) {
    console.log(
      `CPU µs per message sent, ${label}: producer ${cpuUs(producer, from, to)} broker ${cpuUs(broker, from, to)} consumer ${cpuUs(consumer, from, to)}`,
    );
  }
  const sorted = msgs.map((m) => m.lat).sort((a, b) => a - b);
  console.log(`first send at ${f(t0)} ms (process.hrtime; CPU profiles count µs on the same clock)`);
  console.log(
    `all: n=${msgs.length} (missing ${missing}) p50 ${f(pct(sorted, 50))} p99 ${f(pct(sorted, 99))} ` +
      `p99.9 ${f(pct(sorted, 99.9))} max ${f(sorted.at(-1))} ms; send-ack p99 ${f(
        pct(
          msgs.map((m) => m.ack).sort((a, b) => a - b),
          99,
        ),
      )} ms`,
  );
  const eldMax = (rec, sec) =>
    Math.max(
      0,
      ...rec.eld
        .filter((e) => Math.floor((e.at - t0) / 1000) === sec || Math.floor((e.at - t0) / 1000) === sec + 1)
        .map((e) => e.max),
    );
  const gcIn = (rec, sec) => {
    const g = rec.gc.filter((e) => Math.floor((e.at - t0) / 1000) === sec);
    return `${g.length}/${f(g.reduce((a, e) => a + e.ms, 0))}/${f(Math.max(0, ...g.map((e) => e.ms)))}`;
  };
  const cpuIn = (rec, sec) =>
    rec.cpu.filter((e) => Math.floor((e.at - 50 - t0) / 1000) === sec).reduce((a, e) => a + e.ms, 0);
  console.log(
    'sec | n | p50 | p99 | max | ack p99 | loop delay max ms: producer broker consumer | GC n/total/max ms: producer broker consumer | CPU ms: producer broker consumer',
  );
  const secs = Math.max(...msgs.map((m) => m.sec)) + 1;
  for (let s = 0; s < secs; s++) {
    const ms = msgs.filter((m) => m.sec === s);
    const l = ms.map((m) => m.lat).sort((a, b) => a - b);
    const a = ms.map((m) => m.ack).sort((x, y) => x - y);
    console.log(
      `${s} | ${ms.length} | ${f(pct(l, 50))} | ${f(pct(l, 99))} | ${f(l.at(-1))} | ${f(pct(a, 99))} | ` +
        `${f(eldMax(producer, s))} ${f(eldMax(broker, s))} ${f(eldMax(consumer, s))} | ` +
        `${gcIn(producer, s)} ${gcIn(broker, s)} ${gcIn(consumer, s)} | ` +
        `${f(cpuIn(producer, s))} ${f(cpuIn(broker, s))} ${f(cpuIn(consumer, s))}`,
    );
  }
  // perf_hooks GC kinds: 1 minor (scavenge), 2 major (mark-compact), 4 incremental marking, 8 weak callbacks.
  const longestGc = (rec) =>
    [...rec.gc]
      .filter((g) => g.at >= t0 && g.at <= end)
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 4)
      .map((g) => `${f(g.ms)} ms kind ${g.kind} at +${f(g.at - t0)} ms`)
      .join('; ');
  console.log(`longest GC pauses: producer ${longestGc(producer)}`);
  console.log(`  broker ${longestGc(broker)}`);
  console.log(`  consumer ${longestGc(consumer)}`);
  const names = [
    'send->store',
    'store->written',
    'written->announced',
    'written->pull read',
    'pull read',
    'answer->consumer',
    'consumer->listener',
  ];
  const p99 = pct(sorted, 99);
  const tail = msgs.filter((m) => m.lat >= p99);
  const med = msgs.filter((m) => m.lat < pct(sorted, 60) && m.lat >= pct(sorted, 40));
  console.log(`steps (mean ms): ${names.join(' | ')}`);
  for (const [label, set] of [
    ['all', msgs],
    ['p40-60', med],
    ['>=p99', tail],
  ]) {
    const cols = names.map((_, i) => f(mean(set.map((m) => m.steps[i]).filter(Number.isFinite))));
    const held = set.filter((m) => m.held).length;
    console.log(`  ${label} (n=${set.length}, served by a woken held pull: ${held}): ${cols.join(' | ')}`);
  }
  // The start, closer: where in the first two seconds the slow messages were sent, and which step held them.
  console.log(`first 2 s by send time, per 100 ms: n | p50 | p99 | ack p99 | mean steps (${names.join(' | ')})`);
  for (let b = 0; b < 20; b++) {
    const set = msgs.filter((m) => Math.floor((sends[m.seq][0] - t0) / 100) === b);
    if (set.length === 0) continue;
    const l = set.map((m) => m.lat).sort((x, y) => x - y);
    const a = set.map((m) => m.ack).sort((x, y) => x - y);
    const cols = names.map((_, i) => f(mean(set.map((m) => m.steps[i]).filter(Number.isFinite))));
    console.log(
      `  +${b * 100} | ${set.length} | ${f(pct(l, 50))} | ${f(pct(l, 99))} | ${f(pct(a, 99))} | ${cols.join(' | ')}`,
    );
  }
}

if (opts.role !== 'consumer') await main();
