// What several benches share: the bundled broker as a child process (the CLI), and a backlog sent in
// batches. Not a bench on its own (bench/run.mjs runs only *.bench.mjs).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { brokerAddresses } from './compare-lib.mjs';

/**
 * Starts `<root>/dist/cli.js broker` (or the `cli` given, another build's) on a free port with its store
 * in `storePath` (and a remoting port when `tcp`); resolves once it listens, with its HTTP address and
 * (when `tcp`) its remoting address. `echo` copies its output to this process's stderr.
 */
export async function startCliBroker({
  root,
  cli = path.join(root, 'dist/cli.js'),
  storePath,
  tcp = false,
  nodeArgs = [],
  echo = false,
}) {
  const child = spawn(
    process.execPath,
    [...nodeArgs, cli, 'broker', '--store', storePath, '--port', '0', ...(tcp ? ['--remoting-port', '0'] : [])],
    { stdio: ['ignore', 'pipe', echo ? 'inherit' : 'ignore'] },
  );
  const found = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      if (echo) process.stderr.write(d);
      out += d;
      const found = brokerAddresses(out);
      if (found.http && (!tcp || found.tcp)) resolve(found);
    });
    child.on('exit', (code) => reject(new Error(`broker exited with ${code}`)));
  });
  return { child, ...found };
}

/** Sends `n` messages of `bodyBytes` to `topic` in batches (about 1 MiB each), four batches at a time. */
export async function sendBacklog(producer, topic, n, bodyBytes) {
  const body = Buffer.alloc(bodyBytes, 0x61);
  const perBatch = Math.max(1, Math.min(256, Math.floor((1024 * 1024) / (bodyBytes + 64))));
  let sent = 0;
  const worker = async () => {
    while (sent < n) {
      const k = Math.min(perBatch, n - sent);
      sent += k;
      await producer.sendBatch(Array.from({ length: k }, () => ({ topic, body })));
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
}

/** A logger that drops everything, for the clients the benches make. */
export const silent = { debug() {}, info() {}, warn() {}, error() {}, child: () => silent };

/**
 * One start of a consumer of `kind` ('push', 'orderly' or 'lite'; `lib` is a build's dist/index.js) in a
 * new group reading `topic` from its first offset over `transport` ('tcp' or 'http') at `addr`, until its
 * first message; then it shuts down. `mark(name)` is called at 'start', 'started' (start() resolved) and
 * 'first'. Resolves with the ms from start() to 'started' and to 'first', and the push consumer's settle
 * (NaN for lite).
 */
export async function startToFirstMessage(lib, { kind, transport, addr, topic, mark = () => {} }) {
  const common = {
    ...(transport === 'http' ? { endpoints: addr } : { namesrvAddr: addr }),
    consumerGroup: `first-${kind}-${transport}-${process.pid}-${Math.random().toString(36).slice(2)}`,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    logger: silent,
  };
  let t0 = 0;
  let first = NaN;
  const at = (name) => {
    mark(name);
    return performance.now() - t0;
  };
  if (kind === 'lite') {
    const c = new lib.LitePullConsumer(common);
    c.subscribe(topic, '*');
    t0 = performance.now();
    mark('start');
    await c.start();
    const started = at('started');
    for (let i = 0; i < 1000 && Number.isNaN(first); i++) {
      if ((await c.poll({ timeoutMs: 100 })).length > 0) first = at('first');
    }
    await c.shutdown();
    return { started, first, settle: NaN };
  }
  const c = new lib.PushConsumer(common);
  c.subscribe(topic, '*');
  let got;
  const firstSeen = new Promise((resolve) => (got = resolve));
  const onMessage = () => {
    if (Number.isNaN(first)) got((first = at('first')));
    return kind === 'orderly' ? lib.ConsumeOrderlyStatus.SUCCESS : lib.ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  };
  if (kind === 'orderly') c.registerMessageListenerOrderly(onMessage);
  else c.registerMessageListener(onMessage);
  let settle = NaN;
  c.on('ready', (e) => (settle = e.settleMs));
  t0 = performance.now();
  mark('start');
  await c.start();
  const started = at('started');
  await firstSeen;
  await c.ready.catch(() => undefined);
  await c.shutdown();
  return { started, first, settle };
}

/**
 * A new topic of 8 queues on `broker` (made over HTTP with `lib`, a build's dist/index.js), named
 * `prefix` and the time, holding `n` messages of `bodyBytes`; resolves with its name once all are stored.
 */
export async function backlogTopic(lib, broker, prefix, n, bodyBytes = 1024) {
  const topic = `${prefix}${Date.now()}`;
  const admin = new lib.AdminClient({ endpoints: broker.http, logger: silent });
  try {
    await admin.createTopic(topic, { queueNums: 8 });
  } finally {
    await admin.shutdown();
  }
  const producer = new lib.Producer({ endpoints: broker.http, producerGroup: `${prefix}-producer`, logger: silent });
  await producer.start();
  try {
    await sendBacklog(producer, topic, n, bodyBytes);
  } finally {
    await producer.shutdown();
  }
  return topic;
}

/**
 * Messages per second a new PushConsumer (built by `makeConsumer(group)`, subscribed to every tag of
 * `topic`, reading from the first offset) takes to receive `n` messages, timed from start().
 */
export async function drainRate(makeConsumer, group, topic, n) {
  let got = 0;
  let done;
  const finished = new Promise((r) => (done = r));
  const c = makeConsumer(group);
  c.subscribe(topic, '*');
  c.registerMessageListener((msgs) => {
    got += msgs.length;
    if (got >= n) done();
  });
  const t0 = performance.now();
  await c.start();
  await finished;
  const seconds = (performance.now() - t0) / 1000;
  await c.shutdown();
  return n / seconds;
}
