#!/usr/bin/env node
// Where the CLI broker's CPU goes while one consumer drains a backlog over TCP remoting: RocketMQ 4.9.8's
// Java client (the kit's bench/run drain: its producer fills the topic one message a send, round robin over
// 8 queues) or our PushConsumer (our producer fills it in batches of 64, pull 32, listener batch 32).
// The broker runs under `node --cpu-prof`; the figures cover the drain only (from the end of the preload to
// the last new message): msg/s, broker CPU µs/msg (/proc), and the profile's top self and inclusive times
// (wall time of the main thread, so a system call during which the thread was preempted counts in full).
//
//   npm run build && node bench/broker-drain-profile.mjs java|ours [--messages N (200000)] [--top K (30)]
//        [--port P (35300; P+1 is the HTTP port)] [--dist DIR (this checkout's dist)] [--keep DIR]
//
// A backlog past the broker's 128 MiB read cache (200,000 x 1 KiB) exercises the disk read path too.
// The profile is removed afterwards unless --keep names a directory for it (open it in Chrome DevTools).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { findKitDir } from './compare-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const MODE = args[0];
if (MODE !== 'java' && MODE !== 'ours') {
  console.error(
    'usage: node bench/broker-drain-profile.mjs java|ours [--messages N] [--top K] [--port P] [--dist DIR]',
  );
  process.exit(2);
}
const N = Number(arg('--messages', '200000'));
const TOP = Number(arg('--top', '30'));
const PORT = Number(arg('--port', '35300'));
const DIST = path.resolve(arg('--dist', path.join(root, 'dist')));
const KEEP = arg('--keep', undefined);

/** Microseconds on CLOCK_MONOTONIC: the clock of the profile's timestamps. */
const nowUs = () => Number(process.hrtime.bigint() / 1000n);
/** CPU time (user + system) of a process, µs (clock ticks of 10 ms). */
const cpuUs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) * 10_000;
};
const exited = (child) =>
  child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));

