// Consumer and broker CPU per message of one drain, counted as bench/compare.mjs counts them, for each
// consumer kind: a fresh CLI broker, a backlog of N x 1 KiB on 8 queues, then a consumer process (pull
// batch 32; push with listener batch 32, lite with a `for await` loop) whose CPU is counted from just
// before start() to its Nth message (start-up and JIT compilation included), and the broker's over the
// same span (/proc). Also, from start(): the first half's rate over the second half's, and the CPU per
// message of each half, so warm-up costs show apart from the steady ones.
//
//   npm run build && node bench/consumer-cost.mjs [--kinds http-push,http-lite,tcp-push,tcp-lite]
//        [--messages 100000] [--rounds 3] [--dist DIR[,DIR] (this checkout's dist)] [--together]
//        [--prof DIR] [--broker-prof DIR] [--prof-interval US] [--child-args '--node-flag ...'] [--child-args-b '...']
//
// With two builds, rounds alternate them (each with its own broker, from its own build). --together
// drains both builds' backlogs AT THE SAME TIME from one broker (the first build's), each consumer in
// its own process, so both see the same machine load: the consumer ratio is far steadier on a busy
// machine (the broker figure is then the pair's, halved). --prof / --broker-prof run the consumer / the
// broker under --cpu-prof; the printed marks (monotonic µs: go, first, half, end) window the profiles.
// --prof-interval sets their sampling interval (V8's default, 1000 µs, gives only about a thousand
// samples in a 100,000-message drain; 100 gives enough to rank functions of under 1 %).
// CC_OTEL=0 starts the consumers with openTelemetry: false (CC_OTEL_B=0 only the second build's);
// CC_STRACE=FILE counts the consumer's system calls.
import { Buffer } from 'node:buffer';
import { spawn, fork } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';
import { startCliBroker } from './bench-broker.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const KINDS = arg('--kinds', 'http-push,http-lite,tcp-push,tcp-lite').split(',');
const N = Number(arg('--messages', '100000'));
const ROUNDS = Number(arg('--rounds', '3'));
const DISTS = arg('--dist', path.join(here, '..', 'dist'))
  .split(',')
  .map((d) => path.resolve(d));
const TOGETHER = args.includes('--together');
const PROF = arg('--prof', undefined);
const BROKER_PROF = arg('--broker-prof', undefined);
const PROF_INTERVAL = args.includes('--prof-interval') ? ['--cpu-prof-interval', arg('--prof-interval')] : [];
const CHILD_ARGS = arg('--child-args', '').split(' ').filter(Boolean);
/** Node flags for the second build's consumer only (e.g. the same build twice, one side with a V8 flag). */
const CHILD_ARGS_B = arg('--child-args-b', '').split(' ').filter(Boolean);

/** CPU time (user + system) of a process, µs. */
const cpuUs = (pid) => {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1e6) / 100;
};

async function startBroker(dist, storePath, tcp) {
  const nodeArgs = BROKER_PROF ? ['--cpu-prof', ...PROF_INTERVAL, '--cpu-prof-dir', BROKER_PROF] : [];
  const b = await startCliBroker({ cli: path.join(dist, 'cli.js'), storePath, tcp, nodeArgs });
  return { child: b.child, address: tcp ? b.tcp : b.http };
}

async function backlog(Producer, connect, topic) {
  const producer = new Producer({ ...connect, defaultTopicQueueNums: 8, sendMsgTimeoutMs: 120000 });
  await producer.start();
  const body = Buffer.alloc(1024, 0x61);
  let sent = 0;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (sent < N) {
        const k = Math.min(256, N - sent);
        sent += k;
        await producer.sendBatch(Array.from({ length: k }, () => ({ topic, body })));
      }
    }),
  );
  await producer.shutdown();
}

