// The judged orderly-consumption scenario, shared by the Jest tests (push-consumer-orderly-group-http and
// -tcp.test.ts) and the soak (test/soak/orderly-group.soak.mjs). Uses the compiled package in dist/ (built by Jest's
// globalSetup or `npm run build`): an in-process broker, a producer here, and 2–4 orderly push consumers
// of one group, each in its own process (orderly-group-child.mjs), over HTTP endpoints or TCP remoting.
//
// Each round: members join, one leaves (graceful shutdown), one is SIGKILLed in the middle of a listener
// call (it reports that it is inside one: a condition, not a timer), and another joins, while the producer
// sends sequence-numbered messages for many keys with `shardingKey`. Every listener call is recorded with
// its member, queue and start/end times (Date.now() of the one machine); every lock the broker grants is
// recorded as it is granted (with the group's committed offset of the queue at that moment), and the
// broker's lock table is sampled every few ms. Then:
//  - order: per key, within one ownership epoch of its queue (a member's hold of the lock, from the grant
//    to the grant to someone else or its unlock), each delivery's sequence is the previous one + 1; the
//    first delivery of a key in an epoch is the key's first message at or after the offset committed when
//    the lock was granted (a crash or a hand-over re-delivers that suffix, never skips); the first
//    delivery ever is sequence 0;
//  - exclusion: no two members' calls on one queue overlap in time; no two calls of one key overlap;
//  - locks: every call lies inside an epoch of its own member (granted before the call started, not
//    granted to another member or unlocked before it ended), and every lock-table sample taken during a
//    call names the call's member;
//  - nothing lost: every sent sequence was processed (a call that returned) at least once.
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setInterval, clearInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Broker } from '../../dist/broker/index.js';
import { Producer } from '../../dist/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const CHILD = path.join(here, 'orderly-group-child.mjs');
const DIST = path.resolve(here, '../../dist/index.js');

/** Lock timing, scaled down from RocketMQ's 20 s / 30 s / 60 s with the same proportions' safety margin. */
const BROKER_LOCK_MS = 3000;
const CLIENT_LOCK_INTERVAL_MS = 500;
const CLIENT_LOCK_MAX_LIVE_MS = 1500;

