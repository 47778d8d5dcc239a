// Where the time from `start()` to the first message goes, step by step, on both sides of the wire: a
// fresh CLI broker with a backlog (8 queues), then RUNS consumers, each the first of a new Node process
// and of a new group reading from the first offset. Each run prints, in ms from `start()`, the requests
// the consumer wrote (by name, consecutive ones of a kind together), what the broker read and answered,
// when `start()` resolved and when the listener (or poll) got the first message. The first run meets a
// broker that has served no consumer yet; later runs a warmer one.
//
//   npm run build && node bench/start-timeline.mjs [--transport tcp|http] [--kind push|orderly|lite]
//                                                  [--runs 3] [--backlog 2000] [--dist DIR]
// (--dist: another build's dist/, for an A/B; a copy outside a checkout finds its dependencies through a
// node_modules link next to it).
//
// Both processes load bench/start-timeline-hooks.mjs, which records socket writes and reads with the
// monotonic clock every process shares. The consumer's reads do not show (its transports read without
// 'data' events), nor the broker's reads over HTTP (node:http's parser reads the socket itself); the
// broker's answers always do. Everything started is stopped; temp dirs are removed.
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath } from 'node:url';

const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');
const hooks = path.join(root, 'bench/start-timeline-hooks.mjs');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1] : fallback;
};
/** The build to run (another checkout's dist/ for an A/B); a child gets it as its last argument. */
const dist = path.resolve(process.argv[2] === '--child' ? process.argv[7] : arg('--dist', path.join(root, 'dist')));
const lib = await import(path.join(dist, 'index.js'));
const { startCliBroker, backlogTopic, startToFirstMessage } = await import('./bench-broker.mjs');

if (process.argv[2] === '--child') {
  const [, , , kind, transport, addr, topic] = process.argv;
  // The hooks' marks, on the clock the broker's events are recorded with.
  await startToFirstMessage(lib, { kind, transport, addr, topic, mark: globalThis.__startTimelineMark });
  process.exit(0);
}

const transport = arg('--transport', 'tcp');
const kind = arg('--kind', 'push');
const runs = Number(arg('--runs', '3'));
const backlog = Number(arg('--backlog', '2000'));
if (!['tcp', 'http'].includes(transport) || !['push', 'orderly', 'lite'].includes(kind) || !(runs > 0)) {
  process.stderr.write(
    'usage: node bench/start-timeline.mjs [--transport tcp|http] [--kind push|orderly|lite] [--runs N]\n',
  );
  process.exit(2);
}

const { RequestCode } = await import(path.join(dist, 'protocol/request-code.js'));
const requestName = new Map(Object.entries(RequestCode).map(([name, code]) => [code, name]));
const nameOf = (code) => requestName.get(code) ?? `code ${code}`;
const dir = await mkdtemp(path.join(os.tmpdir(), 'rmq-timeline-'));

/** Runs `fn` with the hooks' variables in this process's environment (children inherit it). */
async function withHookEnv(role, out, fn) {
  process.env.TIMELINE_ROLE = role;
  process.env.TIMELINE_OUT = out;
  try {
    return await fn();
  } finally {
    delete process.env.TIMELINE_ROLE;
    delete process.env.TIMELINE_OUT;
  }
}

/** Consecutive events of one side and one label within 1 ms of each other, as one line (bytes summed). */
function merged(events) {
  const lines = [];
  for (const e of events) {
    const last = lines[lines.length - 1];
    if (last && last.side === e.side && last.label === e.label && e.at - last.lastAt <= 1) {
      last.count += e.count;
      last.bytes += e.bytes;
      last.lastAt = e.at;
    } else lines.push({ ...e, lastAt: e.at });
  }
  return lines;
}

/**
 * The broker's reads and answers: an answer is a write whose first bytes hold a code (its header),
 * and the writes without one that follow it (its body).
 */
