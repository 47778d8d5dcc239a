#!/usr/bin/env node
// Soak: attacks on the remoting (TCP) listener, long versions of test/integration/broker-hardening/remoting-*.test.ts
// and compression-bombs.test.ts, against a broker from dist/ (run `npm run build` first) with its default limits,
// 127.0.0.1 only. Each scenario has a fresh broker in a child process of its own (remoting-attacks-broker.mjs), so
// that its RSS is not mixed with the attackers' memory; `SOAK_BROKER_ENV="K=V K2=V2"` adds variables to its environment
// (e.g. MALLOC_ARENA_MAX=2, to measure the allocator's part), and `SOAK_BROKER_ARGS` node options (e.g. to profile it).
//   pipelining   50 connections x 200 pipelined PULL_MESSAGE (~240 KiB answers each), never read;
//   partial      100 connections each announcing a 7 MiB frame and sending 6 MiB of it, then silent;
//   heartbeats   one connection sending 3,000 HEART_BEATs with a new clientID each, in one group, never read;
//   bombs        4 connections sending LZ4, zlib and zstd bodies that expand to 64 MiB, for 20 s;
//   idle         1,000 connections that never send a request (the per-address limit), then new clients;
//   slowdrip     200 connections at a time trickling one byte a second of a 1 KiB frame, for 20 s;
//   malformed    200 connections at a time writing a valid request and a bad frame in one write, for 15 s.
// While each runs, a well-behaved TCP client and an HTTP client (in a process of their own, apart from the
// attackers') each send a message every 20 ms (their p99 is reported, and every message acknowledged is looked
// up in the store afterwards), and a health probe opens a new TCP connection every 500 ms for GET_BROKER_RUNTIME_INFO (answered within 2 s or counted late). Each scenario
// reports the broker's RSS (and heap, external, array buffers) before, at its peak, a minute after the
// attackers left and after a forced GC then, and the broker's budget counters.
// Pass: the broker-wide budget peak stays within maxBufferedBytes (plus small SYSTEM_BUSY answers), every health
// probe answered within 2 s, both clients served, nothing acknowledged lost, everything held given back, and the
// scenario ended within its time bound. Prints `SOAK {json}` rows (scripts/soak.mjs).
// Usage: node test/soak/remoting-attacks.soak.mjs [pipelining|partial|heartbeats|bombs|idle|slowdrip|malformed ...]
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import { clearInterval, clearTimeout, setInterval, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { compressBody } from '../../dist/common/codec/compression.js';
import { CompressionType } from '../../dist/common/codec/constants.js';
import { RequestCode, ResponseCode } from '../../dist/protocol/index.js';
import { encodeRemotingCommand } from '../../dist/remoting/index.js';
import { connector, nextAnswer, proberChild, sendExt, startBrokerChild } from './remoting-attacks-clients.mjs';

const MiB = 2 ** 20;
const which = process.argv.slice(2);
const wanted = (name) => which.length === 0 || which.includes(name);
/** The broker of the scenario running: a fresh one for each, so that each starts from the same baseline. */
let broker;
const ask = (op, arg) => broker.ask(op, arg);
const rss = () => broker.rss();
const attackers = new Set();
/** An attacker's connection: closed with the others when the attack ends. */
const open = (o = {}) => broker.open({ ...o, set: attackers });
const closeAttackers = () => {
  for (const s of attackers) s.destroy();
  attackers.clear();
};
let failed = false;

const memLine = (m) =>
  `heap ${(m.heapUsed / MiB).toFixed(0)} / external ${(m.external / MiB).toFixed(0)} / arrayBuffers ${(m.arrayBuffers / MiB).toFixed(0)} MiB`;

/** Runs one attack; `bound` ms is its time bound (the minute after and the checks come on top). */
async function scenario(name, bound, attack) {
  const topic = `SoakT_${name}`;
  let phase = 'starting the broker';
  const watchdog = setTimeout(() => {
    process.stdout.write(`${name}: FAILED, did not end within ${bound + 120_000} ms (while ${phase})\n`);
    broker?.kill();
    process.exit(1);
  }, bound + 120_000);
  broker = await startBrokerChild(process.env.SOAK_BROKER_ENV);
  broker.open = connector(broker.host, broker.port).open;
  const base = await ask('gc');
  const before = rss();
  let peak = before;
  let peakMem = base;
  const sampler = setInterval(() => {
    const r = rss();
    if (r > peak) {
      peak = r;
      void ask('mem').then((m) => (peakMem = m));
    }
  }, 100);
  phase = 'starting the probers';
  const probe = await proberChild(broker.host, broker.port, broker.http, topic);
  const t0 = Date.now();
  let note = '';
  phase = 'attacking';
  try {
    note = (await attack(topic)) ?? '';
  } catch (e) {
    failed = true;
    note = `attack failed: ${e.message}`;
  }
  const attackMs = Date.now() - t0;
  phase = 'asking for stats';
  const stats = await ask('stats');
  closeAttackers();
  phase = 'stopping the probers';
  const p = await probe.stop();
  phase = 'a minute after';
  const left = rss();
  await sleep(60_000);
  clearInterval(sampler);
  const after = rss();
  const afterMem = await ask('mem');
  // V8 gives collected buffers back on a background thread: a second collection a moment later shows it.
  await ask('gc');
  await sleep(1000);
  const gced = await ask('gc');
  await sleep(500);
  const afterGc = rss();
  phase = 'checking the acknowledged messages';
  const acked = [...p.tcp.acked, ...p.web.acked];
  const lost = await ask('missing', acked);
  const end = await ask('stats');
  await ask('shutdown');
  const ok =
    stats.budgetPeakBytes <= broker.wide + 8 * MiB &&
    p.tcp.latencies.length > 0 &&
    p.web.latencies.length > 0 &&
    p.health.late === 0 &&
    lost === 0 &&
    end.budgetUsedBytes === 0;
  if (!ok) failed = true;
  clearTimeout(watchdog);
  const notes =
    `${note}; rss ${before.toFixed(0)} -> peak ${peak.toFixed(0)} -> ${left.toFixed(0)} as attackers left -> ` +
    `${after.toFixed(0)} MiB a minute after (${afterGc.toFixed(0)} after a forced GC); ` +
    `before: ${memLine(base)}; peak: ${memLine(peakMem)}; a minute after: ${memLine(afterMem)}; after GC: ${memLine(gced)}; ` +
    `budget peak ${(stats.budgetPeakBytes / MiB).toFixed(1)} MiB, busy ${stats.busyAnswers}, refused frames ${stats.refusedFrames}, ` +
    `closed slow ${stats.closedSlowFrames} / undrained ${stats.closedUndrained} / no request ${stats.closedNoRequest} / idle ${stats.closedIdle}, ` +
    `evicted ${stats.evictedConnections}, refused connections ${stats.refusedConnections}; ` +
    `TCP client p99 ${p.tcp.p99.toFixed(1)} ms over ${p.tcp.latencies.length} sends (${p.tcp.over20} over 20 ms, ${p.tcp.failures} failed); ` +
    `HTTP client p99 ${p.web.p99.toFixed(1)} ms over ${p.web.latencies.length} sends (${p.web.over20} over 20 ms, ${p.web.failures} failed); ` +
    `health probes ${p.health.probes - p.health.late}/${p.health.probes} within 2 s (slowest ${p.health.worstMs.toFixed(0)} ms); ` +
    `attack ${attackMs} ms; ${ok ? 'ok' : 'FAILED'}`;
  process.stdout.write(`${name}: ${notes}\n`);
  if (process.env.SOAK_SLOW_AT)
    process.stdout.write(`slow sends at (ms): TCP ${p.tcp.slowAt} / HTTP ${p.web.slowAt}\n`);
  const row = {
    scenario: `remoting ${name}`,
    runs: 1,
    sent: null,
    acknowledged: acked.length,
    consumed: acked.length - lost,
    lost,
    duplicates: null,
    notes,
  };
  process.stdout.write(`SOAK ${JSON.stringify(row)}\n`);
}

/** Opens `count` attackers at a time, each doing `act`, until `ms` has passed; how many were opened. */
async function waves(count, ms, act) {
  const until = Date.now() + ms;
  let opened = 0;
  while (Date.now() < until) {
    const conns = await Promise.allSettled(Array.from({ length: count }, () => open()));
    const live = conns.filter((c) => c.status === 'fulfilled').map((c) => c.value);
    opened += live.length;
    await Promise.all(live.map((s) => act(s, until)));
  }
  return opened;
}
const closed = (s, until) =>
  new Promise((resolve) => {
    if (s.destroyed) return resolve(true);
    const timer = setTimeout(() => resolve(false), Math.max(0, until - Date.now()));
    s.once('close', () => (clearTimeout(timer), resolve(true)));
  });

const pull = (opaque, group, topic) =>
  encodeRemotingCommand({
    code: RequestCode.PULL_MESSAGE,
    opaque,
    extFields: {
      consumerGroup: group,
      topic,
      queueId: '0',
      queueOffset: '0',
      maxMsgNums: '32',
      sysFlag: '4',
      commitOffset: '0',
      suspendTimeoutMillis: '0',
      subscription: '*',
      subVersion: '0',
      expressionType: 'TAG',
    },
  });
const heartbeat = (opaque, clientID, group, topic) =>
  encodeRemotingCommand({
    code: RequestCode.HEART_BEAT,
    opaque,
    extFields: {},
    body: Buffer.from(
      JSON.stringify({
        clientID,
        consumerDataSet: [
          {
            groupName: group,
            consumeType: 'CONSUME_PASSIVELY',
            messageModel: 'CLUSTERING',
            consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
            unitMode: false,
            subscriptionDataSet: [
              {
                topic,
                subString: '*',
                tagsSet: [],
                codeSet: [],
                subVersion: 1,
                expressionType: 'TAG',
                classFilterMode: false,
              },
            ],
          },
        ],
        producerDataSet: [],
      }),
    ),
  });

if (wanted('pipelining')) {
  await scenario('pipelining', 90_000, async (topic) => {
    const body = Buffer.alloc(60 * 1024, 120);
    const producer = await open();
    const state = { buf: Buffer.alloc(0) };
    for (let i = 0; i < 8; i++) {
      producer.write(
        encodeRemotingCommand({ code: RequestCode.SEND_MESSAGE, opaque: i + 1, extFields: sendExt(topic), body }),
      );
      await nextAnswer(producer, state, 10_000);
    }
    const frames = Buffer.concat(Array.from({ length: 200 }, (_, i) => pull(i + 1, 'SoakPipeG', topic)));
    const conns = await Promise.all(Array.from({ length: 50 }, () => open({ read: false })));
    const t0 = Date.now();
    for (const c of conns) c.write(frames);
    const deadline = Date.now() + 60_000;
    // Each connection is answered until the listener stops reading it, as it reads no answers.
    while ((await ask('stats')).notReading < 50 && Date.now() < deadline) await sleep(100);
    const flooded = Date.now() - t0;
    await sleep(20_000); // the unread answers held, until remotingDrainTimeoutMs would close their connections
    return `50 x 200 pulls unread (flood answered in ${flooded} ms), held 20 s`;
  });
}

if (wanted('partial')) {
  await scenario('partial', 35_000, async () => {
    const part = Buffer.alloc(6 * MiB);
    part.writeInt32BE(7 * MiB - 4, 0);
    const conns = await Promise.all(Array.from({ length: 100 }, () => open()));
    for (const c of conns) c.write(part);
    await sleep(30_000);
    return `100 x 7 MiB frames, 6 MiB sent`;
  });
}

if (wanted('heartbeats')) {
  await scenario('heartbeats', 15_000, async (topic) => {
    const c = await open({ read: false });
    c.write(Buffer.concat(Array.from({ length: 3000 }, (_, i) => heartbeat(i + 1, `soak@${i}`, 'SoakHbG', topic))));
    await sleep(10_000);
    const s = await ask('stats');
    return `3,000 heartbeats, notices sent ${s.noticesSent}, skipped ${s.noticesSkipped}`;
  });
}

if (wanted('bombs')) {
  await scenario('bombs', 30_000, async (probeTopic) => {
    const topic = `${probeTopic}_Bombs`; // apart from the probers' messages, so that none may be stored
    const zeros = Buffer.alloc(64 * MiB);
    const zstd = Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0xe0, 0, 0, 0, 0, 0, 0, 0, 0, 0x03, 0x00, 0x10, 0]);
    zstd.writeUInt32LE(64 * MiB, 5); // declares 64 MiB, one RLE block
    const streamed = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0x00, 7 << 3])]; // no declared size: 512 x 128 KiB RLE blocks
    for (let i = 0; i < 512; i++) {
      const h = (i === 511 ? 1 : 0) | (1 << 1) | ((128 * 1024) << 3);
      streamed.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff, 0x61]));
    }
    const bombs = [
      [CompressionType.LZ4, compressBody(zeros, CompressionType.LZ4)],
      [CompressionType.ZLIB, compressBody(zeros, CompressionType.ZLIB)],
      [CompressionType.ZSTD, zstd],
      [CompressionType.ZSTD, Buffer.concat(streamed)],
    ];
    const counts = { sent: 0, illegal: 0, other: 0 };
    let slowest = 0;
    await waves(4, 20_000, async (s, until) => {
      const state = { buf: Buffer.alloc(0) };
      for (let i = 0; Date.now() < until; i++) {
        const [type, body] = bombs[i % bombs.length];
        const ext = { ...sendExt(topic), sysFlag: String(0x1 | (type << 8)) };
        const t0 = performance.now();
        s.write(encodeRemotingCommand({ code: RequestCode.SEND_MESSAGE, opaque: i + 1, extFields: ext, body }));
        const a = await nextAnswer(s, state, 10_000).catch(() => null);
        slowest = Math.max(slowest, performance.now() - t0);
        counts.sent++;
        if (a?.code === ResponseCode.MESSAGE_ILLEGAL) counts.illegal++;
        else counts.other++;
        if (!a) return;
      }
    });
    const stored = await ask('maxOffset', topic);
    if (counts.other > 0 || stored > 0) throw new Error(`${counts.other} bombs not refused, ${stored} stored`);
    return `${counts.sent} bombs (LZ4, zlib, zstd declared and undeclared, 64 MiB each) all MESSAGE_ILLEGAL, slowest ${slowest.toFixed(0)} ms, none stored`;
  });
}