async function until(cond, timeoutMs, what, problems, state = () => '') {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (problems?.length) throw new Error(`${what}: stopped after problems: ${problems.slice(0, 5).join('; ')}`);
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; ${state()}`);
    await sleep(10);
  }
}

/** One member process. */
function spawnMember(name, cfg, problems) {
  const child = spawn(process.execPath, [CHILD, JSON.stringify(cfg)], { stdio: ['pipe', 'pipe', 'pipe'] });
  const m = {
    name,
    child,
    clientId: undefined,
    calls: [],
    inside: undefined,
    stopped: false,
    exitedAt: undefined,
    killed: false,
    stderr: '',
    logs: [],
  };
  child.stderr.setEncoding('utf8').on('data', (d) => {
    if (m.stderr.length < 20_000) m.stderr += d;
  });
  let partial = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    const lines = (partial + d).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      const o = JSON.parse(l);
      if (o.t === 'started') m.clientId = o.clientId;
      else if (o.t === 'call') m.calls.push(o);
      else if (o.t === 'inside') m.inside = o;
      else if (o.t === 'log') m.logs.push(o);
      else if (o.t === 'stopped') {
        m.stopped = true;
        if (o.report.unfinishedListeners || o.report.errors)
          problems.push(`${name}: shutdown report ${JSON.stringify(o.report)}`);
      }
    }
  });
  // exitedAt is when the process died (a killed member's call ends there); `exited` resolves once its
  // output has been read to the end as well ('close')
  child.on('exit', () => (m.exitedAt = Date.now()));
  m.exited = new Promise((resolve) =>
    child.on('close', (code, signal) => {
      if (!m.killed && code !== 0) problems.push(`${name} exited with ${code ?? signal}: ${m.stderr.slice(0, 2000)}`);
      resolve();
    }),
  );
  m.send = (cmd) => child.stdin.write(cmd + '\n');
  return m;
}

/**
 * Runs the scenario; resolves with figures and `problems` (empty when every check held).
 * @param {import('./orderly-group.d.mts').OrderlyGroupOptions} options
 */
export async function runOrderlyGroupScenario(options) {
  const o = {
    transport: 'http',
    keys: 24,
    perRound: 6,
    rounds: 1,
    queues: 4,
    batch: 1,
    keyConcurrency: undefined,
    ...options,
  };
  const problems = [];
  const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-orderly-group-'));
  const tcp = o.transport === 'tcp';
  const broker = await Broker.start({
    storePath,
    port: 0,
    ...(tcp ? { remotingPort: 0 } : {}),
    rebalanceLockMaxLiveTimeMs: BROKER_LOCK_MS,
    watchRenewGraceMs: 1000,
    clientScanIntervalMs: 200,
  });
  const where = tcp ? { namesrvAddr: broker.remotingAddress } : { endpoints: broker.address };
  const suffix = `${process.pid}_${Date.now().toString(36)}`;
  const topic = `OrdGrp_${suffix}`;
  const group = `gOrdGrp_${suffix}`;
  const producer = new Producer({ ...where, defaultTopicQueueNums: o.queues, sendMsgTimeoutMs: 30_000 });
  const members = [];
  const samples = new Map(); // queueId → [t, holder][]
  const grants = []; // { t, q, clientId, committed }
  const unlocks = []; // { t, q, clientId }
  const commits = []; // { t, n, q, offset, clientHost, via }
  let sampler;
  try {
    await producer.start();
    // Every lock the broker grants to a new holder, with the committed offset at that moment.
    const lm = broker.context.rebalanceLockManager;
    const lastHolder = new Map();
    let events = 0;
    const tryLockBatch = lm.tryLockBatch.bind(lm);
    lm.tryLockBatch = (g, mqs, clientId) => {
      const locked = tryLockBatch(g, mqs, clientId);
      if (g === group)
        for (const mq of locked) {
          if (mq.topic !== topic || lastHolder.get(mq.queueId) === clientId) continue;
          lastHolder.set(mq.queueId, clientId);
          const committed = broker.consumerOffsetManager.queryOffset(group, topic, mq.queueId);
          grants.push({ t: Date.now(), n: events++, q: mq.queueId, clientId, committed: Math.max(0, committed) });
        }
      return locked;
    };
    const unlockBatch = lm.unlockBatch.bind(lm);
    lm.unlockBatch = (g, mqs, clientId) => {
      if (g === group)
        for (const mq of mqs)
          if (mq.topic === topic && lastHolder.get(mq.queueId) === clientId) {
            lastHolder.delete(mq.queueId);
            unlocks.push({ t: Date.now(), n: events++, q: mq.queueId, clientId });
          }
      return unlockBatch(g, mqs, clientId);
    };
    // Every offset the broker takes for the group (from a pull's commit or an UPDATE_CONSUMER_OFFSET),
    // so a re-delivery after a hand-over can be shown with the commits that led to it.
    const com = broker.consumerOffsetManager;
    const commitOffset = com.commitOffset.bind(com);
    // Every argument is passed on: a pull's commit is increase-only, and dropping that flag let a pull
    // that arrived after a member's final update move the offset back in this test alone.
    com.commitOffset = (clientHost, g, t, queueId, offset, ...rest) => {
      if (g === group && t === topic) {
        const via = /pull-message/.test(new Error().stack ?? '') ? 'pull' : 'update';
        commits.push({ t: Date.now(), n: events++, q: queueId, offset, clientHost, via });
      }
      return commitOffset(clientHost, g, t, queueId, offset, ...rest);
    };
    const brokerName = broker.context.brokerName;
    sampler = setInterval(() => {
      const t = Date.now();
      for (let q = 0; q < o.queues; q++) {
        let list = samples.get(q);
        if (!list) samples.set(q, (list = []));
        list.push([t, lm.lockHolder(group, { topic, brokerName, queueId: q })]);
      }
    }, 3);

    // Sends: each key's messages one after another (a send starts after the previous one resolved).
    const keys = Array.from({ length: o.keys }, (_, i) => `key${i}`);
    const nextSeq = new Map(keys.map((k) => [k, 0]));
    const sent = new Map(); // `${key}:${seq}` → { q, offset }
    const keyQueue = new Map();
    const sendStep = async () => {
      await Promise.all(
        keys.map(async (key) => {
          {
            const seq = nextSeq.get(key);
            nextSeq.set(key, seq + 1);
            const r = await producer.send({ topic, body: Buffer.from(`${key}:${seq}`) }, { shardingKey: key });
            sent.set(`${key}:${seq}`, { q: r.messageQueue.queueId, offset: r.queueOffset });
            if ((keyQueue.get(key) ?? r.messageQueue.queueId) !== r.messageQueue.queueId)
              problems.push(`${key} was sent to two queues`);
            keyQueue.set(key, r.messageQueue.queueId);
          }
        }),
      );
    };
    const processed = new Set();
    const countProcessed = () => {
      for (const m of members)
        for (let i = m.counted ?? 0; i < m.calls.length; i++)
          for (const [k, s] of m.calls[i].msgs) processed.add(`${k}:${s}`);
      for (const m of members) m.counted = m.calls.length;
      return processed.size;
    };
    const cfg = {
      dist: DIST,
      ...where,
      group,
      topic,
      batch: o.batch,
      keyConcurrency: o.keyConcurrency,
      lockIntervalMs: CLIENT_LOCK_INTERVAL_MS,
      lockMaxLiveMs: CLIENT_LOCK_MAX_LIVE_MS,
    };
    let n = 0;
    const join = async () => {
      const m = spawnMember(`m${++n}`, cfg, problems);
      members.push(m);
      await until(() => m.clientId !== undefined, 60_000, `${m.name} to start`, problems);
      return m;
    };
    const live = () => members.filter((m) => m.exitedAt === undefined && !m.killed);
    const WAIT = 60_000;
    const state = () =>
      `members: ${members.map((m) => `${m.name} ${m.clientId} calls ${m.calls.length}${m.exitedAt ? ' exited' : ''}`).join(', ')}; ` +
      `grants: ${grants.map((g) => `q${g.q}→${g.clientId}@${g.t}`).join(' ')}; unlocks: ${unlocks.length}; ` +
      `processed ${countProcessed()} of ${sent.size}`;

    // Sends one message per key (keys in parallel) at least `perRound` times and until `cond` holds.
    const flow = async (cond, what) => {
      const deadline = Date.now() + WAIT;
      for (let i = 0; i < o.perRound || !cond(); i++) {
        if (problems.length) throw new Error(`${what}: stopped after problems: ${problems.slice(0, 5).join('; ')}`);
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; ${state()}`);
        await sendStep();
      }
    };
    let leaves = 0;
    let kills = 0;
    for (let round = 1; round <= o.rounds; round++) {
      // Members join (two at first) while messages flow.
      const joined = [];
      while (live().length < 2) joined.push(join());
      const firsts = await Promise.all(joined);
      await flow(() => firsts.every((m) => m.calls.length > 0), 'the first members to consume');
      // A third member joins while messages flow: queues move from the others to it.
      const c = await join();
      await flow(() => c.calls.length > 0, `${c.name} to consume`);
      // One member leaves gracefully while messages flow.
      const leaver = live()[0];
      leaver.send('stop');
      await flow(() => leaver.exitedAt !== undefined, `${leaver.name} to leave`);
      leaves++;
      if (!leaver.stopped) problems.push(`${leaver.name} did not report its shutdown`);
      // One member is killed in the middle of a listener call: armed, then killed once it reports it is inside.
      const victim = live()[0];
      victim.send('arm');
      await flow(() => victim.inside !== undefined, `${victim.name} to enter a listener call`);
      victim.killed = true;
      victim.child.kill('SIGKILL');
      await victim.exited;
      kills++;
      // Another joins after the crash; the dead member's queues move once its locks expire on the broker.
      const d = await join();
      await flow(() => d.calls.length > 0, `${d.name} to consume`);
    }
    await until(() => countProcessed() >= sent.size, WAIT, 'every message sent to be processed', problems, state);
    // Everyone left shuts down gracefully.
    for (const m of live()) m.send('stop');
    await Promise.all(live().map((m) => m.exited));

    const result = check({ members, grants, unlocks, commits, samples, sent, keys, keyQueue, problems, o });
    return { ...result, sent: sent.size, leaves, kills, members: members.length, problems };
  } finally {
    if (sampler) clearInterval(sampler);
    for (const m of members) if (m.exitedAt === undefined) m.child.kill('SIGKILL');
    await Promise.all(members.map((m) => m.exited));
    await producer.shutdown().catch(() => undefined);
    await broker.shutdown();
    fs.rmSync(storePath, { recursive: true, force: true });
  }
}

