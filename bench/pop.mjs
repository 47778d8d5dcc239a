// Pull push, POP push and SimpleConsumer side by side, for docs/consumer.md's "Pull, push or POP": for
// each, the drain throughput of a backlog and the end-to-end latency (send to listener, p50 / p99) of
// messages sent at a steady rate to a running consumer. On the bundled broker (TCP remoting), on a stock
// Apache RocketMQ 5.3.3 NameServer and broker (the 5.3.3 kit: RMQ5_KIT_DIR, else shared/rocketmq5-java
// beside the clone or one of its parents), or on both in one run. Run from a clone with dist/ built
// (`npm run build`):
//
//   node bench/pop.mjs [--broker ours|rocketmq5|both] [--messages 5000] [--rate 200] [--seconds 3]
//                      [--body-bytes 256]
//
// One process runs the producer and the consumers (and the bundled broker), so the figures compare the
// three ways of consuming under the same conditions; they are not the brokers' limits (bench/compare.mjs
// is). The kit's servers run in a temp state dir on free ports and are stopped and removed at the end.
import { Buffer } from 'node:buffer';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir, loadavg, cpus } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { parseArgs, promisify } from 'node:util';
import { Broker } from '../dist/broker/index.js';
import { AdminClient, Producer, PushConsumer, SimpleConsumer } from '../dist/index.js';

const { values: args } = parseArgs({
  options: {
    messages: { type: 'string', default: '5000' },
    rate: { type: 'string', default: '200' },
    seconds: { type: 'string', default: '3' },
    'body-bytes': { type: 'string', default: '256' },
    broker: { type: 'string', default: 'ours' },
  },
});
if (!['ours', 'rocketmq5', 'both'].includes(args.broker))
  throw new Error(`--broker must be ours, rocketmq5 or both, not ${args.broker}`);
const MESSAGES = Number(args.messages);
const RATE = Number(args.rate);
const SECONDS = Number(args.seconds);
const BODY = Buffer.alloc(Number(args['body-bytes']), 'x');
const QUEUES = 4;
const SENT_AT = 'benchSentAt';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const now = () => performance.timeOrigin + performance.now();
const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;

async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`${what}: not done in ${timeoutMs} ms`);
    await sleep(5);
  }
}

/** One consumer kind: start(onMessages) and stop(), and prime() where a new group must be set up first. */
function pushKind(mode, connect, group, topic) {
  let c;
  return {
    async start(on) {
      c = new PushConsumer({
        ...connect,
        consumerGroup: group,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        consumeMode: mode,
        brokerSuspendMaxTimeMs: 2000,
      });
      c.subscribe(topic, '*');
      c.registerMessageListener((msgs) => on(msgs));
      await c.start();
      await c.ready;
    },
    stop: () => c.shutdown(),
  };
}

function simpleKind(connect, group, topic) {
  let c;
  let stopped = false;
  let loop;
  return {
    // A new group's first POP with RocketMQ's ConsumeInitMode MAX (the SimpleConsumer's) starts it at the
    // end of each queue on RocketMQ 5.3.3: one receive before the messages are sent makes it see them all.
    async prime() {
      const p = new SimpleConsumer({ ...connect, consumerGroup: group, awaitDurationMs: 1000 });
      p.subscribe(topic, '*');
      await p.start();
      try {
        await p.receive(1, 10_000);
      } finally {
        await p.shutdown();
      }
    },
    async start(on) {
      c = new SimpleConsumer({ ...connect, consumerGroup: group, awaitDurationMs: 2000 });
      c.subscribe(topic, '*');
      await c.start();
      // Four receive loops, as an application would run to keep up; each acks what it received.
      const one = async () => {
        while (!stopped) {
          let got = [];
          try {
            got = await c.receive(32, 30_000);
          } catch (e) {
            if (stopped) return;
            throw e;
          }
          on(got);
          await Promise.all(got.map((m) => c.ack(m)));
        }
      };
      loop = Promise.all([one(), one(), one(), one()]);
    },
    async stop() {
      stopped = true;
      await c.shutdown();
      await loop.catch(() => undefined);
    },
  };
}

