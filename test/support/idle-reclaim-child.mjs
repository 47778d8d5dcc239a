// Child process for the idle-memory watcher's test: a quiet process of its own, so that nothing but the
// watcher can start a collection. Drops 40 MiB of Buffers (under V8's own external-memory trigger), then
// waits: with `watch` as its argument it holds the watcher (100 ms interval), without it only waits.
// Prints `RESULT {"before":..,"dropped":..,"after":..,"prompted":..}` (RSS in bytes; the external-memory
// figure is brought up to date only by a later collection) once the Buffers' memory is given back or
// after `waitMs` (its second argument), then exits.
// With `flag on|off`: sets `--expose-gc` at run time first (on) or not (off), prompts a collection, and prints
// `RESULT {"before":..,"prompted":..,"after":..}`, what `typeof gc` was in a new context before and after.
import { Buffer } from 'node:buffer';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { holdIdleReclaim, promptCollection, promptedCollections } from '../../dist/broker/idle-memory-reclaim.js';

if (process.argv[2] === 'flag') {
  if (process.argv[3] === 'on') setFlagsFromString('--expose-gc');
  const before = runInNewContext('typeof gc');
  const prompted = promptCollection();
  const after = runInNewContext('typeof gc');
  process.stdout.write(`RESULT ${JSON.stringify({ before, prompted, after })}\n`);
  process.exit(0);
}

const MiB = 1024 * 1024;
const watching = process.argv[2] === 'watch';
const waitMs = Number(process.argv[3] ?? 10_000);
const rss = () => process.memoryUsage.rss();

const release = watching ? holdIdleReclaim(() => 0, { intervalMs: 100, thresholdBytes: 16 * MiB }) : () => undefined;
await sleep(300); // a few samples at the baseline first
const before = rss();
let held = [];
for (let i = 0; i < 40; i++) held.push(Buffer.allocUnsafeSlow(MiB).fill(i)); // filled: resident
const dropped = rss();
held = null;
const deadline = Date.now() + waitMs;
let after = rss();
while (after > before + 8 * MiB && Date.now() < deadline) {
  await sleep(50);
  after = rss();
}
const prompted = promptedCollections();
release();
process.stdout.write(`RESULT ${JSON.stringify({ before, dropped, after, prompted })}\n`);