function brokerEvents(record, from, to) {
  const out = [];
  for (const e of record.events) {
    if (e.at < from || e.at > to) continue;
    if (e.kind === 'read') {
      const counts = new Map();
      for (const code of e.codes) counts.set(nameOf(code), (counts.get(nameOf(code)) ?? 0) + 1);
      const frames = [...counts].map(([name, n]) => (n > 1 ? `${name} x${n}` : name)).join(' + ');
      out.push({ at: e.at, side: 'broker', label: `reads ${frames || 'part of a frame'}`, count: 1, bytes: e.bytes });
    } else if (e.codes.length > 0 || out.length === 0 || out[out.length - 1].label !== 'answers') {
      out.push({ at: e.at, side: 'broker', label: 'answers', count: 1, bytes: e.bytes });
    } else out[out.length - 1].bytes += e.bytes;
  }
  return out;
}

const brokerOut = path.join(dir, 'broker.json');
const storePath = path.join(dir, 'store');
const broker = await withHookEnv('broker', brokerOut, () =>
  startCliBroker({ root, cli: path.join(dist, 'cli.js'), storePath, tcp: true, nodeArgs: ['--import', hooks] }),
);
const clientRecords = [];
try {
  const topic = await backlogTopic(lib, broker, 'Timeline', backlog);
  for (let i = 0; i < runs; i++) {
    const out = path.join(dir, `consumer-${i}.json`);
    const addr = transport === 'http' ? broker.http : broker.tcp;
    await withHookEnv('consumer', out, async () => {
      const child = spawn(process.execPath, ['--import', hooks, self, '--child', kind, transport, addr, topic, dist], {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
      const code = await new Promise((resolve) => child.once('exit', resolve));
      if (code !== 0) throw new Error(`the consumer process of run ${i + 1} exited with ${code}`);
    });
    clientRecords.push(JSON.parse(await readFile(out, 'utf8')));
  }
} finally {
  broker.child.kill('SIGTERM');
  await new Promise((resolve) => broker.child.once('exit', resolve));
}
const brokerRecord = JSON.parse(await readFile(brokerOut, 'utf8').catch(() => '{"events":[]}'));
await rm(dir, { recursive: true, force: true });

clientRecords.forEach((rec, i) => {
  const at = (name) => rec.marks.find((m) => m.name === name)?.at;
  const t0 = at('start');
  const end = at('first');
  if (t0 === undefined || end === undefined) return;
  const events = [
    ...rec.events
      .filter((e) => e.kind === 'write' && (e.command || e.codes.length > 0) && e.at >= t0 && e.at <= end)
      .map((e) => ({
        at: e.at,
        side: 'consumer',
        label: `writes ${e.command ?? nameOf(e.codes[0])}`,
        count: 1,
        bytes: e.bytes,
      })),
    ...brokerEvents(brokerRecord, t0, end),
    ...rec.marks
      .filter((m) => m.name !== 'start')
      .map((m) => ({ at: m.at, side: 'consumer', label: m.name, count: 1, bytes: 0 })),
  ].sort((a, b) => a.at - b.at);
  process.stdout.write(
    `\nrun ${i + 1} (${kind} over ${transport}${i === 0 ? ', a broker that has served no consumer yet' : ''}):` +
      ` start() ${(at('started') - t0).toFixed(1)} ms, first message ${(end - t0).toFixed(1)} ms\n`,
  );
  for (const line of merged(events)) {
    const times =
      line.lastAt > line.at
        ? `${(line.at - t0).toFixed(1)}-${(line.lastAt - t0).toFixed(1)}`
        : (line.at - t0).toFixed(1);
    const count = line.count > 1 ? ` x${line.count}` : '';
    const bytes = line.label === 'answers' ? ` (${line.bytes} bytes)` : '';
    process.stdout.write(`${times.padStart(11)}  ${line.side.padEnd(8)}  ${line.label}${count}${bytes}\n`);
  }
});