async function send(producer, topic, n, stamp) {
  const batch = [];
  for (let i = 0; i < n; i++) {
    const properties = stamp ? { [SENT_AT]: String(now()) } : undefined;
    batch.push(producer.send({ topic, body: BODY, properties }));
    if (batch.length === 64) await Promise.all(batch.splice(0));
  }
  await Promise.all(batch);
}

async function measure(name, makeKind, { namesrvAddr, producer, createTopic }) {
  const connect = { namesrvAddr };
  const tag = `${name.replace(/\W/g, '')}_${process.pid}_${Date.now().toString(36)}`;
  // Drain: a backlog sent first, then the consumer started; from its start to the last message.
  const drainTopic = `PopBenchDrain_${tag}`;
  await createTopic(drainTopic);
  const drain = makeKind(connect, `PopBenchG_${tag}_d`, drainTopic);
  await drain.prime?.();
  await send(producer, drainTopic, MESSAGES, false);
  let received = 0;
  const t0 = now();
  await drain.start((msgs) => void (received += msgs.length));
  await until(() => received >= MESSAGES, 120_000, `${name} drain`);
  const drainMs = now() - t0;
  const drainReceived = received;
  await drain.stop();
  // Latency: a running consumer, messages sent at RATE per second for SECONDS.
  const latTopic = `PopBenchLat_${tag}`;
  await createTopic(latTopic);
  const live = makeKind(connect, `PopBenchG_${tag}_l`, latTopic);
  await live.prime?.();
  await send(producer, latTopic, 1, false);
  const lat = [];
  await live.start((msgs) => {
    const t = now();
    for (const m of msgs) {
      const sentAt = Number(m.properties?.[SENT_AT]);
      if (sentAt > 0) lat.push(t - sentAt);
    }
  });
  const total = RATE * SECONDS;
  const start = now();
  for (let i = 0; i < total; i++) {
    const due = start + (i * 1000) / RATE;
    const wait = due - now();
    if (wait > 1) await sleep(wait);
    void producer.send({ topic: latTopic, body: BODY, properties: { [SENT_AT]: String(now()) } });
  }
  await until(() => lat.length >= total, 60_000, `${name} latency`);
  await live.stop();
  lat.sort((a, b) => a - b);
  return {
    name,
    drainMsgPerS: Math.round((MESSAGES / drainMs) * 1000),
    drainDuplicates: drainReceived - MESSAGES,
    p50Ms: Number(pct(lat, 50).toFixed(1)),
    p99Ms: Number(pct(lat, 99).toFixed(1)),
  };
}

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const run = promisify(execFile);

/** The 5.3.3 kit: RMQ5_KIT_DIR, else shared/rocketmq5-java beside the clone or one of its parents. */
function kit5Dir() {
  if (process.env.RMQ5_KIT_DIR) return process.env.RMQ5_KIT_DIR;
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared/rocketmq5-java');
    if (existsSync(path.join(candidate, 'bin/start-broker'))) return candidate;
    if (dir === path.dirname(dir)) throw new Error('no RocketMQ 5.3.3 kit found (set RMQ5_KIT_DIR)');
  }
}

const portFree = (port) =>
  new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });

/** A NameServer port and a broker port whose fast (port - 2) and HA (port + 1) ports are free too. */
async function kitPorts() {
  for (let i = 0; i < 200; i++) {
    const namesrv = 20_000 + Math.floor(Math.random() * 12_000);
    const broker = 20_000 + Math.floor(Math.random() * 12_000);
    const all = [namesrv, broker - 2, broker, broker + 1];
    if (new Set(all).size !== all.length) continue;
    if ((await Promise.all(all.map(portFree))).every(Boolean)) return { namesrv, broker };
  }
  throw new Error('no free ports for the RocketMQ kit');
}

