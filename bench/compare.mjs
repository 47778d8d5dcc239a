#!/usr/bin/env node
// The comparison harness: our PushConsumer and LitePullConsumer on the bundled CLI broker over HTTP and
// over TCP remoting, RocketMQ 4.9.8's Java client on RocketMQ 4.9.8's broker and on ours, our PushConsumer
// over TCP on RocketMQ 4.9.8's broker, the same two on RocketMQ 5.3.3 (its client and broker: the *-rocketmq5
// rows), and Redis Streams as an outside reference, in interleaved rounds (round 1 runs every system, then
// round 2 ...), printing one table of per-system medians and writing it with the machine and commit to
// bench/results/<date>-<commit>.{json,md}.
//
//   npm run bench -- --compare [flags]     (builds first)      node bench/compare.mjs [flags]
//   flags: --messages N [200000] --rounds R [3] --only a,b --rate MSG_PER_S [2000] --seconds S [20]
//          --body-bytes B [1024] --lite-loop iter|poll --no-results --help
//
// Per system and round: a fresh broker (temp store), a backlog of N messages (each carries its sequence
// number) drained three times by new groups (1 consumer; 4 consumers in 1 process; 4 in 2 processes),
// counting every delivery per sequence (duplicates, missing); then a latency run at RATE msg/s for S s,
// publish-to-listener from the first message (the consumer holds its queues before the first send).
// Consumers run in child processes (bench/compare-worker.mjs); CPU comes from /proc/<pid>/stat over the
// drain, peak RSS from sampling /proc/<pid>/status. Systems whose tools are missing are skipped with a line.
// Everything started (brokers, kit servers, redis-server, children, temp dirs) is stopped and removed,
// also on Ctrl-C and on failure.
import { Buffer } from 'node:buffer';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import {
  DRAINS,
  SeqCounter,
  brokerAddresses,
  UsageError,
  cpuTicksFromStat,
  findKitDir,
  formatTable,
  latencySummary,
  parseArgs,
  parseJavaDrain,
  parseJavaLatency,
  ppidFromStat,
  secondHalfRate,
  statusBytes,
  summarise,
} from './compare-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/**
 * The RocketMQ kits (NameServer, broker, mqadmin, Java client; the same bin/ scripts). `drainProgram` is
 * how the Java rows run Drain.java with the kit's client (see runJavaBench). Only the 4.9.8 kit has
 * bench/ (Drain.java and bench/run); the 5.3.3 rows compile that same Drain.java against 5.3.3's client.
 */
const KIT4 = {
  release: '4.9.8',
  variable: 'RMQ_KIT_DIR',
  dir: findKitDir(root, process.env.RMQ_KIT_DIR, existsSync),
  drainProgram: benchRunProgram,
};
const KIT5 = {
  release: '5.3.3',
  variable: 'RMQ5_KIT_DIR',
  dir: findKitDir(root, process.env.RMQ5_KIT_DIR, existsSync, 'rocketmq5-java'),
  drainProgram: compiledDrainProgram,
};
const DRAIN_JAVA = path.join(KIT4.dir, 'bench/Drain.java');
/** The kit whose broker a system runs on: `*-on-rocketmq` 4.9.8, `*-on-rocketmq5` 5.3.3; else undefined. */
const kitOf = (system) =>
  system.endsWith('-on-rocketmq5') ? KIT5 : system.endsWith('-on-rocketmq') ? KIT4 : undefined;
/** Where the kit's servers may listen (RMQ_NAMESRV_PORT / RMQ_BROKER_PORT pin them). */
const KIT_PORT_RANGE = [34000, 34999];
const QUEUES = 8;
const CLK_TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

let opts;
try {
  opts = parseArgs(process.argv.slice(2));
} catch (e) {
  if (!(e instanceof UsageError)) throw e;
  console.error(e.message);
  process.exit(2);
}
if (opts.help) {
  console.log(opts.usage);
  process.exit(0);
}

const nowMs = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const log = (line) => console.log(`# ${line}`);

// ---------------------------------------------------------------- cleanup (normal path, failure, Ctrl-C)

/** Everything started and not yet released: each entry stops one thing synchronously. */
const live = new Set();
function hold(name, release) {
  const entry = { name, release };
  live.add(entry);
  return () => {
    if (!live.delete(entry)) return;
    release();
  };
}
function releaseAll() {
  for (const entry of [...live].reverse()) {
    live.delete(entry);
    try {
      entry.release();
    } catch (e) {
      console.error(`# cleanup of ${entry.name} failed: ${e.message}`);
    }
  }
}
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    console.error(`# ${sig}: stopping everything the harness started`);
    releaseAll();
    process.exit(130);
  });
}

function tempDir(prefix) {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  const release = hold(`temp dir ${dir}`, () => rmSync(dir, { recursive: true, force: true }));
  return { dir, release };
}

const killQuietly = (pid, sig) => {
  try {
    process.kill(pid, sig);
  } catch {
    // already gone
  }
};

/** Resolves when the child has exited (at once if it already has). */
const exited = (child) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));

