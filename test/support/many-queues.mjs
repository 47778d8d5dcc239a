// Many queues on one broker, shared by the Jest tests (short) and `npm run soak` (60 s): a push
// consumer holds every queue of a topic for `holdMs` while messages keep coming (held pulls, heartbeats,
// membership watches and offset writes all running at once), then a second member joins and the queues
// are split. Checked: no call timed out, no heartbeat failed, the first member was never evicted (it is
// in the broker's member list at every check and never lost queues before the join), the split is
// exactly half and half, every message was delivered, and the messages delivered twice are bounded by
// what was in flight at the hand-over. Over HTTP (`endpoints`) or TCP remoting (`namesrvAddr`).
// `runSplitAcrossProcesses` runs the two members in two child processes instead.
// Uses the compiled package in dist/ (built by Jest's globalSetup or `npm run build`).
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { clearTimeout, setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { Broker } from '../../dist/broker/index.js';
import { AdminClient, Producer, PushConsumer } from '../../dist/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '../../dist/index.js');

/** Messages that may come twice when queues change hands: those sent around the hand-over. */
export const IN_FLIGHT_BOUND = 60;

async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** Records every warning and error a consumer logs. */
function recordingLogger() {
  const problems = [];
  const noop = () => {};
  const record = (obj, msg) => {
    const err = obj && typeof obj === 'object' ? obj.err : undefined;
    problems.push(`${String(msg)}${err?.message ? `: ${err.message}` : ''}`);
  };
  return { problems, debug: noop, info: noop, warn: record, error: record };
}

const starved = (p) => /timed out|heartbeat failed|ERR_TIMEOUT|ERR_TRANSPORT/.test(p);

/** Short holds and periods, so that many cycles of each fit in the run. */
const CONSUMER_TIMINGS = {
  brokerSuspendMaxTimeMs: 5000,
  consumerTimeoutMsWhenSuspend: 15_000,
  heartbeatBrokerIntervalMs: 1000,
  persistConsumerOffsetIntervalMs: 2000,
  watchConsumerIdsHoldMs: 2000,
  stallTimeoutMs: 0,
  // A control call starved by held pulls would wait for a hold to end (5 s, above): 4.5 s still shows it,
  // with more room than the default 3 s for a CI worker whose process shares two cores with another test.
  requestTimeoutMs: 4500,
};

async function startFixture() {
  const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-many-'));
  // A member that misses heartbeats for 6 s is evicted: starving its heartbeat shows at once.
  const broker = await Broker.start({
    port: 0,
    remotingPort: 0,
    storePath,
    channelExpiredTimeoutMs: 6000,
    clientScanIntervalMs: 250,
  });
  const producer = new Producer({ endpoints: broker.address, sendMsgTimeoutMs: 30_000 });
  await producer.start();
  return {
    broker,
    producer,
    async close() {
      await producer.shutdown();
      await broker.shutdown();
      fs.rmSync(storePath, { recursive: true, force: true });
    },
  };
}

async function createTopic(broker, queues) {
  const topic = `Many_${process.pid}_${Date.now().toString(36)}`;
  const admin = new AdminClient({ endpoints: broker.address });
  try {
    await admin.createTopic(topic, { queueNums: queues });
  } finally {
    await admin.shutdown();
  }
  return topic;
}

/** The group's members as the broker knows them now. */
function memberIds(broker, group) {
  return broker.consumerManager.getConsumerGroupInfo(group)?.getAllClientIds() ?? [];
}

/**
 * @param {{ transport: 'http' | 'tcp', queues?: number, holdMs?: number, log?: (line: string) => void }} o
 */
export async function runManyQueues(o) {
  const queues = o.queues ?? 1000;
  const holdMs = o.holdMs ?? 20_000;
  const log = o.log ?? (() => {});
  const fx = await startFixture();
  const { broker, producer } = fx;
  const addressing = o.transport === 'http' ? { endpoints: broker.address } : { namesrvAddr: broker.remotingAddress };
  const topic = await createTopic(broker, queues);
  const group = `gmany_${process.pid}_${Date.now().toString(36)}`;
  const deliveries = new Map();
  const listener = (msgs) => {
    for (const m of msgs) {
      const b = m.body?.toString() ?? '';
      deliveries.set(b, (deliveries.get(b) ?? 0) + 1);
    }
  };
  const logA = recordingLogger();
  const logB = recordingLogger();
  const make = (logger) =>
    new PushConsumer({
      ...addressing,
      consumerGroup: group,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      ...CONSUMER_TIMINGS,
      logger,
    })
      .subscribe(topic, '*')
      .registerMessageListener(listener);
  const a = make(logA);
  const b = make(logB);
  const pullErrors = [];
  for (const c of [a, b])
    c.events.on('pullError', (e) => {
      if (e.error?.code === 'ERR_TRANSPORT' || e.error?.code === 'ERR_TIMEOUT') pullErrors.push(e.error.message);
    });
  const removedFromA = [];
  a.events.on('rebalance', (e) => e.topic === topic && e.removed.length && removedFromA.push(e.removed.length));
  let sent = 0;
  const send = async (n) => {
    for (let i = 0; i < n; i++) await producer.send({ topic, body: Buffer.from(`m-${sent++}`) });
  };
  let checks = 0;
  const missing = [];
  const keepSending = async (ms, expected) => {
    const end = Date.now() + ms;
    while (Date.now() < end) {
      await send(20);
      const ids = memberIds(broker, group);
      checks++;
      for (const c of expected) if (!ids.includes(c.clientId)) missing.push(`${c.clientId} at check ${checks}`);
      await sleep(200);
    }
  };
  const t0 = Date.now();
  let readyA = 0;
  let readyB = 0;
  try {
    await a.start();
    await a.ready;
    readyA = Date.now() - t0;
    log(`${o.transport}: one member holds ${a.assignedQueues().length} queues, ready after ${readyA} ms`);
    await keepSending(holdMs, [a]);
    const removedBeforeJoin = removedFromA.length;
    const t1 = Date.now();
    await b.start();
    await b.ready;
    readyB = Date.now() - t1;
    const share = (c) => c.assignedQueues().filter((q) => q.topic === topic).length;
    await until(() => share(a) === queues / 2 && share(b) === queues / 2, 30_000, 'the split');
    log(`${o.transport}: second member ready after ${readyB} ms; split ${share(a)} / ${share(b)}`);
    await keepSending(3000, [a, b]);
    await until(() => deliveries.size === sent, 60_000, 'every message delivered');
    const duplicates = [...deliveries.values()].filter((n) => n > 1).length;
    return {
      queues,
      holdMs,
      sent,
      delivered: deliveries.size,
      duplicates,
      problems: [...logA.problems, ...logB.problems].filter(starved),
      pullErrors,
      missing,
      removedBeforeJoin,
      removedFromA,
      split: [share(a), share(b)],
      readyA,
      readyB,
    };
  } finally {
    await Promise.all([a.shutdown(), b.shutdown()]);
    await fx.close();
  }
}

/** A child process with one member of `group` that prints `consumed <body>` per message. */
function spawnMember(addressing, group, topic) {
  const opts = {
    ...addressing,
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    ...CONSUMER_TIMINGS,
  };
  const script = `
    const { PushConsumer } = await import(${JSON.stringify(dist)});
    const problems = [];
    const record = (obj, msg) => problems.push(String(msg) + (obj && obj.err && obj.err.message ? ': ' + obj.err.message : ''));
    const c = new PushConsumer({ ...${JSON.stringify(opts)}, logger: { debug() {}, info() {}, warn: record, error: record } });
    c.subscribe(${JSON.stringify(topic)}, '*');
    c.registerMessageListener((msgs) => {
      for (const m of msgs) process.stdout.write('consumed ' + m.body.toString() + '\\n');
    });
    await c.start();
    await c.ready;
    process.stdout.write('ready ' + c.clientId + '\\n');
    setInterval(() => {
      const n = c.assignedQueues().filter((q) => q.topic === ${JSON.stringify(topic)}).length;
      process.stdout.write('held ' + n + '\\n');
    }, 200);
    // The parent went away (a timed-out test, a Jest worker that was killed): don't linger.
    process.stdin.on('end', () => process.exit(1));
    process.stdin.on('data', async () => {
      await c.shutdown();
      for (const p of problems) process.stdout.write('problem ' + p + '\\n');
      process.exit(0);
    });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  // `closed`: the child has exited and its output has been read to the end
  const closed = new Promise((resolve) => child.once('close', resolve));
  const state = { child, closed, consumed: [], held: 0, clientId: undefined, problems: [] };
  let partial = '';
  child.stdout.on('data', (d) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      if (l.startsWith('consumed ')) state.consumed.push(l.slice(9));
      else if (l.startsWith('held ')) state.held = Number(l.slice(5));
      else if (l.startsWith('ready ')) state.clientId = l.slice(6);
      else if (l.startsWith('problem ')) state.problems.push(l.slice(8));
    }
  });
  return state;
}

async function stopMember(m) {
  if (m.child.exitCode !== null || m.child.signalCode !== null) return m.closed;
  m.child.stdin.write('stop\n');
  const kill = setTimeout(() => m.child.kill('SIGKILL'), 20_000);
  await m.closed;
  clearTimeout(kill);
}

/**
 * A group holding `queues` queues across two processes: both members split them, hold them for
 * `holdMs` while messages keep coming, and every message is delivered once.
 * @param {{ transport: 'http' | 'tcp', queues?: number, holdMs?: number, log?: (line: string) => void }} o
 */
export async function runSplitAcrossProcesses(o) {
  const queues = o.queues ?? 512;
  const holdMs = o.holdMs ?? 10_000;
  const log = o.log ?? (() => {});
  const fx = await startFixture();
  const { broker, producer } = fx;
  const addressing = o.transport === 'http' ? { endpoints: broker.address } : { namesrvAddr: broker.remotingAddress };
  const topic = await createTopic(broker, queues);
  const group = `gsplit_${process.pid}_${Date.now().toString(36)}`;
  const members = [spawnMember(addressing, group, topic), spawnMember(addressing, group, topic)];
  let sent = 0;
  const missing = [];
  try {
    await until(() => members.every((m) => m.held === queues / 2), 60_000, 'the split across processes');
    log(`${o.transport}: two processes hold ${members.map((m) => m.held).join(' / ')} queues`);
    const end = Date.now() + holdMs;
    while (Date.now() < end) {
      for (let i = 0; i < 20; i++) await producer.send({ topic, body: Buffer.from(`s-${sent++}`) });
      const ids = memberIds(broker, group);
      for (const m of members) if (!ids.includes(m.clientId)) missing.push(m.clientId);
      await sleep(200);
    }
    const distinct = () => new Set(members.flatMap((m) => m.consumed)).size;
    await until(() => distinct() === sent, 60_000, 'every message delivered');
    const all = members.flatMap((m) => m.consumed);
    return {
      queues,
      holdMs,
      sent,
      delivered: distinct(),
      duplicates: all.length - distinct(),
      held: members.map((m) => m.held),
      missing,
      members,
    };
  } finally {
    await Promise.all(members.map(stopMember));
    await fx.close();
  }
}