/** Drains one backlog per build in `dists` at the same time from one broker; a result per build. */
async function run(dists, kind) {
  const [transport, type] = kind.split('-');
  const storePath = mkdtempSync(path.join(os.tmpdir(), 'ccost-'));
  const broker = await startBroker(dists[0], storePath, transport === 'tcp');
  try {
    const connect = transport === 'tcp' ? { namesrvAddr: broker.address } : { endpoints: broker.address };
    const { Producer } = await import(path.join(dists[0], 'index.js'));
    const topics = dists.map((_, i) => `CC${Date.now()}_${i}`);
    for (const t of topics) await backlog(Producer, connect, t);
    const children = dists.map((dist, i) =>
      fork(path.join(here, 'consumer-cost-child.mjs'), [dist, JSON.stringify(connect), topics[i], String(N), type], {
        execArgv: [
          ...CHILD_ARGS,
          ...(dist === DISTS[1] ? CHILD_ARGS_B : []),
          ...(PROF ? ['--cpu-prof', ...PROF_INTERVAL, '--cpu-prof-dir', PROF] : []),
        ],
        // CC_OTEL_B=0: the second build's consumer alone starts with openTelemetry: false.
        env: dist === DISTS[1] && process.env.CC_OTEL_B === '0' ? { ...process.env, CC_OTEL: '0' } : process.env,
        stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      }),
    );
    const loaded = children.map((c) => new Promise((r) => c.once('message', r)));
    await Promise.all(loaded);
    const b0 = cpuUs(broker.child.pid);
    const results = children.map(
      (c) =>
        new Promise((resolve, reject) => {
          c.once('message', resolve);
          c.on('exit', (code) => code && reject(new Error(`consumer exited with ${code}`)));
        }),
    );
    for (const c of children) {
      if (process.env.CC_STRACE) spawn('strace', ['-c', '-f', '-o', process.env.CC_STRACE, '-p', String(c.pid)]);
      c.send('go');
    }
    const out = await Promise.all(results);
    const broker1 = cpuUs(broker.child.pid);
    await Promise.all(children.map((c) => new Promise((r) => (c.exitCode === null ? c.on('exit', r) : r()))));
    return out.map((m) => ({ ...m, broker: (broker1 - b0) / N / dists.length }));
  } finally {
    broker.child.kill(BROKER_PROF ? 'SIGINT' : 'SIGKILL');
    await new Promise((r) => (broker.child.exitCode === null ? broker.child.on('exit', r) : r()));
    rmSync(storePath, { recursive: true, force: true });
  }
}

const line = (res) =>
  `consumer ${res.cpu.toFixed(2)} µs/msg (halves ${res.firstHalfCpu.toFixed(2)} / ${res.secondHalfCpu.toFixed(2)}, ` +
  `start ${Math.round(res.startCpuMs)} ms, sys ${res.sys.toFixed(2)}), broker ${res.broker.toFixed(2)} µs/msg, ` +
  `${Math.round(res.rate)} msg/s, 1st/2nd half rate ${res.halves.toFixed(2)}, first message at ${Math.round(res.firstMs)} ms` +
  (PROF || BROKER_PROF ? `, marks ${JSON.stringify(res.marks)}` : '');

if (PROF) mkdirSync(PROF, { recursive: true });
if (BROKER_PROF) mkdirSync(BROKER_PROF, { recursive: true });
const all = new Map();
const keep = (kind, dist, res) => {
  const key = `${kind} ${dist}`;
  if (!all.has(key)) all.set(key, []);
  all.get(key).push(res);
  return key;
};
for (let r = 0; r < ROUNDS; r++)
  for (const kind of KINDS) {
    const order = r % 2 ? [...DISTS].reverse() : DISTS;
    if (TOGETHER) {
      const out = await run(order, kind);
      order.forEach((dist, i) => console.log(`round ${r} ${keep(kind, dist, out[i])}: ${line(out[i])}`));
    } else
      for (const dist of order) {
        const [res] = await run([dist], kind);
        console.log(`round ${r} ${keep(kind, dist, res)}: ${line(res)}`);
      }
  }
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const medians = new Map();
for (const [key, rs] of all) {
  const m = Object.fromEntries(
    ['cpu', 'firstHalfCpu', 'secondHalfCpu', 'broker', 'halves'].map((f) => [f, med(rs.map((x) => x[f]))]),
  );
  medians.set(key, m);
  console.log(
    `median ${key}: consumer ${m.cpu.toFixed(2)} µs/msg (halves ${m.firstHalfCpu.toFixed(2)} / ${m.secondHalfCpu.toFixed(2)}), ` +
      `broker ${m.broker.toFixed(2)} µs/msg, 1st/2nd half rate ${m.halves.toFixed(2)}`,
  );
}
if (DISTS.length === 2)
  for (const kind of KINDS) {
    const [a, b] = DISTS.map((d) => all.get(`${kind} ${d}`));
    const ratios = a.map((x, i) => b[i].cpu / x.cpu);
    console.log(
      `${kind}: consumer CPU B/A per round ${ratios.map((x) => x.toFixed(3)).join(' ')}, median ${med(ratios).toFixed(3)}`,
    );
  }