/** TERM, then KILL after `graceMs`; resolves when the child is gone. */
async function stopChild(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited(child);
  clearTimeout(timer);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

// ---------------------------------------------------------------- /proc

const readProc = (pid, file) => {
  try {
    return readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return undefined;
  }
};
/** CPU time (user + system) of a process, µs; NaN once it is gone. */
const cpuUs = (pid) => {
  const stat = readProc(pid, 'stat');
  return stat === undefined ? NaN : (cpuTicksFromStat(stat) * 1e6) / CLK_TCK;
};
const rssBytes = (pid) => statusBytes(readProc(pid, 'status') ?? '', 'VmRSS');

/** The pids of `pid`'s descendants whose command name is `comm`. */
function descendants(pid, comm) {
  const parent = new Map();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const stat = readProc(d, 'stat');
    if (stat !== undefined)
      parent.set(Number(d), {
        ppid: ppidFromStat(stat),
        comm: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
      });
  }
  const found = [];
  for (const [p, info] of parent) {
    let up = info.ppid;
    while (up > 1 && up !== pid) up = parent.get(up)?.ppid ?? 0;
    if (up === pid && info.comm === comm) found.push(p);
  }
  return found;
}

/** Samples VmRSS of some processes every 100 ms; `peak(key)` is the highest value seen for that key. */
class RssSampler {
  constructor() {
    this.pids = new Map();
    this.peaks = new Map();
    this.timer = setInterval(() => this.sample(), 100);
  }
  watch(key, pid) {
    this.pids.set(key, pid);
    this.sample();
  }
  sample() {
    for (const [key, pid] of this.pids) {
      const v = rssBytes(pid);
      if (Number.isFinite(v)) this.peaks.set(key, Math.max(this.peaks.get(key) ?? 0, v));
    }
  }
  peak(key) {
    return this.peaks.get(key) ?? NaN;
  }
  stop() {
    this.sample();
    clearInterval(this.timer);
  }
}

// ---------------------------------------------------------------- servers

/** Our CLI broker as a child process with a temp store; HTTP on a free port, remoting on one when asked. */
async function startOurBroker(remoting) {
  const cli = path.join(root, 'dist/cli.js');
  const store = tempDir('rmq-compare-store-');
  const args = [cli, 'broker', '--store', store.dir, '--port', '0', '--log-level', 'warn'];
  if (remoting) args.push('--remoting-port', '0');
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  const releaseChild = hold(`broker pid ${child.pid}`, () => killQuietly(child.pid, 'SIGKILL'));
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  const addresses = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const found = brokerAddresses(out);
      if (found.http && (!remoting || found.tcp)) resolve(found);
    });
    child.once('exit', (code) => reject(new Error(`our broker exited with ${code} before serving: ${err.trim()}`)));
  });
  return {
    pid: child.pid,
    ...addresses,
    async close() {
      await stopChild(child);
      releaseChild();
      store.release();
    },
  };
}

/** True when 127.0.0.1:port can be listened on now. */
const portFree = (port) =>
  new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen(port, '127.0.0.1', () => srv.close(() => resolve(true)));
  });

/**
 * Ports for the kit: the NameServer's, and a broker port whose fast port (port - 2) and HA port
 * (port + 1) are free too. Taken from KIT_PORT_RANGE at random (the range lies among the ephemeral
 * ports, so any of them may be held by an outgoing connection for a while), or from the environment.
 */
async function kitPorts() {
  if (process.env.RMQ_NAMESRV_PORT && process.env.RMQ_BROKER_PORT) {
    return { namesrv: process.env.RMQ_NAMESRV_PORT, broker: process.env.RMQ_BROKER_PORT };
  }
  const [lo, hi] = KIT_PORT_RANGE;
  for (let attempt = 0; attempt < 50; attempt++) {
    const ns = lo + Math.floor(Math.random() * (hi - lo - 10));
    const broker = ns + 5;
    const all = [ns, broker - 2, broker, broker + 1];
    if ((await Promise.all(all.map(portFree))).every(Boolean)) return { namesrv: `${ns}`, broker: `${broker}` };
  }
  throw new Error(`no free ports for the kit in ${lo}-${hi}`);
}

/** A kit's NameServer and broker (KIT4 or KIT5) in a temp state dir; a port clash is retried. */
async function startKit(kit, attempts = 3) {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startKitOnce(kit, await kitPorts());
    } catch (e) {
      if (attempt >= attempts || !/Address already in use|port .*(in use|taken)/i.test(String(e.message))) throw e;
      log(`kit start-up hit a port in use; trying other ports (${attempt}/${attempts})`);
    }
  }
}

