// Paired A/B of the push consumer's CPU per message: two builds of the package (A, B) drain backlogs of
// their own topics AT THE SAME TIME from one broker, each in a child process, so both see the same machine
// load; each round drains three topics per side (the first is a JIT warm-up and is not counted). Prints
// per round and the medians, and B/A. On a shared, busy machine this ratio is far steadier than two
// separate runs.
//
//   npm run build && A=/path/to/baseline/checkout node bench/consumer-ab.mjs
//
// Env: A (required) and B [this checkout] (each with a built dist/), N [50000] messages of 1 KiB per
// topic, C [1] consumers per side, T [http] or tcp, ROUNDS [3], SEQ=1 runs A then B instead of together,
// BROKER [A] the checkout whose CLI broker serves both.
// RATE=R: the low-rate case instead of a backlog: per round both sides start on empty topics, and once
// both are ready N messages are sent, one at a time at R msg/s to each side (A, B, A, B ...): CPU per
// message is then mostly per-pull cost (one message per pull answer). N defaults to 10000 then.
import { Buffer } from 'node:buffer';
import { spawn, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
if (!process.env.A) {
  console.error('usage: A=/path/to/baseline/checkout [B=/path/to/candidate] node bench/consumer-ab.mjs (both built)');
  process.exit(2);
}
const A = process.env.A;
const B = process.env.B ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const RATE = Number(process.env.RATE ?? 0);
const N = Number(process.env.N ?? (RATE > 0 ? 10000 : 50000));
const C = Number(process.env.C ?? 1);
const T = process.env.T ?? 'http';
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const SEQ = process.env.SEQ === '1'; // run A and B one after the other instead of together
const { Producer } = await import(path.join(A, 'dist/index.js'));
const storePath = mkdtempSync(path.join(os.tmpdir(), 'cc-ab-'));
const child = spawn(
  process.execPath,
  [
    path.join(process.env.BROKER ?? A, 'dist/cli.js'),
    'broker',
    '--store',
    storePath,
    '--port',
    '0',
    ...(T === 'tcp' ? ['--remoting-port', '0'] : []),
  ],
  { stdio: ['ignore', 'pipe', 'ignore'] },
);
process.on('exit', () => {
  child.kill('SIGKILL');
  rmSync(storePath, { recursive: true, force: true });
});
const address = await new Promise((res) => {
  let out = '';
  child.stdout.on('data', (d) => {
    out += d;
    const m = (T === 'tcp' ? /remoting listening on (\S+)/ : /listening on (\S+)/).exec(out);
    if (m) res(m[1]);
  });
});
const connect = T === 'tcp' ? { namesrvAddr: address } : { endpoints: address };
const producer = new Producer({ ...connect, defaultTopicQueueNums: 8, sendMsgTimeoutMs: 120000 });
await producer.start();
const body = Buffer.alloc(1024, 0x61);
async function backlog(topic, n) {
  await producer.send({ topic, body: Buffer.from('w') });
  let sent = 1;
  await Promise.all(
    Array.from({ length: 4 }, async () => {
      while (sent < n) {
        const k = Math.min(256, n - sent);
        sent += k;
        await producer.sendBatch(Array.from({ length: k }, () => ({ topic, body })));
      }
    }),
  );
}
const run = (root, topics) =>
  new Promise((resolve, reject) => {
    const ch = fork(
      path.join(path.dirname(fileURLToPath(import.meta.url)), 'consumer-ab-child.mjs'),
      [root, JSON.stringify(connect), JSON.stringify(topics), String(N), String(C)],
      { stdio: 'inherit' },
    );
    ch.on('message', resolve);
    ch.on('exit', (code) => code && reject(new Error('child ' + code)));
  });
/** RATE mode: one child per side, started on empty topics; sends once both are ready. */
async function paced(tA, tB) {
  const ready = [];
  const results = ['A', 'B'].map((side) => {
    const topics = side === 'A' ? tA : tB;
    for (const t of topics) ready.push(producer.send({ topic: t, body: Buffer.from('w') }));
    return new Promise((resolve, reject) => {
      let ok;
      ready.push(new Promise((r) => (ok = r)));
      const ch = fork(
        path.join(path.dirname(fileURLToPath(import.meta.url)), 'consumer-ab-child.mjs'),
        [side === 'A' ? A : B, JSON.stringify(connect), JSON.stringify(topics), String(N), String(C), 'paced'],
        { stdio: 'inherit' },
      );
      ch.on('message', (m) => (m === 'ready' ? ok() : resolve(m)));
      ch.on('exit', (code) => code && reject(new Error('child ' + code)));
    });
  });
  await Promise.all(ready);
  // Each side's topics in turn: the child consumes them one after the other.
  for (let k = 0; k < tA.length; k++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) {
      const due = t0 + (i * 1000) / RATE;
      const wait = due - performance.now();
      if (wait > 1) await new Promise((r) => setTimeout(r, wait));
      void producer.send({ topic: tA[k], body });
      void producer.send({ topic: tB[k], body });
    }
    await new Promise((r) => setTimeout(r, 500));
  }
  return Promise.all(results);
}
const all = { A: [], B: [] };
const stamp = Date.now();
for (let r = 0; r < ROUNDS; r++) {
  const tA = [`W${stamp}A${r}`, `X${stamp}A${r}`, `Y${stamp}A${r}`],
    tB = [`W${stamp}B${r}`, `X${stamp}B${r}`, `Y${stamp}B${r}`];
  let ra, rb;
  if (RATE > 0) [ra, rb] = await paced(tA, tB);
  else {
    for (const t of [...tA, ...tB]) await backlog(t, N);
    if (!SEQ) [ra, rb] = await Promise.all([run(A, tA), run(B, tB)]);
    else if (r % 2) {
      rb = await run(B, tB);
      ra = await run(A, tA);
    } else {
      ra = await run(A, tA);
      rb = await run(B, tB);
    }
  }
  // first topic is warm-up
  for (const [k, res] of [
    ['A', ra],
    ['B', rb],
  ])
    for (const x of res.slice(1)) all[k].push(x);
  const f = (res) =>
    res
      .slice(1)
      .map(
        (x) =>
          `${x.cpu.toFixed(2)}us(sys ${x.sys.toFixed(2)}) ${x.rate.toFixed(0)}/s gc/1000 ${x.gcPer1000.toFixed(2)}`,
      )
      .join(', ');
  console.log(`round ${r}: A ${f(ra)} | B ${f(rb)}`);
}
const med = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const ma = med(all.A.map((x) => x.cpu)),
  mb = med(all.B.map((x) => x.cpu));
console.log(
  `median consumer cpu: A ${ma.toFixed(2)} us/msg, B ${mb.toFixed(2)} us/msg, B/A ${(mb / ma).toFixed(3)}; rate A ${med(all.A.map((x) => x.rate)).toFixed(0)} B ${med(all.B.map((x) => x.rate)).toFixed(0)}`,
);
const ga = med(all.A.map((x) => x.gcPer1000)),
  gb = med(all.B.map((x) => x.gcPer1000));
console.log(`median GCs per 1000 messages: A ${ga.toFixed(2)}, B ${gb.toFixed(2)}, B/A ${(gb / ga).toFixed(3)}`);
await producer.shutdown();
process.exit(0);