function check({ members, grants, unlocks, commits, samples, sent, keys, keyQueue, problems, o }) {
  const nameOf = new Map(members.map((m) => [m.clientId, m.name]));
  // Epochs: member m holds queue q from a grant to the next grant to someone else, or to its unlock.
  const epochs = [];
  const killed = new Set(members.filter((m) => m.killed).map((m) => m.name));
  for (const g of grants) {
    const next = grants.find((x) => x.q === g.q && x.n > g.n && x.clientId !== g.clientId);
    const unlock = unlocks.find((u) => u.q === g.q && u.clientId === g.clientId && u.n > g.n);
    const end = Math.min(next?.t ?? Infinity, unlock?.t ?? Infinity);
    // The queue's previous holder: a member that was killed (a crash) or one that let go (a hand-over).
    const before = grants.filter((x) => x.q === g.q && x.n < g.n).at(-1);
    const afterCrash = before !== undefined && killed.has(nameOf.get(before.clientId));
    // A hand-over proper: the previous holder unlocked the queue before this grant. A grant without that
    // unlock follows a lock that expired (its holder stalled past the lock time, as on a loaded machine),
    // after which RocketMQ's at-least-once allows the uncommitted suffix to be consumed again.
    const afterHandover =
      before !== undefined &&
      !afterCrash &&
      unlocks.some((u) => u.q === g.q && u.clientId === before.clientId && u.n > before.n && u.n < g.n);
    epochs.push({ ...g, member: nameOf.get(g.clientId), end, afterCrash, afterHandover });
  }
  const epochOf = (member, q, t) =>
    epochs.filter((e) => e.member === member && e.q === q && e.t <= t && t <= e.end).at(-1);

  // Every call, with the killed one ending when its process died.
  const calls = [];
  for (const m of members) {
    m.calls.forEach((c, i) => calls.push({ ...c, member: m.name, idx: i, done: true }));
    if (m.inside && m.killed)
      calls.push({ ...m.inside, e: m.exitedAt, member: m.name, idx: m.calls.length, done: false });
  }
  calls.sort((a, b) => a.s - b.s || (a.member === b.member ? a.idx - b.idx : 0));

  // Locks: each call inside an epoch of its member; samples during the call name the member.
  let sampled = 0;
  for (const c of calls) {
    const e = epochOf(c.member, c.q, c.s);
    if (!e) problems.push(`${c.member} called the listener on queue ${c.q} at ${c.s} without holding its lock`);
    else if (c.e > e.end)
      problems.push(`${c.member}'s call on queue ${c.q} (${c.s}-${c.e}) outlived its lock (until ${e.end})`);
    c.epoch = e;
    const list = samples.get(c.q) ?? [];
    let hit = false;
    for (const [t, holder] of list) {
      if (t < c.s || t > c.e) continue;
      hit = true;
      if (nameOf.get(holder) !== c.member)
        problems.push(
          `lock sample at ${t}: queue ${c.q} held by ${nameOf.get(holder) ?? holder}, called by ${c.member}`,
        );
    }
    if (hit) sampled++;
  }

  // Exclusion: per queue, no call overlaps another member's; per key, no two calls overlap.
  const maxEnd = new Map(); // `${q}|${member}` → latest end
  const keyEnd = new Map();
  for (const c of calls) {
    for (const [k, v] of maxEnd) {
      const [q, member] = k.split('|');
      if (Number(q) === c.q && member !== c.member && v > c.s)
        problems.push(`queue ${c.q}: ${c.member}'s call at ${c.s} overlaps ${member}'s call ending ${v}`);
    }
    const k = `${c.q}|${c.member}`;
    maxEnd.set(k, Math.max(maxEnd.get(k) ?? 0, c.e));
    for (const [key] of c.msgs) {
      if ((keyEnd.get(key) ?? 0) > c.s) problems.push(`key ${key}: two calls at once (one starting ${c.s})`);
      keyEnd.set(key, Math.max(keyEnd.get(key) ?? 0, c.e));
    }
  }

  // Order: per key, within an epoch +1 each time; an epoch starts at the first message ≥ its committed offset.
  let redelivered = 0;
  let redeliveredAfterHandover = 0;
  const handoverRedeliveries = [];
  let duplicateStores = 0;
  const perKey = new Map(keys.map((k) => [k, []]));
  for (const c of calls)
    for (const [key, seq, offset] of c.msgs) {
      if (sent.get(`${key}:${seq}`)?.offset !== offset) {
        duplicateStores++; // a retried send stored twice: not one of the sequence's messages
        continue;
      }
      perKey.get(key)?.push({ seq, offset, c });
    }
  for (const key of keys) {
    const q = keyQueue.get(key);
    const offsets = []; // by seq
    for (let s = 0; sent.has(`${key}:${s}`); s++) offsets.push(sent.get(`${key}:${s}`).offset);
    let prev;
    for (const d of perKey.get(key)) {
      if (d.c.q !== q) problems.push(`key ${key} delivered from queue ${d.c.q}, sent to ${q}`);
      let want;
      if (!prev) want = 0;
      else if (prev.c.epoch === d.c.epoch) want = prev.seq + 1;
      else {
        // A new epoch: the key's first message at or after the committed offset when the lock was granted.
        want = offsets.findIndex((off) => off >= (d.c.epoch?.committed ?? 0));
        if (want >= 0 && want <= prev.seq) {
          redelivered += prev.seq - want + 1;
          // A crash's uncommitted suffix is re-delivered by whoever holds the queue next, and again by
          // the holder after that when the first let go before reaching it: only messages a member that
          // let go gracefully (an unlock) had consumed count as re-delivered after a hand-over.
          if (d.c.epoch?.afterHandover && !killed.has(prev.c.member)) {
            redeliveredAfterHandover += prev.seq - want + 1;
            // The last commits of the queue before the grant: which write left the offset where it was.
            const before = commits
              .filter((x) => x.q === q && x.n < d.c.epoch.n)
              .slice(-6)
              .map((x) => `${x.via} ${x.offset} from ${x.clientHost} at t=${x.t}`)
              .join('; ');
            // The letting-go member's unlock of the queue and the warnings it logged (a failed offset write?).
            const gone = members.find((m) => m.name === prev.c.member);
            const unlock = unlocks
              .filter((u) => u.q === q && u.clientId === gone?.clientId && u.n < d.c.epoch.n)
              .at(-1);
            const warned = (gone?.logs ?? []).slice(-3).map((l) => `${l.level} at t=${l.at}: ${l.msg} ${l.detail}`);
            handoverRedeliveries.push(
              `key ${key}: seq ${want}..${prev.seq} consumed by ${prev.c.member}, again by ${d.c.member} ` +
                `(granted at committed offset ${d.c.epoch.committed}, t=${d.c.epoch.t}; last commits: ${before}; ` +
                `unlocked at t=${unlock?.t}${gone?.stopped ? ' (it left)' : ''}; its warnings: ${warned.join(' | ') || 'none'})`,
            );
          }
        }
      }
      if (d.seq !== want) {
        problems.push(
          `key ${key}: ${d.c.member} got seq ${d.seq} (offset ${d.offset}) where ${want} was due ` +
            `(previous ${prev ? `${prev.seq} by ${prev.c.member}` : 'none'})`,
        );
      }
      prev = d;
    }
  }

  // Nothing lost.
  const processed = new Set();
  for (const c of calls) if (c.done) for (const [k, s] of c.msgs) processed.add(`${k}:${s}`);
  const lost = [...sent.keys()].filter((k) => !processed.has(k));
  if (lost.length) problems.push(`${lost.length} sent messages never processed, e.g. ${lost.slice(0, 5).join(', ')}`);
  const deliveries = calls.reduce((n, c) => n + c.msgs.length, 0);
  return {
    calls: calls.length,
    deliveries,
    redelivered,
    redeliveredAfterHandover,
    handoverRedeliveries,
    duplicateStores,
    lost: lost.length,
    grants: grants.length,
    sampledCalls: sampled,
    mode: o.keyConcurrency ? `keyConcurrency ${o.keyConcurrency}` : 'per queue',
  };
}