async function startKitOnce(kit, ports) {
  const home = tempDir('rmq-compare-kit-');
  const env = {
    ...process.env,
    RMQ_NAMESRV_PORT: ports.namesrv,
    RMQ_BROKER_PORT: ports.broker,
    RMQ_HOME_DIR: path.join(home.dir, 'state'),
    RMQ_CLIENT_DIR: path.join(home.dir, 'client'),
    RMQ_STOP_TIMEOUT: '0',
    RMQ_JAVA_OPTS: '-Dtls.server.mode=disabled',
    RMQ_BROKER_HEAP: '-Xms1g -Xmx1g',
    RMQ_NAMESRV_HEAP: '-Xms256m -Xmx256m',
  };
  const stopKit = () => {
    try {
      execFileSync(path.join(kit.dir, 'bin/stop'), ['--clean'], { env, stdio: 'ignore' });
    } catch (e) {
      console.error(`# ${kit.release} kit stop failed: ${e.message}`);
    }
  };
  const releaseKit = hold(`${kit.release} kit servers`, stopKit);
  const run = (script, args = []) =>
    execFileSync(path.join(kit.dir, script), args, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  try {
    run('bin/start-namesrv');
    const out = run('bin/start-broker');
    const pid = Number(/pid (\d+)/.exec(out)?.[1]);
    return {
      pid,
      namesrvAddr: `127.0.0.1:${ports.namesrv}`,
      env,
      createTopic(topic) {
        const res = run('bin/mqadmin', [
          'updateTopic',
          '-c',
          'DefaultCluster',
          '-t',
          topic,
          '-r',
          `${QUEUES}`,
          '-w',
          `${QUEUES}`,
        ]);
        if (!/success/.test(res)) throw new Error(`mqadmin updateTopic ${topic} failed: ${res.trim()}`);
      },
      async close() {
        releaseKit();
        home.release();
      },
    };
  } catch (e) {
    releaseKit();
    home.release();
    // execFileSync's message holds the script's stdout and stderr: keep the lines that say what went wrong.
    const detail = `${e.stdout ?? ''}${e.stderr ?? ''}`
      .split('\n')
      .filter((l) => !/^\s+at /.test(l))
      .join(' / ');
    throw new Error(`${kit.release} kit start-up failed: ${detail || e.message}`);
  }
}

/**
 * Debian's redis-server on a free port, in a temp dir, with its append-only file synced every second (the
 * durable setting, as our broker's store writes every message to disk).
 */
async function startRedis() {
  const dir = tempDir('rmq-compare-redis-');
  const port = await freePort();
  const child = spawn(
    'redis-server',
    [
      '--port',
      `${port}`,
      '--bind',
      '127.0.0.1',
      '--dir',
      dir.dir,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfsync',
      'everysec',
      '--daemonize',
      'no',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const releaseChild = hold(`redis-server pid ${child.pid}`, () => killQuietly(child.pid, 'SIGKILL'));
  await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (/Ready to accept connections/.test(out)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`redis-server exited with ${code}: ${out.slice(-500)}`)));
  });
  return {
    pid: child.pid,
    port,
    async close() {
      await stopChild(child);
      releaseChild();
      dir.release();
    },
  };
}

// ---------------------------------------------------------------- message bodies and producers

function seqBody(seq) {
  const b = Buffer.alloc(opts.bodyBytes, 0x61);
  b.writeUInt32BE(seq, 0);
  return b;
}
function stampedBody(seq) {
  const b = seqBody(seq);
  b.writeBigInt64BE(process.hrtime.bigint(), 8);
  return b;
}

/** A producer for one system: `preload(topic)` sends sequences 0..N-1; `sendOne(topic, body)` one message. */
async function ourProducer(address) {
  const { Producer } = await import('../dist/index.js');
  const p = new Producer({ ...address, defaultTopicQueueNums: QUEUES, sendMsgTimeoutMs: 30_000 });
  await p.start();
  return {
    async preload(topic) {
      let next = 0;
      const worker = async () => {
        while (next < opts.messages) {
          const from = next;
          const n = Math.min(64, opts.messages - from);
          next += n;
          await p.sendBatch(Array.from({ length: n }, (_, i) => ({ topic, body: seqBody(from + i) })));
        }
      };
      await Promise.all(Array.from({ length: 4 }, worker));
    },
    sendOne: (topic, body) => p.send({ topic, body }),
    close: () => p.shutdown(),
  };
}

async function redisProducer(port) {
  const Redis = (await import('ioredis')).default;
  const r = new Redis({ host: '127.0.0.1', port });
  return {
    async preload(topic) {
      for (let from = 0; from < opts.messages; from += 1000) {
        const pipe = r.pipeline();
        for (let s = from; s < Math.min(opts.messages, from + 1000); s++) pipe.xadd(topic, '*', 'd', seqBody(s));
        await pipe.exec();
      }
    },
    sendOne: (topic, body) => r.xadd(topic, '*', 'd', body),
    createGroup: (topic, group, from) => r.xgroup('CREATE', topic, group, from, 'MKSTREAM'),
    close: async () => void r.disconnect(),
  };
}

// ---------------------------------------------------------------- consumer worker processes

