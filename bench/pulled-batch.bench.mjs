// The consumer's raw pull answers: index a pull body (32 × 1 KiB records) into a PulledBatch, then hand
// every message out (decode), as the push and lite consumers do per pull. Subscriptions '*' and a tag
// list (the tag re-check reads each record's properties at indexing). With other builds' dist/ folders
// as arguments, the builds run interleaved in this one process (A, B, A, B ...), so the ratio survives a
// busy machine; CPU time per message is the figure to compare.
//
//   npm run build && node bench/pulled-batch.bench.mjs [/other/checkout/dist ...]
//   env: BENCH_PB_MS [1500] per measurement, BENCH_PB_ROUNDS [3], BENCH_PB_KEEP [0]: the messages of the
//   last KEEP answers are kept alive, as a consumer's in-flight messages are until their listener returns
import { Buffer } from 'node:buffer';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { benchRecords } from './bench-records.mjs';

const here = path.dirname(fileURLToPath(import.meta.url));
const dists = [path.join(here, '..', 'dist'), ...process.argv.slice(2).map((d) => path.resolve(d))];
const ms = Number(process.env.BENCH_PB_MS ?? 1500);
const rounds = Number(process.env.BENCH_PB_ROUNDS ?? 3);
const MESSAGES = 32;

const load = async (dist) => ({
  dist,
  codec: await import(pathToFileURL(path.join(dist, 'common/codec/index.js')).href),
  filter: await import(pathToFileURL(path.join(dist, 'filter/index.js')).href),
  batch: await import(pathToFileURL(path.join(dist, 'client/consumer/pulled-batch.js')).href),
});
const builds = await Promise.all(dists.map(load));
const body = Buffer.concat(benchRecords(builds[0].codec, MESSAGES, 1024));
const mq = { topic: 'BenchTopic', brokerName: 'b', queueId: 1 };
let sink = 0;
const KEEP = Number(process.env.BENCH_PB_KEEP ?? 0);
const kept = [];
let keptAt = 0;

/** CPU ns per message handed out, for `rounds` of `ms` each (after a warm-up). */
function measure(b, subString) {
  const sd = b.filter.buildSubscriptionData('BenchTopic', subString);
  const once = () => {
    const pb = new b.batch.PulledBatch(mq, body, 0, 2000, sd, undefined);
    const msgs = [];
    for (let i = 0; i < pb.count; i++) msgs.push(pb.decode(pb.offsetAt(i)));
    sink += msgs.length;
    if (KEEP > 0) kept[keptAt++ % KEEP] = msgs;
    return pb.count;
  };
  const warmEnd = performance.now() + 200;
  while (performance.now() < warmEnd) once();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  let n = 0;
  while (performance.now() - t0 < ms) for (let i = 0; i < 20; i++) n += once();
  const cpu = process.cpuUsage(cpu0);
  return ((cpu.user + cpu.system) * 1000) / n;
}

const median = (xs) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
for (const sub of ['*', 'Tag1 || Tag2']) {
  const results = builds.map(() => []);
  for (let r = 0; r < rounds; r++) builds.forEach((b, i) => results[i].push(measure(b, sub)));
  builds.forEach((b, i) => {
    const m = median(results[i]);
    console.log(
      `pulled-batch index + hand out, sub '${sub}'`.padEnd(48),
      `${m.toFixed(0).padStart(6)} cpu-ns/message`,
      `[${results[i].map((x) => x.toFixed(0)).join(' ')}]`,
      i === 0 ? 'this build' : `${b.dist}: this build's CPU is ${(median(results[0]) / m).toFixed(3)}x of it`,
    );
  });
}
if (sink === 0) console.log('');
