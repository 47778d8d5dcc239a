// Consumer memory: peak RSS, V8 heap used and Buffer memory (external, arrayBuffers) of a consumer
// process while (a) it only imports the SDK, (b) a slow listener works through a large backlog (flow
// control must bound what is held), (c) one consumer drains a backlog as fast as it can. The broker
// (the CLI) and each consumer run in child processes of their own, so each figure is that process's
// own; this process sends the backlog. Imports the compiled package (npm run build).
//
//   npm run build && node bench/consumer-memory.bench.mjs
//
// Env (defaults in brackets):
//   CM_PHASES [import,slow,drain]  CM_KINDS [push,lite]  CM_TRANSPORT [http] (or tcp)
//   CM_SLOW_MESSAGES [1000000]  CM_SLOW_SECONDS [20]  CM_SLOW_MS [5] (the push listener's delay per message,
//     consumeMessageBatchMaxSize 1, 20 at a time; the lite loop's per batch of up to 32)
//   CM_DRAIN_MESSAGES [200000]  CM_BODY_BYTES [1024]  CM_ROUNDS [1] (rounds alternate the kinds)
//   CM_CHILD_NODE_ARGS (node flags for the consumer children, e.g. --trace-gc; with --expose-gc each
//     sample collects garbage first, so the peaks are of live memory)
//   CM_ROOT [this checkout] (the package whose dist/ runs: broker, producer and the `ours` consumers)
//   CM_BASELINE (another checkout: its consumers run too, alternating with ours in every round; the
//     figures are then prefixed base. and ours.)
// One line per figure: name, value, unit. Besides the memory peaks (rss, heap_total, heap_used, external,
// array_buffers) each consumer reports its collections (gc.major = mark-compacts, gc.minor = scavenges,
// gc.time) and its CPU time (user + system) per message consumed, from its construction to the stop.
import { fork } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { constants as perfConstants, performance, PerformanceObserver } from 'node:perf_hooks';
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { sendBacklog, startCliBroker } from './bench-broker.mjs';

const env = (name, dflt) => (process.env[name] === undefined ? dflt : process.env[name]);
const PHASES = new Set(env('CM_PHASES', 'import,slow,drain').split(','));
const KINDS = env('CM_KINDS', 'push,lite').split(',');
const TRANSPORT = env('CM_TRANSPORT', 'http');
const SLOW_N = Number(env('CM_SLOW_MESSAGES', 1_000_000));
const SLOW_SECONDS = Number(env('CM_SLOW_SECONDS', 20));
const SLOW_MS = Number(env('CM_SLOW_MS', 5));
const DRAIN_N = Number(env('CM_DRAIN_MESSAGES', 200_000));
const BODY = Number(env('CM_BODY_BYTES', 1024));
const ROUNDS = Number(env('CM_ROUNDS', 1));
const QUEUES = 8;
if (TRANSPORT !== 'http' && TRANSPORT !== 'tcp') throw new Error(`CM_TRANSPORT must be http or tcp, got ${TRANSPORT}`);

const here = path.dirname(fileURLToPath(import.meta.url));
/** The package whose dist/ runs the broker and the producer: this one, or CM_ROOT. */
const root = path.resolve(env('CM_ROOT', path.resolve(here, '..')));
/**
 * The builds whose consumers are measured, interleaved in each round: this one (`ours`), and with
 * CM_BASELINE=<checkout> that checkout's dist/ too (`base`), e.g. CM_BASELINE=/work/main.
 */
const BUILDS = [
  ...(process.env.CM_BASELINE ? [{ name: 'base', root: path.resolve(process.env.CM_BASELINE) }] : []),
  { name: 'ours', root },
];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const MiB = 1048576;
const report = (name, value, unit) => console.log(`${name} ${Number(Number(value).toFixed(1))} ${unit}`);
const rssOf = (pid) => Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;

