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
import { Buffer } from 'node:buffer';
import { spawn, fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
if (!process.env.A) {
  console.error('usage: A=/path/to/baseline/checkout [B=/path/to/candidate] node bench/consumer-ab.mjs (both built)');
  process.exit(2);
}
const A = process.env.A;
const B = process.env.B ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.N ?? 50000);
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
const all = { A: [], B: [] };
const stamp = Date.now();
for (let r = 0; r < ROUNDS; r++) {
  const tA = [`W${stamp}A${r}`, `X${stamp}A${r}`, `Y${stamp}A${r}`],
    tB = [`W${stamp}B${r}`, `X${stamp}B${r}`, `Y${stamp}B${r}`];
  for (const t of [...tA, ...tB]) await backlog(t, N);
  let ra, rb;
  if (SEQ) {
    if (r % 2) {
      rb = await run(B, tB);
      ra = await run(A, tA);
    } else {
      ra = await run(A, tA);
      rb = await run(B, tB);
    }
  } else [ra, rb] = await Promise.all([run(A, tA), run(B, tB)]);
  // first topic is warm-up
  for (const [k, res] of [
    ['A', ra],
    ['B', rb],
  ])
    for (const x of res.slice(1)) all[k].push(x);
  const f = (res) =>
    res
      .slice(1)
      .map((x) => `${x.cpu.toFixed(2)}us(sys ${x.sys.toFixed(2)}) ${x.rate.toFixed(0)}/s`)
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
await producer.shutdown();
process.exit(0);