function startWorker(config) {
  const child = spawn(process.execPath, [path.join(root, 'bench/compare-worker.mjs'), JSON.stringify(config)], {
    stdio: ['pipe', 'pipe', 'pipe'],
    cwd: root,
  });
  const release = hold(`worker pid ${child.pid}`, () => killQuietly(child.pid, 'SIGKILL'));
  let err = '';
  child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
  const waiters = [];
  const w = {
    pid: child.pid,
    progress: { deliveries: 0, distinct: 0, received: 0 },
    failure: undefined,
    /** Resolves with the next message of this type. */
    next(type) {
      if (w.failure) return Promise.reject(w.failure);
      return new Promise((resolve, reject) => waiters.push({ type, resolve, reject }));
    },
    command: (cmd) => child.stdin.write(`${cmd}\n`),
    async close() {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited(child);
      clearTimeout(timer);
      release();
    },
  };
  const fail = (e) => {
    w.failure = e;
    for (const x of waiters.splice(0)) x.reject(e);
  };
  createInterface({ input: child.stdout }).on('line', (line) => {
    let msg;
    try {
      msg = JSON.parse(line);
    } catch {
      return; // a stray line from a library
    }
    if (msg.type === 'progress') w.progress = msg;
    if (msg.type === 'error') fail(new Error(`worker ${child.pid}: ${msg.message}`));
    const i = waiters.findIndex((x) => x.type === msg.type);
    if (i >= 0) waiters.splice(i, 1)[0].resolve(msg);
  });
  // 'close' (not 'exit'): by then every line the worker wrote has been read, so a waiter still pending
  // at that point will never be answered.
  child.once('close', (code, signal) => {
    // A worker that ends while something still waits for it has failed, whatever its exit code.
    if (code !== 0 || waiters.length > 0) {
      const how = signal ? `signal ${signal}` : `code ${code}`;
      fail(new Error(`worker ${child.pid} exited (${how}): ${err.trim().split('\n').slice(-5).join(' / ')}`));
    }
  });
  return w;
}

/**
 * Drains the backlog in `topic` with `consumers` consumers in `processes` worker processes of one new
 * group, until every sequence has been delivered (or nothing new came for 60 s).
 */
async function drainWith(sys, topic, group, consumers, processes, brokerPid) {
  const workers = [];
  const rss = new RssSampler();
  try {
    for (let p = 0; p < processes; p++) {
      const mine = Math.floor(consumers / processes) + (p < consumers % processes ? 1 : 0);
      workers.push(
        startWorker({
          ...sys.worker,
          topic,
          group,
          consumers: mine,
          mode: 'drain',
          messages: opts.messages,
          queues: QUEUES,
          liteLoop: opts.liteLoop,
        }),
      );
    }
    await Promise.all(workers.map((w) => w.next('loaded')));
    workers.forEach((w, i) => rss.watch(`consumer${i}`, w.pid));
    const cpu0 = workers.map((w) => cpuUs(w.pid));
    const broker0 = cpuUs(brokerPid);
    for (const w of workers) w.command('go');
    const merged = new SeqCounter(opts.messages);
    let counts = [];
    let lastGain = nowMs();
    let lastDistinct = 0;
    for (;;) {
      await sleep(100);
      if (workers.some((w) => w.failure)) throw workers.find((w) => w.failure).failure;
      const sum = workers.reduce((s, w) => s + w.progress.distinct, 0);
      if (sum > lastDistinct) {
        lastDistinct = sum;
        lastGain = nowMs();
      }
      const stalled = nowMs() - lastGain > 60_000;
      if (sum < opts.messages && !stalled) continue;
      counts = await Promise.all(workers.map((w) => (w.command('counts'), w.next('counts'))));
      merged.counts.fill(0);
      merged.distinct = 0;
      merged.deliveries = 0;
      for (const c of counts) merged.merge(c.counts);
      if (merged.distinct >= opts.messages || stalled) break;
    }
    const cpu1 = workers.map((w) => cpuUs(w.pid));
    const broker1 = cpuUs(brokerPid);
    if (merged.distinct === 0) throw new Error(`no message delivered in 60 s (${topic}, group ${group})`);
    const firstAt = Math.min(...counts.map((c) => c.firstAt).filter((x) => x > 0));
    const lastAt = Math.max(...counts.map((c) => c.lastNewAt));
    const startAt = Math.min(...counts.map((c) => c.startAt));
    const s = merged.summary();
    const consumerCpu = cpu1.reduce((a, v, i) => a + v - cpu0[i], 0);
    for (const w of workers) w.command('stop');
    await Promise.all(workers.map((w) => w.next('done')));
    return {
      msgPerS: (s.distinct / (lastAt - firstAt)) * 1000,
      msgPerSFromStart: (s.distinct / (lastAt - startAt)) * 1000,
      secondHalfMsgPerS: secondHalfRate(
        counts.map((c) => c.milestones ?? []),
        opts.messages,
        lastAt,
      ),
      deliveries: merged.deliveries,
      distinct: s.distinct,
      duplicates: s.duplicates,
      missing: s.missing,
      consumerCpuUsPerMsg: consumerCpu / opts.messages,
      brokerCpuUsPerMsg: (broker1 - broker0) / opts.messages,
      consumerRssBytes: Math.max(...workers.map((_, i) => rss.peak(`consumer${i}`))),
    };
  } finally {
    rss.stop();
    await Promise.all(workers.map((w) => w.close()));
  }
}

/**
 * Publishes at `opts.rate` for `opts.seconds` (open loop) to one consumer, ready (or just starting, with
 * `--sends-from start`); publish-to-listener ms.
 */
