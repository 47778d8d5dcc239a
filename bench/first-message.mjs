// From `start()` to the first message of a backlog, per consumer and transport, against the bundled
// broker (a child process): each start uses a new group reading from the first offset. "warm" starts a
// consumer in this process after others have run; "cold" starts it in a new Node process whose first
// consumer it is (the package imported before the clock starts). Prints the medians and the maximum,
// with the time `start()` took and, for the push consumer, its settle (0 when it found itself alone).
// `node bench/first-message.mjs` after `npm run build`; FIRST_ROUNDS sets the rounds (5). FIRST_EAGER=1 has
// the new processes import the package with V8's lazy compilation off for that import (docs/performance.md,
// "Start-up"): their functions are compiled as the package loads instead of on their first call.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { setFlagsFromString } from 'node:v8';

const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');
const child = process.argv[2] === '--child';
const eager = child && process.env.FIRST_EAGER === '1';
if (eager) setFlagsFromString('--no-lazy');
const lib = await import(path.join(root, 'dist/index.js'));
if (eager) setFlagsFromString('--lazy');
const { startCliBroker, backlogTopic, startToFirstMessage } = await import('./bench-broker.mjs');
/** The rows' names, and the consumer kinds they start. */
const KINDS = { push: 'push', 'push orderly': 'orderly', 'lite pull': 'lite' };
const startOnce = (name, transport, addr, topic) =>
  startToFirstMessage(lib, { kind: KINDS[name], transport, addr, topic });

if (child) {
  const [, , , kind, t, addr, topic] = process.argv;
  process.stdout.write(JSON.stringify(await startOnce(kind, t, addr, topic)));
  process.exit(0);
}

const ROUNDS = Number(process.env.FIRST_ROUNDS ?? 5);
const storePath = await mkdtemp(path.join(os.tmpdir(), 'rmq-first-'));
const broker = await startCliBroker({ root, storePath, tcp: true });
const addrOf = (t) => (t === 'http' ? broker.http : broker.tcp);
const topic = await backlogTopic(lib, broker, 'FirstMessage', 2000);

const rows = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of Object.keys(KINDS)) {
    for (const t of ['http', 'tcp']) {
      rows.push({ name: `${kind} ${t}`, how: 'warm', ...(await startOnce(kind, t, addrOf(t), topic)) });
      const { stdout } = await promisify(execFile)(process.execPath, [self, '--child', kind, t, addrOf(t), topic]);
      rows.push({ name: `${kind} ${t}`, how: 'cold', ...JSON.parse(stdout) });
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (x) => (Number.isNaN(x) ? '-' : x.toFixed(1)).padStart(6);
console.log(`from start() to the first message of a backlog, ms: median of ${ROUNDS} (max)`);
console.log(
  `${''.padEnd(18)} ${'warm: start()'.padStart(13)} ${'settle'.padStart(6)} ${'first'.padStart(6)} ${'(max)'.padStart(8)}   ${'cold: start()'.padStart(13)} ${'first'.padStart(6)} ${'(max)'.padStart(8)}`,
);
for (const name of [...new Set(rows.map((r) => r.name))]) {
  const pick = (how, k) => rows.filter((r) => r.name === name && r.how === how).map((r) => r[k]);
  console.log(
    `${name.padEnd(18)} ${fmt(median(pick('warm', 'started'))).padStart(13)} ${fmt(median(pick('warm', 'settle')))} ` +
      `${fmt(median(pick('warm', 'first')))} ${`(${Math.max(...pick('warm', 'first')).toFixed(1)})`.padStart(8)}   ` +
      `${fmt(median(pick('cold', 'started'))).padStart(13)} ${fmt(median(pick('cold', 'first')))} ` +
      `${`(${Math.max(...pick('cold', 'first')).toFixed(1)})`.padStart(8)}`,
  );
}
broker.child.kill('SIGTERM');
await new Promise((r) => broker.child.once('exit', r));
await rm(storePath, { recursive: true, force: true });
