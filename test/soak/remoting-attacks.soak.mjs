#!/usr/bin/env node
// Soak: attacks on the remoting (TCP) listener, long versions of test/integration/broker-hardening/remoting-*.test.ts,
// against an in-process broker from dist/ (run `npm run build` first) with its default limits, 127.0.0.1 only:
//   pipelining   50 connections x 200 pipelined PULL_MESSAGE (~240 KiB answers each), never read;
//   partial      100 connections each announcing a 7 MiB frame and sending 6 MiB of it, then silent;
//   heartbeats   one connection sending 3,000 HEART_BEATs with a new clientID each, in one group, never read;
//   idle         1,000 connections that never send a request (the per-address limit), then new clients.
// While each runs, another client calls GET_MAX_OFFSET in a loop; its p99 is reported. Each scenario reports
// RSS before, at its peak and a minute after the attackers left, and the broker's budget counters.
// Pass: the broker-wide budget peak stays within maxBufferedBytes (plus small SYSTEM_BUSY answers), the other
// client is served throughout, and everything held is given back. Prints `SOAK {json}` rows (scripts/soak.mjs).
// Usage: node test/soak/remoting-attacks.soak.mjs [pipelining|partial|heartbeats|idle ...]
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearInterval, setInterval } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { Broker } from '../../dist/broker/index.js';
import { RequestCode } from '../../dist/protocol/index.js';
import { encodeRemotingCommand, decodeRemotingCommand } from '../../dist/remoting/index.js';

const MiB = 2 ** 20;
const rss = () => process.memoryUsage().rss / MiB;
const which = process.argv.slice(2);
const wanted = (name) => which.length === 0 || which.includes(name);
const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-remoting-soak-'));
const broker = await Broker.start({ storePath, port: 0, remotingPort: 0 });
const [host, port] = [broker.remotingAddress.split(':')[0], Number(broker.remotingAddress.split(':')[1])];
const sockets = new Set();
let failed = false;

function open(read) {
  return new Promise((resolve) => {
    const s = net.connect({ host, port });
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    if (read) s.resume();
    else s.pause();
    s.once('connect', () => resolve(s));
  });
}
const closeAll = () => {
  for (const s of sockets) s.destroy();
  sockets.clear();
};

/** A well-behaved client: one GET_MAX_OFFSET at a time, its latencies kept, until stopped. */
function prober(topic) {
  const latencies = [];
  let stop = false;
  let failures = 0;
  const done = (async () => {
    while (!stop) {
      const s = await open(true);
      let buf = Buffer.alloc(0);
      let opaque = 0;
      try {
        while (!stop) {
          const t0 = performance.now();
          const answer = new Promise((resolve, reject) => {
            const onClose = () => reject(new Error('closed'));
            const onData = (d) => {
              buf = Buffer.concat([buf, d]);
              if (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
                const n = buf.readInt32BE(0);
                const cmd = decodeRemotingCommand(buf.subarray(4, 4 + n));
                buf = buf.subarray(4 + n);
                s.off('data', onData);
                s.off('close', onClose);
                resolve(cmd);
              }
            };
            s.on('data', onData);
            s.once('close', onClose);
          });
          s.write(
            encodeRemotingCommand({
              code: RequestCode.GET_MAX_OFFSET,
              opaque: ++opaque,
              extFields: { topic, queueId: '0' },
            }),
          );
          await answer;
          latencies.push(performance.now() - t0);
          await sleep(20);
        }
      } catch {
        failures++;
      } finally {
        s.destroy();
      }
    }
  })();
  return {
    async stop() {
      stop = true;
      await done;
      const sorted = latencies.sort((a, b) => a - b);
      return { calls: sorted.length, failures, p99: sorted[Math.floor(sorted.length * 0.99)] ?? NaN };
    },
  };
}

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

