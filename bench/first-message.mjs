// From `start()` to the first message of a backlog, per consumer and transport, against the bundled
// broker (a child process): each start uses a new group reading from the first offset. "warm" starts a
// consumer in this process after others have run; "cold" starts it in a new Node process whose first
// consumer it is (the package imported before the clock starts). Prints the medians and the maximum,
// with the time `start()` took and, for the push consumer, its settle (0 when it found itself alone).
// `node bench/first-message.mjs` after `npm run build`; FIRST_ROUNDS sets the rounds (5).
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const self = fileURLToPath(import.meta.url);
const root = path.resolve(path.dirname(self), '..');
const lib = await import(path.join(root, 'dist/index.js'));
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };
const KINDS = ['push', 'push orderly', 'lite pull'];

/** One start of `kind` over `t` from `addr` on `topic`: ms to start() resolving, to the first message; the settle. */
async function startOnce(kind, t, addr, topic) {
  const group = `first-${kind.replace(' ', '-')}-${t}-${process.pid}-${Math.random().toString(36).slice(2)}`;
  const common = {
    ...(t === 'http' ? { endpoints: addr } : { namesrvAddr: addr }),
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    logger: silent,
  };
  if (kind === 'lite pull') {
    const c = new lib.LitePullConsumer(common);
    c.subscribe(topic, '*');
    const t0 = performance.now();
    await c.start();
    const started = performance.now() - t0;
    let first = NaN;
    for (let i = 0; i < 1000 && Number.isNaN(first); i++) {
      if ((await c.poll({ timeoutMs: 100 })).length > 0) first = performance.now() - t0;
    }
    await c.shutdown();
    return { started, first, settle: NaN };
  }
  const c = new lib.PushConsumer(common);
  c.subscribe(topic, '*');
  let mark;
  const got = new Promise((r) => (mark = () => r(performance.now())));
  if (kind === 'push orderly') c.registerMessageListenerOrderly(() => (mark(), lib.ConsumeOrderlyStatus.SUCCESS));
  else c.registerMessageListener(() => mark());
  let settle = NaN;
  c.on('ready', (e) => (settle = e.settleMs));
  const t0 = performance.now();
  await c.start();
  const started = performance.now() - t0;
  const first = (await got) - t0;
  await c.ready.catch(() => undefined);
  await c.shutdown();
  return { started, first, settle };
}

if (process.argv[2] === '--child') {
  const [, , , kind, t, addr, topic] = process.argv;
  process.stdout.write(JSON.stringify(await startOnce(kind, t, addr, topic)));
  process.exit(0);
}

const { startCliBroker, backlogTopic } = await import('./bench-broker.mjs');
const ROUNDS = Number(process.env.FIRST_ROUNDS ?? 5);
const storePath = await mkdtemp(path.join(os.tmpdir(), 'rmq-first-'));
const broker = await startCliBroker({ root, storePath, tcp: true });
const addrOf = (t) => (t === 'http' ? broker.http : broker.tcp);
const topic = await backlogTopic(lib, broker, 'FirstMessage', 2000);

const rows = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const kind of KINDS) {
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
