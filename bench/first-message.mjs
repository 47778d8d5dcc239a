// From `start()` to the first message of a backlog, per consumer and transport: the bundled broker as a
// child process, a fresh group per round, and a timeline of each start (start() resolved, ready, first
// message). `node bench/first-message.mjs` after `npm run build`; FIRST_ROUNDS sets the rounds (5).
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startCliBroker, sendBacklog } from './bench-broker.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { AdminClient, Producer, PushConsumer, LitePullConsumer, ConsumeOrderlyStatus } = await import(
  path.join(root, 'dist/index.js')
);

const ROUNDS = Number(process.env.FIRST_ROUNDS ?? 5);
const QUEUES = 8;
const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

const storePath = await mkdtemp(path.join(os.tmpdir(), 'rmq-first-'));
const broker = await startCliBroker({ root, storePath, tcp: true });
const addressing = (t) => (t === 'http' ? { endpoints: broker.http } : { namesrvAddr: broker.tcp });

const producer = new Producer({ endpoints: broker.http, producerGroup: 'first-message-producer', logger: silent });
await producer.start();
const topic = `FirstMessage${Date.now()}`;
const admin = new AdminClient({ endpoints: broker.http, logger: silent });
await admin.createTopic(topic, { queueNums: QUEUES });
await admin.shutdown();
await sendBacklog(producer, topic, 2000, 1024);

/** One start of `kind` over `t`: ms from start() to start() resolving, to ready (push), to the first message. */
async function push(t, orderly, group) {
  const c = new PushConsumer({
    ...addressing(t),
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    logger: silent,
  });
  c.subscribe(topic, '*');
  let first;
  const got = new Promise((r) => (first = r));
  const mark = () => first(performance.now());
  if (orderly) c.registerMessageListenerOrderly(() => (mark(), ConsumeOrderlyStatus.SUCCESS));
  else c.registerMessageListener(() => mark());
  let ready = NaN;
  let settle = NaN;
  c.on('ready', (e) => ((ready = performance.now()), (settle = e.settleMs)));
  const t0 = performance.now();
  await c.start();
  const started = performance.now();
  const firstAt = await got;
  await c.ready.catch(() => undefined);
  await c.shutdown();
  return { started: started - t0, ready: ready - t0, settle, first: firstAt - t0 };
}

async function lite(t, _orderly, group) {
  const c = new LitePullConsumer({
    ...addressing(t),
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    logger: silent,
  });
  c.subscribe(topic, '*');
  const t0 = performance.now();
  await c.start();
  const started = performance.now();
  let firstAt;
  for (let i = 0; i < 1000 && firstAt === undefined; i++) {
    const msgs = await c.poll({ timeoutMs: 100 });
    if (msgs.length > 0) firstAt = performance.now();
  }
  await c.shutdown();
  return { started: started - t0, ready: NaN, settle: NaN, first: firstAt - t0 };
}

const kinds = [
  ['push', push, false],
  ['push orderly', push, true],
  ['lite pull', lite, false],
];
const rows = [];
for (let round = 0; round < ROUNDS; round++) {
  for (const [name, run, orderly] of kinds) {
    for (const t of ['http', 'tcp']) {
      const r = await run(t, orderly, `first-${name.replace(' ', '-')}-${t}-${round}-${Date.now()}`);
      rows.push({ name: `${name} ${t}`, ...r });
    }
  }
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
console.log(`from start() to the first message, ms (median of ${ROUNDS}; max)`);
for (const name of [...new Set(rows.map((r) => r.name))]) {
  const mine = rows.filter((r) => r.name === name);
  const f = (k) => median(mine.map((r) => r[k])).toFixed(1);
  const max = Math.max(...mine.map((r) => r.first)).toFixed(1);
  console.log(
    `${name.padEnd(18)} start() ${f('started').padStart(6)}  ready ${f('ready').padStart(6)} (settle ${f('settle')})  first ${f('first').padStart(6)}  max ${max}`,
  );
}
await producer.shutdown();
broker.child.kill('SIGTERM');
await new Promise((r) => broker.child.once('exit', r));
await rm(storePath, { recursive: true, force: true });