async function latencyWith(sys, producer, topic, group) {
  const w = startWorker({
    ...sys.worker,
    topic,
    group,
    consumers: 1,
    mode: 'latency',
    messages: 0,
    queues: QUEUES,
    liteLoop: opts.liteLoop,
  });
  try {
    await w.next('loaded');
    w.command('go');
    // --sends-from start: the first send goes as the consumer's start() is called, as after a deploy.
    if (opts.sendsFrom === 'ready') await w.next('ready');
    const total = opts.rate * opts.seconds;
    const start = nowMs();
    const inflight = new Set();
    let sendFailures = 0;
    const acks = [];
    for (let i = 0; i < total; i++) {
      const wait = start + (i * 1000) / opts.rate - nowMs();
      if (wait > 1) await sleep(wait);
      const sentAt = nowMs();
      const p = producer
        .sendOne(topic, stampedBody(i))
        .then(() => acks.push(nowMs() - sentAt))
        .catch(() => sendFailures++)
        .finally(() => inflight.delete(p));
      inflight.add(p);
    }
    const sendSeconds = (nowMs() - start) / 1000;
    await Promise.all(inflight);
    const deadline = nowMs() + 30_000;
    while (w.progress.received < total - sendFailures && nowMs() < deadline) {
      if (w.failure) throw w.failure;
      await sleep(50);
    }
    w.command('stop');
    const done = await w.next('done');
    const buf = Buffer.from(done.latencies, 'base64');
    const samples = new Float64Array(buf.buffer, buf.byteOffset, buf.length / 8);
    const seqBuf = Buffer.from(done.seqs, 'base64');
    const seqs = new Uint32Array(seqBuf.buffer, seqBuf.byteOffset, seqBuf.length / 4);
    // The messages sent in the first second against the rest: how much of the tail is start-up.
    const firstSecond = latencySummary(samples.filter((_, i) => seqs[i] < opts.rate));
    const afterFirstSecond = latencySummary(samples.filter((_, i) => seqs[i] >= opts.rate));
    // How long the broker took to acknowledge the sends: the part of the latency before the consumer.
    const sendAck = latencySummary(acks);
    return {
      ...latencySummary(samples),
      firstSecond,
      afterFirstSecond,
      sent: total,
      sendFailures,
      achievedRate: total / sendSeconds,
      sendAck,
    };
  } finally {
    await w.close();
  }
}

// ---------------------------------------------------------------- systems

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
const ioredisPresent = async () => {
  try {
    await import('ioredis');
    return true;
  } catch {
    return false;
  }
};

/** Why a system cannot run here, or undefined. */
async function missingTool(system) {
  const needsDist = system.startsWith('ours') || system === 'java-on-ours';
  if (needsDist && !existsSync(path.join(root, 'dist/cli.js'))) return 'dist/ is not built (npm run build)';
  // java-on-ours runs the 4.9.8 client on our broker; every Java row needs the 4.9.8 kit's Drain.java.
  const kits = new Set([kitOf(system), system.startsWith('java') ? KIT4 : undefined].filter(Boolean));
  for (const kit of kits) {
    if (!existsSync(path.join(kit.dir, 'bin/start-broker')))
      return `no RocketMQ ${kit.release} kit at ${kit.dir} (set ${kit.variable})`;
    const jars = spawnSync(path.join(kit.dir, 'bin/classpath'), { encoding: 'utf8' });
    if (jars.status !== 0) return `the ${kit.release} kit cannot run: ${jars.stderr?.trim() || 'bin/classpath failed'}`;
  }
  if (kits.size > 0 && !has('java')) return 'no java on PATH';
  if (system.startsWith('java')) {
    if (!existsSync(DRAIN_JAVA)) return `no ${DRAIN_JAVA} (the Java rows run it)`;
    if (!has('javac')) return 'no javac on PATH (the Java rows compile Drain.java)';
  }
  if (system === 'redis-streams') {
    if (!has('redis-server')) return 'no redis-server on PATH (apt-get install -y redis-server)';
    if (!(await ioredisPresent())) return 'ioredis is not installed (npm install)';
  }
  return undefined;
}

/** One round of a node-consumer system: fresh server, backlog, three drains, latency run. */
async function runNodeSystem(system, round) {
  const tag = `${system.replace(/[^a-z0-9]/g, '')}_r${round}_${Date.now()}`;
  const drainTopic = `CmpDrain_${tag}`;
  const latTopic = `CmpLat_${tag}`;
  let server;
  let producer;
  const brokerRss = new RssSampler();
  try {
    let sys;
    if (system === 'redis-streams') {
      server = await startRedis();
      sys = { worker: { kind: 'redis', redisPort: server.port } };
      producer = await redisProducer(server.port);
    } else if (kitOf(system)) {
      server = await startKit(kitOf(system));
      sys = { worker: { kind: 'push', namesrvAddr: server.namesrvAddr } };
      server.createTopic(drainTopic);
      server.createTopic(latTopic);
      producer = await ourProducer({ namesrvAddr: server.namesrvAddr });
    } else {
      const tcp = system.startsWith('ours-tcp');
      server = await startOurBroker(tcp);
      const { AdminClient } = await import('../dist/index.js');
      const admin = new AdminClient({ endpoints: server.http });
      await admin.createTopic(drainTopic, { queueNums: QUEUES });
      await admin.createTopic(latTopic, { queueNums: QUEUES });
      await admin.shutdown();
      const address = tcp ? { namesrvAddr: server.tcp } : { endpoints: server.http };
      sys = { worker: { kind: system.endsWith('lite') ? 'lite' : 'push', ...address } };
      producer = await ourProducer(address);
    }
    brokerRss.watch('broker', server.pid);
    const t0 = nowMs();
    await producer.preload(drainTopic);
    const preloadMsgPerS = (opts.messages / (nowMs() - t0)) * 1000;
    const drains = {};
    for (const d of DRAINS) {
      const group = `CmpG_${d.key}_${tag}`;
      if (system === 'redis-streams') await producer.createGroup(drainTopic, group, '0');
      drains[d.key] = await drainWith(sys, drainTopic, group, d.consumers, d.processes, server.pid);
      log(`${system} round ${round} ${d.label}: ${describeDrain(drains[d.key])}`);
    }
    const latGroup = `CmpGLat_${tag}`;
    if (system === 'redis-streams') await producer.createGroup(latTopic, latGroup, '$');
    const latency = await latencyWith(sys, producer, latTopic, latGroup);
    log(`${system} round ${round} latency: ${describeLatency(latency)}`);
    brokerRss.stop();
    return { preloadMsgPerS, drains, latency, brokerRssBytes: brokerRss.peak('broker') };
  } finally {
    brokerRss.stop();
    await producer?.close();
    await server?.close();
  }
}