const work = mkdtempSync(path.join(os.tmpdir(), 'broker-drain-profile-'));
const profDir = KEEP ? path.resolve(KEEP) : path.join(work, 'prof');
const children = new Set();
const cleanup = () => {
  for (const c of children) c.kill('SIGKILL');
  rmSync(work, { recursive: true, force: true });
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

const broker = spawn(
  process.execPath,
  [
    '--cpu-prof',
    `--cpu-prof-dir=${profDir}`,
    path.join(DIST, 'cli.js'),
    'broker',
    '--store',
    path.join(work, 'store'),
    '--port',
    String(PORT + 1),
    '--remoting-port',
    String(PORT),
    '--log-level',
    'error',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
children.add(broker);

/** Runs `cmd`, handing each stdout line to `onLine`; resolves when it exits. */
function run(cmd, argv, env, onLine) {
  const child = spawn(cmd, argv, { env, stdio: ['ignore', 'pipe', 'inherit'] });
  children.add(child);
  createInterface({ input: child.stdout }).on('line', onLine);
  return exited(child).then(() => children.delete(child));
}

let t0;
let t1;
let cpu0;
let cpu1;
const start = () => {
  t0 = nowUs();
  cpu0 = cpuUs(broker.pid);
};
const end = () => {
  t1 ??= nowUs();
  cpu1 ??= cpuUs(broker.pid);
};

try {
  await new Promise((resolve, reject) => {
    let out = '';
    broker.stdout.on('data', (d) => {
      out += d;
      if (/remoting/i.test(out)) resolve();
    });
    broker.once('exit', (code) => reject(new Error(`the broker exited with ${code} before serving`)));
  });
  if (MODE === 'java') {
    const kit = findKitDir(root, process.env.RMQ_KIT_DIR, existsSync);
    const env = {
      ...process.env,
      RMQ_NAMESRV_PORT: String(PORT),
      RMQ_BROKER_PORT: String(PORT),
      RMQ_CLIENT_DIR: path.join(work, 'client'),
      TMPDIR: work,
    };
    await run(path.join(kit, 'bench/run'), ['drain', String(N)], env, (line) => {
      console.log(`java: ${line}`);
      if (line.startsWith('preload:')) start();
      if (line.startsWith('drain:')) end();
    });
  } else {
    const lib = await import(path.join(DIST, 'index.js'));
    const topic = `ProfDrain_${Date.now()}`;
    const admin = new lib.AdminClient({ endpoints: `http://127.0.0.1:${PORT + 1}` });
    await admin.createTopic(topic, { queueNums: 8 });
    await admin.shutdown();
    const producer = new lib.Producer({ namesrvAddr: `127.0.0.1:${PORT}`, sendMsgTimeoutMs: 30_000 });
    await producer.start();
    for (let from = 0; from < N; from += 64) {
      const batch = Array.from({ length: Math.min(64, N - from) }, (_, i) => {
        const body = Buffer.alloc(1024);
        body.writeUInt32BE(from + i, 0);
        return { topic, body };
      });
      await producer.sendBatch(batch);
    }
    await producer.shutdown();
    console.log(`ours: preloaded ${N} x 1 KiB in batches of 64`);
    start();
    const consumer = path.join(root, 'bench/broker-drain-profile-consumer.mjs');
    const argv = [consumer, DIST, `127.0.0.1:${PORT}`, topic, `ProfG_${Date.now()}`, String(N)];
    await run(process.execPath, argv, process.env, (line) => {
      console.log(`ours: ${line}`);
      if (line.startsWith('drained')) end();
    });
  }
  if (t0 === undefined || t1 === undefined) throw new Error('the drain did not complete');
  broker.kill('SIGTERM');
  await exited(broker);
  children.delete(broker);
  const seconds = (t1 - t0) / 1e6;
  console.log(
    `${MODE}: drain ${seconds.toFixed(2)} s, ${Math.round(N / seconds)} msg/s, broker CPU ${((cpu1 - cpu0) / N).toFixed(1)} µs/msg`,
  );
  report(profDir, t0, t1);
} finally {
  cleanup();
}

/** Self and inclusive time per function of the broker's profile, between `from` and `to` (µs). */
function report(dir, from, to) {
  const file = readdirSync(dir).find((f) => f.endsWith('.cpuprofile'));
  if (!file) throw new Error(`no profile in ${dir}`);
  const p = JSON.parse(readFileSync(path.join(dir, file), 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const name = (cf) =>
    `${cf.functionName || '(anonymous)'} ${cf.url.split('/').slice(-2).join('/')}:${cf.lineNumber + 1}`;
  const self = new Map();
  const incl = new Map();
  let t = p.startTime;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i];
    const dt = p.timeDeltas[i + 1] ?? 0;
    const node = byId.get(p.samples[i]);
    if (t < from || t > to || node.callFrame.functionName === '(idle)') continue;
    total += dt;
    const key = name(node.callFrame);
    self.set(key, (self.get(key) ?? 0) + dt);
    const seen = new Set();
    for (let id = node.id; id !== undefined; id = parent.get(id)) {
      const k = name(byId.get(id).callFrame);
      if (seen.has(k)) continue;
      seen.add(k);
      incl.set(k, (incl.get(k) ?? 0) + dt);
    }
  }
  const line = ([k, v]) =>
    `${(v / 1000).toFixed(0).padStart(7)} ms ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`;
  console.log(`main thread busy ${(total / 1000).toFixed(0)} ms of the drain's ${((to - from) / 1000).toFixed(0)} ms`);
  console.log('--- self time');
  for (const e of [...self].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(line(e));
  console.log('--- inclusive time');
  for (const e of [...incl].sort((a, b) => b[1] - a[1]).slice(0, TOP)) console.log(line(e));
  if (KEEP) console.log(`profile kept: ${path.join(dir, file)}`);
}