/** Each target: its name server address, how to make a topic, and how to stop it. */
async function startOurs() {
  const storePath = mkdtempSync(path.join(tmpdir(), 'rmq-pop-bench-'));
  const broker = await Broker.start({
    port: 0,
    remotingPort: 0,
    host: '127.0.0.1',
    storePath,
    popReviveIntervalMs: 200,
  });
  return {
    name: 'bundled broker',
    namesrvAddr: broker.remotingAddress,
    async close() {
      await broker.shutdown();
      rmSync(storePath, { recursive: true, force: true });
    },
  };
}

async function startRocketMQ5() {
  const dir = kit5Dir();
  const ports = await kitPorts();
  const home = mkdtempSync(path.join(tmpdir(), 'rmq-pop-bench-kit-'));
  const env = {
    ...process.env,
    RMQ_NAMESRV_PORT: String(ports.namesrv),
    RMQ_BROKER_PORT: String(ports.broker),
    RMQ_NAMESRV_ADDR: `127.0.0.1:${ports.namesrv}`,
    RMQ_HOME_DIR: path.join(home, 'state'),
    RMQ_CLIENT_DIR: path.join(home, 'client'),
    RMQ_STOP_TIMEOUT: '0',
    RMQ_JAVA_OPTS: '-Dtls.server.mode=disabled',
    RMQ_BROKER_HEAP: '-Xms1g -Xmx1g',
    RMQ_NAMESRV_HEAP: '-Xms256m -Xmx256m',
  };
  const script = (name, a = []) => run(path.join(dir, 'bin', name), a, { env, cwd: home });
  const close = async () => {
    await script('stop', ['--clean']).catch((e) => console.error(`# kit stop failed: ${e.message}`));
    rmSync(home, { recursive: true, force: true });
  };
  try {
    await script('start-namesrv');
    await script('start-broker');
  } catch (e) {
    await close();
    throw new Error(`the RocketMQ 5.3.3 kit did not start: ${e.stdout ?? ''}${e.stderr ?? ''}${e.message}`);
  }
  return { name: 'RocketMQ 5.3.3', namesrvAddr: env.RMQ_NAMESRV_ADDR, close };
}

/** The three rows on one target; every topic is made with QUEUES queues before it is used. */
async function benchOn(target) {
  const admin = new AdminClient({ namesrvAddr: target.namesrvAddr });
  const producer = new Producer({
    namesrvAddr: target.namesrvAddr,
    defaultTopicQueueNums: QUEUES,
    sendMsgTimeoutMs: 20_000,
  });
  await producer.start();
  const on = {
    namesrvAddr: target.namesrvAddr,
    producer,
    createTopic: (t) => admin.createTopic(t, { queueNums: QUEUES }),
  };
  const rows = [];
  try {
    rows.push(await measure('push (pull)', (c, g, t) => pushKind('PULL', c, g, t), on));
    rows.push(await measure('push (POP)', (c, g, t) => pushKind('POP', c, g, t), on));
    rows.push(await measure('SimpleConsumer', (c, g, t) => simpleKind(c, g, t), on));
  } finally {
    await producer.shutdown();
    await admin.shutdown();
  }
  return rows.map((r) => ({ broker: target.name, ...r }));
}

const starts = { ours: [startOurs], rocketmq5: [startRocketMQ5], both: [startOurs, startRocketMQ5] }[args.broker];
const rows = [];
const load = loadavg()[0].toFixed(1);
console.log(
  `pop bench: ${MESSAGES} messages drained, ${RATE} msg/s for ${SECONDS} s, ${BODY.length}-byte bodies, ` +
    `${QUEUES} queues, TCP remoting; ${cpus().length} CPUs, load ${load} at start`,
);
for (const start of starts) {
  const target = await start();
  try {
    rows.push(...(await benchOn(target)));
  } finally {
    await target.close();
  }
}
console.table(rows);
console.log(`load ${loadavg()[0].toFixed(1)} at the end`);