// ---- the consumer child ------------------------------------------------------------------------------
if (process.argv[2] === 'child') {
  const cfg = JSON.parse(process.argv[3]);
  const bare = process.memoryUsage().rss;
  const lib = await import(path.join(cfg.root, 'dist/index.js'));
  const imported = process.memoryUsage().rss;
  const peak = { rss: imported, heapTotal: 0, heapUsed: 0, external: 0, arrayBuffers: 0 };
  // Collections while consuming, by kind: how often V8 ran a full (mark-compact) collection explains how
  // much dead memory the peaks carry. CPU time covers the consumer from its construction on.
  const gcs = { minor: 0, major: 0, ms: 0 };
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      if (e.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MINOR) gcs.minor++;
      else if (e.detail?.kind === perfConstants.NODE_PERFORMANCE_GC_MAJOR) gcs.major++;
      gcs.ms += e.duration;
    }
  });
  let cpu0;
  let received = 0;
  // With CM_CHILD_NODE_ARGS=--expose-gc every sample collects first: the peaks are then live memory.
  const gc = globalThis.gc;
  const sample = () => {
    gc?.();
    const m = process.memoryUsage();
    for (const k of Object.keys(peak)) peak[k] = Math.max(peak[k], m[k]);
    if (trace && m.arrayBuffers > lastTraced * 1.2) {
      lastTraced = m.arrayBuffers;
      process.stderr.write(`# ${cfg.kind} ${cfg.phase}: ${JSON.stringify(m)}\n`);
    }
  };
  const trace = process.env.CM_TRACE === '1';
  let lastTraced = 1;
  const sampler = setInterval(sample, gc ? 250 : 50);
  const answer = () => {
    const cpu = process.cpuUsage(cpu0);
    return { type: 'report', bare, imported, peak, received, gcs, cpuMicros: cpu.user + cpu.system };
  };
  if (cfg.phase === 'import') {
    clearInterval(sampler);
    process.send(answer(), () => process.exit(0));
  } else {
    const common = {
      ...cfg.connect,
      consumerGroup: cfg.group,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      pullBatchSize: 32,
    };
    let stop;
    gcObserver.observe({ entryTypes: ['gc'] });
    cpu0 = process.cpuUsage();
    if (cfg.kind === 'push') {
      const c = new lib.PushConsumer({ ...common, consumeMessageBatchMaxSize: cfg.slowMs > 0 ? 1 : 32 });
      c.subscribe(cfg.topic, '*');
      c.registerMessageListener(async (msgs) => {
        if (cfg.slowMs > 0) await sleep(cfg.slowMs);
        received += msgs.length;
      });
      await c.start();
      stop = () => c.shutdown({ timeoutMs: 5000 });
    } else {
      const c = new lib.LitePullConsumer(common);
      c.subscribe(cfg.topic, '*');
      await c.start();
      let stopping = false;
      const loop = (async () => {
        for await (const _m of c.batches()) {
          if (cfg.slowMs > 0) await sleep(cfg.slowMs);
          received += _m.length;
          if (stopping) break;
        }
      })();
      stop = async () => {
        stopping = true;
        await c.shutdown();
        await loop;
      };
    }
    const progress = setInterval(() => process.send({ type: 'progress', received }), 100);
    process.on('message', async (msg) => {
      if (msg.type !== 'stop') return;
      clearInterval(progress);
      clearInterval(sampler);
      sample();
      const a = answer();
      gcObserver.disconnect();
      await stop();
      process.send(a, () => process.exit(0));
    });
  }
} else {
  await main();
}

function startConsumer(cfg) {
  const child = fork(fileURLToPath(import.meta.url), ['child', JSON.stringify(cfg)], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    execArgv: env('CM_CHILD_NODE_ARGS', '').split(' ').filter(Boolean),
  });
  const state = { child, received: 0, report: undefined };
  child.on('message', (m) => {
    if (m.type === 'progress') state.received = m.received;
    if (m.type === 'report') state.report = m;
  });
  state.exited = new Promise((r) => child.once('exit', r));
  return state;
}

async function finish(state) {
  state.child.send({ type: 'stop' });
  await state.exited;
  if (!state.report) throw new Error('the consumer child exited without a report');
  return state.report;
}

function printReport(prefix, r) {
  report(`${prefix}.rss.peak`, r.peak.rss / MiB, 'MiB');
  report(`${prefix}.heap_used.peak`, r.peak.heapUsed / MiB, 'MiB');
  report(`${prefix}.external.peak`, r.peak.external / MiB, 'MiB');
  report(`${prefix}.array_buffers.peak`, r.peak.arrayBuffers / MiB, 'MiB');
  report(`${prefix}.heap_total.peak`, r.peak.heapTotal / MiB, 'MiB');
  report(`${prefix}.gc.major`, r.gcs.major, 'collections');
  report(`${prefix}.gc.minor`, r.gcs.minor, 'collections');
  report(`${prefix}.gc.time`, r.gcs.ms, 'ms');
  if (r.received > 0) report(`${prefix}.cpu_per_msg`, r.cpuMicros / r.received, 'us');
}