/**
 * Runs Drain.java (`drain N` / `latency RATE SECS`) with `kit`'s Java client against the NameServer and
 * broker that `env` names (RMQ_NAMESRV_PORT, RMQ_BROKER_PORT; heap RMQ_BENCH_HEAP), resolving with its
 * stdout. `onLine` sees each stdout line and the launcher's pid; when it returns 'abort' the run is killed
 * and resolves with undefined. The compiled classes live in a temp dir removed afterwards, also on failure.
 */
async function runJavaBench(kit, env, args, onLine) {
  const tmp = tempDir('rmq-compare-javac-');
  try {
    return await runProgram(await kit.drainProgram(kit, env, args, tmp.dir), onLine);
  } finally {
    tmp.release();
  }
}

/** The 4.9.8 kit's `bench/run ARGS`: it compiles Drain.java into a mktemp dir under TMPDIR (`tmp`) and runs it. */
async function benchRunProgram(kit, env, args, tmp) {
  return {
    name: `bench/run ${args.join(' ')}`,
    file: path.join(kit.dir, 'bench/run'),
    args,
    env: { ...env, TMPDIR: tmp },
  };
}

/**
 * What bench/run does, for a kit without bench/ (5.3.3): the 4.9.8 kit's Drain.java compiled against this
 * kit's client class path into `tmp`, run by this kit's bin/java-client with bench/run's heap, GC and
 * -Dns / -Dbroker.
 */
async function compiledDrainProgram(kit, env, args, tmp) {
  const classpath = execFileSync(path.join(kit.dir, 'bin/classpath'), { env, encoding: 'utf8' }).trim();
  await runProgram({
    name: `javac Drain.java (RocketMQ ${kit.release} client)`,
    file: 'javac',
    args: ['-nowarn', '-d', tmp, '-cp', classpath, DRAIN_JAVA],
    env,
  });
  const heap = (env.RMQ_BENCH_HEAP ?? '-Xms1g -Xmx1g').split(/\s+/).filter(Boolean);
  return {
    name: `Drain ${args.join(' ')} (RocketMQ ${kit.release} client)`,
    file: path.join(kit.dir, 'bin/java-client'),
    args: [
      ...heap,
      '-XX:+UseG1GC',
      `-Dns=127.0.0.1:${env.RMQ_NAMESRV_PORT}`,
      `-Dbroker=127.0.0.1:${env.RMQ_BROKER_PORT}`,
      '-cp',
      tmp,
      'Drain',
      ...args,
    ],
    env,
  };
}

/**
 * Runs `program` ({ name, file, args, env }) in its own process group, resolving with its stdout; see
 * runJavaBench for `onLine`. The group is killed when the harness stops, and after 30 minutes.
 */
