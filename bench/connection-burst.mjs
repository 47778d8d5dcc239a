#!/usr/bin/env node
// How many HTTP connections a producer opens to the broker when sends come in bursts, and what the
// bursts cost in CPU (producer and broker). A burst is what a pause of a few milliseconds (a GC, the
// first seconds of a process) turns a steady flow of sends into.
//
//   npm run build && node bench/connection-burst.mjs [--burst 32] [--bursts 20]
//   BENCH_DIST=/other/checkout/dist  runs another build (A/B).
//
// Starts our CLI broker (temp store), a Producer over HTTP, sends one message (the connection is open),
// then BURSTS times: BURST concurrent sends, awaited, 50 ms apart. Prints the broker's established
// connections from the producer, and CPU µs per message of both processes during the bursts.
import { Buffer } from 'node:buffer';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { brokerAddresses } from './compare-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dist = path.resolve(process.env.BENCH_DIST ?? path.join(root, 'dist'));
const flag = (name, def) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : def;
};
const burst = flag('--burst', 32);
const bursts = flag('--bursts', 20);

const lib = await import(pathToFileURL(path.join(dist, 'index.js')).href);
const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-conn-burst-'));
const broker = spawn(
  process.execPath,
  [path.join(dist, 'cli.js'), 'broker', '--store', dir, '--port', '0', '--log-level', 'warn'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
const brokerCpuMs = () => {
  const f = readFileSync(`/proc/${broker.pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
try {
  const addr = await new Promise((resolve, reject) => {
    let text = '';
    broker.stdout.on('data', (d) => {
      text += d;
      const found = brokerAddresses(text);
      if (found.http) resolve(found);
    });
    broker.once('exit', (code) => reject(new Error(`broker exited with ${code}`)));
  });
  const topic = `Burst_${Date.now()}`;
  const admin = new lib.AdminClient({ endpoints: addr.http });
  await admin.createTopic(topic, { queueNums: 8 });
  await admin.shutdown();
  const producer = new lib.Producer({ endpoints: addr.http });
  await producer.start();
  const body = Buffer.alloc(1024, 0x61);
  await producer.send({ topic, body });
  const b0 = brokerCpuMs();
  const c0 = process.cpuUsage();
  for (let i = 0; i < bursts; i++) {
    await Promise.all(Array.from({ length: burst }, () => producer.send({ topic, body })));
    await sleep(50);
  }
  const c = process.cpuUsage(c0);
  const b = brokerCpuMs() - b0;
  const port = new URL(addr.http).port;
  const conns = execFileSync('ss', ['-Htn', 'state', 'established', `( dport = :${port} )`])
    .toString()
    .trim();
  const n = burst * bursts;
  console.log(
    `${dist}: ${bursts} bursts of ${burst} sends: ${conns ? conns.split('\n').length : 0} connections to the broker; ` +
      `CPU µs/msg producer ${((c.user + c.system) / n) | 0} broker ${((b * 1000) / n) | 0}`,
  );
  await producer.shutdown();
} finally {
  broker.kill('SIGTERM');
  await new Promise((r) => (broker.exitCode !== null ? r() : broker.once('exit', r)));
  rmSync(dir, { recursive: true, force: true });
}