async function backlog(admin, producer, topic, n) {
  await admin.createTopic(topic, { queueNums: QUEUES });
  await sendBacklog(producer, topic, n, BODY);
}

async function main() {
  console.log(
    `# consumer memory: ${TRANSPORT}, kinds ${KINDS.join(',')}, slow ${SLOW_N} x ${BODY} B for ${SLOW_SECONDS} s ` +
      `(${SLOW_MS} ms a message), drain ${DRAIN_N}, rounds ${ROUNDS}, node ${process.version}`,
  );
  const tag = (build) => (BUILDS.length === 1 ? '' : `${build.name}.`);
  if (PHASES.has('import')) {
    for (let round = 0; round < ROUNDS; round++) {
      for (const build of BUILDS) {
        const c = startConsumer({ phase: 'import', root: build.root });
        await c.exited;
        report(`${tag(build)}import.rss.bare`, c.report.bare / MiB, 'MiB');
        report(`${tag(build)}import.rss.sdk_imported`, c.report.imported / MiB, 'MiB');
      }
    }
  }
  if (!PHASES.has('slow') && !PHASES.has('drain')) return;
  const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-mem-'));
  const broker = await startCliBroker({ root, storePath, tcp: TRANSPORT === 'tcp' });
  const connect = TRANSPORT === 'http' ? { endpoints: broker.http } : { namesrvAddr: broker.tcp };
  const { AdminClient, Producer } = await import(path.join(root, 'dist/index.js'));
  const admin = new AdminClient({ endpoints: broker.http });
  const producer = new Producer({
    endpoints: broker.http,
    producerGroup: 'BenchMemProducer',
    sendMsgTimeoutMs: 30_000,
  });
  await producer.start();
  let brokerPeak = rssOf(broker.child.pid);
  const brokerSampler = setInterval(() => (brokerPeak = Math.max(brokerPeak, rssOf(broker.child.pid))), 100);
  try {
    if (PHASES.has('slow')) {
      const topic = 'BenchMemSlow';
      const t0 = performance.now();
      await backlog(admin, producer, topic, SLOW_N);
      console.log(`# slow backlog of ${SLOW_N} sent in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      for (let round = 0; round < ROUNDS; round++) {
        for (const kind of KINDS) {
          for (const build of BUILDS) {
            // A new group per consumer: each starts from the first offset of the same backlog.
            const c = startConsumer({
              phase: 'slow',
              kind,
              root: build.root,
              connect,
              topic,
              group: `BenchMemSlow_${kind}_${build.name}_${round}`,
              slowMs: SLOW_MS,
            });
            await sleep(SLOW_SECONDS * 1000);
            const r = await finish(c);
            printReport(`${tag(build)}${kind}.slow`, r);
            report(`${tag(build)}${kind}.slow.consumed`, r.received, 'msgs');
          }
        }
      }
    }
    if (PHASES.has('drain')) {
      const topic = 'BenchMemDrain';
      await backlog(admin, producer, topic, DRAIN_N);
      for (let round = 0; round < ROUNDS; round++) {
        for (const kind of KINDS) {
          for (const build of BUILDS) {
            const group = `BenchMemDrain_${kind}_${build.name}_${round}`;
            const c = startConsumer({ phase: 'drain', kind, root: build.root, connect, topic, group, slowMs: 0 });
            const t0 = performance.now();
            while (c.received < DRAIN_N) {
              if (c.child.exitCode !== null) throw new Error('the consumer child exited');
              await sleep(100);
            }
            const secs = (performance.now() - t0) / 1000;
            const r = await finish(c);
            printReport(`${tag(build)}${kind}.drain`, r);
            report(`${tag(build)}${kind}.drain.msg_per_s`, DRAIN_N / secs, 'msg/s');
          }
        }
      }
    }
    report('broker.rss.peak', brokerPeak / MiB, 'MiB');
  } finally {
    clearInterval(brokerSampler);
    await producer.shutdown();
    await admin.shutdown();
    broker.child.kill('SIGTERM');
    await new Promise((r) => broker.child.once('exit', r));
    rmSync(storePath, { recursive: true, force: true });
  }
}