if (wanted('idle')) {
  await scenario('idle', 20_000, async () => {
    const settled = await Promise.allSettled(Array.from({ length: 1000 }, () => open()));
    const t0 = performance.now();
    const c = await open();
    c.write(
      encodeRemotingCommand({
        code: RequestCode.GET_MAX_OFFSET,
        opaque: 1,
        extFields: { topic: 'SoakIdle', queueId: '0' },
      }),
    );
    await nextAnswer(c, { buf: Buffer.alloc(0) }, 10_000);
    const served = performance.now() - t0;
    await sleep(15_000); // past remotingFirstRequestTimeoutMs: the idle ones are closed
    const held = settled.filter((s) => s.status === 'fulfilled' && !s.value.destroyed).length;
    return `1,000 idle connections, a new client served in ${served.toFixed(1)} ms, ${held} still open after 15 s`;
  });
}

if (wanted('slowdrip')) {
  await scenario('slowdrip', 30_000, async () => {
    const opened = await waves(200, 20_000, async (s, until) => {
      const frame = Buffer.alloc(1024);
      frame.writeInt32BE(1020, 0);
      for (let i = 0; i < frame.length && !s.destroyed && Date.now() < until; i++) {
        s.write(frame.subarray(i, i + 1));
        await sleep(1000);
      }
    });
    return `${opened} connections sending 1 byte/s of a 1 KiB frame over 20 s`;
  });
}

if (wanted('malformed')) {
  await scenario('malformed', 25_000, async () => {
    let answeredFirst = 0;
    let unanswered = 0;
    const valid = encodeRemotingCommand({
      code: RequestCode.GET_MAX_OFFSET,
      opaque: 1,
      extFields: { topic: 'SoakBad', queueId: '0' },
    });
    const bad = Buffer.from([0xff, 0xff, 0xff, 0xf0, 1, 2, 3, 4]);
    const opened = await waves(200, 15_000, async (s, until) => {
      const answer = nextAnswer(s, { buf: Buffer.alloc(0) }, 10_000).catch(() => null);
      s.write(Buffer.concat([valid, bad]));
      if ((await answer)?.code === ResponseCode.SUCCESS) answeredFirst++;
      else unanswered++;
      await closed(s, until);
    });
    if (unanswered > 0) throw new Error(`${unanswered} valid requests before a bad frame unanswered`);
    return `${opened} connections with a valid request and a bad frame in one write, ${answeredFirst} answered before the close`;
  });
}

process.exit(failed ? 1 : 0);