function runProgram(program, onLine) {
  return new Promise((resolve, reject) => {
    const child = spawn(program.file, program.args, {
      env: program.env,
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    const release = hold(`${program.name} pid ${child.pid}`, () => killQuietly(-child.pid, 'SIGKILL'));
    let out = '';
    let err = '';
    let aborted = false;
    child.stderr.on('data', (d) => (err = (err + d).slice(-4000)));
    createInterface({ input: child.stdout }).on('line', (line) => {
      out += `${line}\n`;
      if (/^(preload|drain|warm-up|latency|publish->listener all)/.test(line)) log(`  java: ${line}`);
      if (onLine?.(line, child.pid) === 'abort') {
        aborted = true;
        killQuietly(-child.pid, 'SIGKILL');
      }
    });
    const timer = setTimeout(() => killQuietly(-child.pid, 'SIGKILL'), 30 * 60_000);
    child.once('error', (e) => {
      clearTimeout(timer);
      release();
      reject(new Error(`${program.name}: ${e.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      release();
      if (code === 0) resolve(out);
      else if (aborted) resolve(undefined);
      else
        reject(
          new Error(`${program.name} exited with ${code}: ${(err || out).trim().split('\n').slice(-3).join(' / ')}`),
        );
    });
  });
}

/** The JVM of a Java run: `pid` itself when the launcher exec'd java (bin/java-client), else its java descendant. */
const javaProcess = (pid) => (readProc(pid, 'comm')?.trim() === 'java' ? pid : descendants(pid, 'java')[0]);

/**
 * One round of a Java client with Drain.java: RocketMQ 4.9.8's on its broker or on ours, or 5.3.3's on
 * its broker.
 */
async function runJavaSystem(system, round) {
  // The broker's kit, whose client runs too; java-on-ours runs the 4.9.8 client.
  const kit = kitOf(system);
  const client = kit ?? KIT4;
  let server;
  const rss = new RssSampler();
  try {
    let env;
    if (kit) {
      server = await startKit(kit);
      env = { ...server.env, RMQ_BENCH_HEAP: '-Xms1g -Xmx1g' };
    } else {
      server = await startOurBroker(true);
      const port = server.tcp.split(':').pop();
      const home = tempDir('rmq-compare-java-client-');
      server.clientDir = home;
      // Our broker answers as NameServer on its remoting port too: both addresses point at it.
      env = {
        ...process.env,
        RMQ_NAMESRV_PORT: port,
        RMQ_BROKER_PORT: port,
        RMQ_CLIENT_DIR: home.dir,
        RMQ_BENCH_HEAP: '-Xms1g -Xmx1g',
      };
    }
    rss.watch('broker', server.pid);
    let cpu0;
    let cpu1;
    let javaPid;
    let drainOut;
    // Drain.java waits 600 s for sends its preload lost (a loaded machine times some out), then reports
    // TIMEOUT: so a first attempt whose preload lost sends is stopped and run again on a new topic.
    for (let attempt = 1; drainOut === undefined; attempt++) {
      drainOut = await runJavaBench(client, env, ['drain', `${opts.messages}`], (line, pid) => {
        if (line.startsWith('preload:')) {
          const failed = Number(/failed=(\d+)/.exec(line)?.[1] ?? 0);
          if (failed > 0 && attempt < 2) {
            log(`  ${system}: ${failed} preload sends failed; running the Java drain again on a new topic`);
            return 'abort';
          }
          if (failed > 0) log(`  ${system}: ${failed} preload sends failed; Drain.java waits its 600 s for them`);
          javaPid = javaProcess(pid);
          if (javaPid !== undefined) rss.watch('consumer', javaPid);
          cpu0 = { consumer: cpuUs(javaPid), broker: cpuUs(server.pid) };
        } else if (line.startsWith('drain:') && cpu1 === undefined) {
          cpu1 = { consumer: cpuUs(javaPid), broker: cpuUs(server.pid) };
        }
        return undefined;
      });
    }
    const d = parseJavaDrain(drainOut);
    if (d === undefined) throw new Error(`no drain figures in the Java output: ${drainOut.slice(-500)}`);
    // An incomplete drain (Drain.java gave up after its 600 s) has no meaningful rate or CPU per message.
    const c1 = {
      complete: d.complete,
      preloadFailed: d.preloadFailed,
      msgPerS: d.complete ? d.msgPerS : NaN,
      msgPerSFromStart: d.complete ? d.msgPerSFromStart : NaN,
      deliveries: d.deliveries,
      distinct: d.distinct,
      duplicates: d.deliveries - d.distinct,
      missing: opts.messages - d.distinct,
      consumerCpuUsPerMsg: d.complete && cpu0 && cpu1 ? (cpu1.consumer - cpu0.consumer) / opts.messages : NaN,
      brokerCpuUsPerMsg: d.complete && cpu0 && cpu1 ? (cpu1.broker - cpu0.broker) / opts.messages : NaN,
      consumerRssBytes: rss.peak('consumer'),
    };
    log(`${system} round ${round} 1 consumer: ${describeDrain(c1)}`);
    const latOut = await runJavaBench(client, env, ['latency', `${opts.rate}`, `${opts.seconds}`]);
    const latency = parseJavaLatency(latOut);
    if (latency === undefined) throw new Error(`no latency figures in the Java output: ${latOut.slice(-500)}`);
    log(`${system} round ${round} latency (after the client's own 3 s warm-up): ${describeLatency(latency)}`);
    rss.stop();
    return { drains: { c1 }, latency: { ...latency, javaWarmupExcluded: true }, brokerRssBytes: rss.peak('broker') };
  } finally {
    rss.stop();
    await server?.close();
    server?.clientDir?.release();
  }
}

const describeDrain = (d) =>
  `${Math.round(d.msgPerS)} msg/s (from start ${Math.round(d.msgPerSFromStart)}, ` +
  `second half ${Number.isFinite(d.secondHalfMsgPerS) ? Math.round(d.secondHalfMsgPerS) : '—'}), ` +
  `dup ${d.duplicates} missing ${d.missing}, consumer CPU ${d.consumerCpuUsPerMsg.toFixed(1)} µs/msg, ` +
  `broker CPU ${d.brokerCpuUsPerMsg.toFixed(1)} µs/msg, consumer RSS ${(d.consumerRssBytes / 1048576).toFixed(0)} MiB`;
const describeLatency = (l) =>
  `n=${l.n} p50 ${l.p50.toFixed(2)} p99 ${l.p99.toFixed(2)} p99.9 ${l.p999.toFixed(2)} max ${l.max.toFixed(2)} ms` +
  (l.sendAck ? ` (send acknowledged: p50 ${l.sendAck.p50.toFixed(2)} p99 ${l.sendAck.p99.toFixed(2)} ms)` : '') +
  (l.firstSecond
    ? `; p99 of the first second's sends ${l.firstSecond.p99.toFixed(2)}, of the rest ${l.afterFirstSecond.p99.toFixed(2)} ms`
    : '');

// ---------------------------------------------------------------- machine, commit, results

function capture(cmd, args) {
  const r = spawnSync(cmd, args, { encoding: 'utf8', cwd: root });
  return r.status === 0 ? `${r.stdout}${r.stderr}`.trim() : undefined;
}

function machine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model,
    cores: cpus.length,
    memoryGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    os: `${os.type()} ${os.release()}`,
    node: process.version,
    java: capture('java', ['-version'])?.split('\n')[0],
    redis: capture('redis-server', ['--version']),
    loadAverageAtStart: os.loadavg().map((x) => +x.toFixed(2)),
  };
}

function commit() {
  const full = capture('git', ['rev-parse', 'HEAD']);
  const dirty = (capture('git', ['status', '--porcelain', '--untracked-files=no']) ?? '') !== '';
  return { commit: full, short: full?.slice(0, 7) ?? 'unknown', dirty };
}

// ---------------------------------------------------------------- main

const info = { machine: machine(), ...commit(), startedAt: new Date().toISOString() };
const settings = {
  messages: opts.messages,
  rounds: opts.rounds,
  rate: opts.rate,
  seconds: opts.seconds,
  bodyBytes: opts.bodyBytes,
  liteLoop: opts.liteLoop,
};
log(
  `compare: ${JSON.stringify(settings)} on ${info.machine.cpuModel} x${info.machine.cores}, load ${info.machine.loadAverageAtStart.join(' ')}, commit ${info.short}${info.dirty ? ' (dirty)' : ''}`,
);

const runs = [];
const runnable = [];
for (const system of opts.only) {
  const why = await missingTool(system);
  if (why) {
    log(`${system}: skipped, ${why}`);
    runs.push({ system, round: 0, skipped: why });
  } else runnable.push(system);
}
let failed = false;
try {
  for (let round = 1; round <= opts.rounds; round++) {
    // Rotate the order each round so no system always runs first (cold machine) or last.
    const order = runnable.map((_, i) => runnable[(i + round - 1) % runnable.length]);
    for (const system of order) {
      log(`round ${round}: ${system}`);
      try {
        const r = system.startsWith('java') ? await runJavaSystem(system, round) : await runNodeSystem(system, round);
        runs.push({ system, round, ...r });
      } catch (e) {
        failed = true;
        console.error(`# ${system} round ${round} FAILED: ${e.stack ?? e}`);
        runs.push({ system, round, error: String(e.message ?? e).split('\n')[0] });
      }
    }
  }
} finally {
  releaseAll();
}

const rows = summarise(runs, opts.only);
const table = formatTable(rows);
console.log(`\n${table}\n`);
const notes = [
  `Drains: ${opts.messages} x ${opts.bodyBytes} B, pullBatchSize 32, consumeMessageBatchMaxSize 32, acked; msg/s from the first delivery to the last new sequence; (×) = ratio to 1 consumer in the same round, median over rounds; "2nd half": the second half of the messages over the time from when the consumers together had the first half to the last new one (the rate once warm).`,
  `Latency: ${opts.rate} msg/s for ${opts.seconds} s, publish to listener, from the first message, ${opts.sendsFrom === 'ready' ? 'consumer ready before the first send' : "first send as the consumer's start() is called"} (the Java rows come from the kit's Drain.java, which excludes its own 3 s warm-up); "p99 1st s / rest" splits the samples by send time: the messages sent in the first second, and the others.`,
  'CPU and RSS: /proc of the consumer process(es) and the broker during the 1-consumer drain (broker RSS: peak over the whole system run); dup / missing: summed over rounds.',
];
for (const n of notes) console.log(`- ${n}`);

if (opts.writeResults) {
  const dir = path.join(root, 'bench/results');
  mkdirSync(dir, { recursive: true });
  const base = path.join(dir, `${info.startedAt.slice(0, 10)}-${info.short}`);
  const command = `node bench/compare.mjs ${process.argv.slice(2).join(' ')}`.trim();
  writeFileSync(`${base}.json`, `${JSON.stringify({ ...info, settings, command, rows, runs }, null, 2)}\n`);
  const m = info.machine;
  const md = [
    `# Comparison ${info.startedAt} — commit ${info.short}${info.dirty ? ' (with uncommitted changes)' : ''}`,
    '',
    `\`${command}\``,
    '',
    `Machine: ${m.cpuModel}, ${m.cores} cores, ${m.memoryGiB} GiB, ${m.os}; Node ${m.node}; ${m.java ?? 'no Java'}; ${m.redis ?? 'no redis-server'}; load average at start ${m.loadAverageAtStart.join(' / ')}.`,
    '',
    table,
    '',
    ...notes.map((n) => `- ${n}`),
    '',
  ].join('\n');
  writeFileSync(`${base}.md`, md);
  log(`results: ${path.relative(root, base)}.{json,md}`);
}
process.exit(failed ? 1 : 0);