async function scenario(name, attack) {
  const topic = `SoakT_${name}`;
  const probe = prober(topic);
  const before = rss();
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, rss())), 100);
  broker.remotingStats(); // warm
  const t0 = Date.now();
  let note = '';
  try {
    note = (await attack(topic)) ?? '';
  } catch (e) {
    failed = true;
    note = `attack failed: ${e.message}`;
  }
  const stats = broker.remotingStats();
  closeAll();
  await sleep(60_000);
  clearInterval(sampler);
  const after = rss();
  const p = await probe.stop();
  const wide = broker.options.maxBufferedBytes;
  const ok = stats.budgetPeakBytes <= wide + 8 * MiB && p.calls > 0 && broker.remotingStats().budgetUsedBytes === 0;
  if (!ok) failed = true;
  const notes =
    `${note}; rss ${before.toFixed(0)} -> peak ${peak.toFixed(0)} -> ${after.toFixed(0)} MiB a minute after; ` +
    `budget peak ${(stats.budgetPeakBytes / MiB).toFixed(1)} MiB, busy ${stats.busyAnswers}, refused frames ${stats.refusedFrames}, ` +
    `closed slow ${stats.closedSlowFrames} / undrained ${stats.closedUndrained} / no request ${stats.closedNoRequest}, evicted ${stats.evictedConnections}; ` +
    `other client p99 ${p.p99.toFixed(1)} ms over ${p.calls} calls (${p.failures} failed); ${Date.now() - t0} ms; ${ok ? 'ok' : 'FAILED'}`;
  process.stdout.write(`${name}: ${notes}\n`);
  process.stdout.write(
    `SOAK ${JSON.stringify({ scenario: `remoting ${name}`, runs: 1, sent: null, acknowledged: null, consumed: null, lost: 0, duplicates: null, notes })}\n`,
  );
}

if (wanted('pipelining')) {
  await scenario('pipelining', async (topic) => {
    const body = Buffer.alloc(60 * 1024, 120);
    const producer = await open(true);
    for (let i = 0; i < 8; i++) {
      producer.write(
        encodeRemotingCommand({
          code: RequestCode.SEND_MESSAGE,
          opaque: i + 1,
          extFields: {
            producerGroup: 'soak-p',
            topic,
            defaultTopic: 'TBW102',
            defaultTopicQueueNums: '4',
            queueId: '0',
            sysFlag: '0',
            bornTimestamp: String(Date.now()),
            flag: '0',
            properties: '',
          },
          body,
        }),
      );
    }
    await sleep(500);
    const frames = Buffer.concat(Array.from({ length: 200 }, (_, i) => pull(i + 1, 'SoakPipeG', topic)));
    const conns = await Promise.all(Array.from({ length: 50 }, () => open(false)));
    for (const c of conns) c.write(frames);
    const deadline = Date.now() + 60_000;
    while (broker.remotingStats().busyAnswers < 50 * 150 && Date.now() < deadline) await sleep(100);
    return `50 x 200 pulls unread`;
  });
}

if (wanted('partial')) {
  await scenario('partial', async () => {
    const part = Buffer.alloc(6 * MiB);
    part.writeInt32BE(7 * MiB - 4, 0);
    const conns = await Promise.all(Array.from({ length: 100 }, () => open(true)));
    for (const c of conns) c.write(part);
    await sleep(30_000);
    return `100 x 7 MiB frames, 6 MiB sent`;
  });
}

if (wanted('heartbeats')) {
  await scenario('heartbeats', async (topic) => {
    const c = await open(false);
    const frames = Buffer.concat(
      Array.from({ length: 3000 }, (_, i) => heartbeat(i + 1, `soak@${i}`, 'SoakHbG', topic)),
    );
    c.write(frames);
    await sleep(10_000);
    const s = broker.remotingStats();
    return `3,000 heartbeats, notices sent ${s.noticesSent}, skipped ${s.noticesSkipped}`;
  });
}

if (wanted('idle')) {
  await scenario('idle', async () => {
    await Promise.all(Array.from({ length: 1000 }, () => open(true)));
    const t0 = performance.now();
    const c = await open(true);
    const answered = new Promise((resolve) => c.once('data', resolve));
    c.write(
      encodeRemotingCommand({
        code: RequestCode.GET_MAX_OFFSET,
        opaque: 1,
        extFields: { topic: 'SoakIdle', queueId: '0' },
      }),
    );
    await answered;
    return `1,000 idle connections, a new client served in ${(performance.now() - t0).toFixed(1)} ms`;
  });
}

await broker.shutdown();
fs.rmSync(storePath, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
