#!/usr/bin/env node
// Soak: the broker floods, long versions, against an in-process broker from dist/ (run `npm run build`
// first) with its default limits:
//   names        20,000 distinct group names in PULL_MESSAGE (the default limit creates 10,000) and
//                5,000 distinct topics in SEND_MESSAGE;
//   pipelining   50 connections x 200 pipelined pulls of ~128 KiB answers, never read;
//   connections  10,000 connections opened, used once and dropped, then 5,000 held open.
// Pass: heap growth after a forced GC under 96 MiB per flood, RSS growth under 512 MiB for the pipelining
// flood (it was +1.1 GiB without the per-connection limits), and the broker serves afterwards. Prints a
// line per flood and `RESULT {json}` rows for docs/reliability.md.
// Usage: node test/soak/floods.soak.mjs [names|pipelining|connections ...]
import { Buffer } from 'node:buffer';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Agent, request } from 'undici';
import { Broker } from '../../dist/broker/index.js';
import { buildPullSysFlag, decodeFrame, encodeFrame } from '../../dist/protocol/index.js';

setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc');
const MiB = 2 ** 20;
const heap = () => {
  gc();
  return process.memoryUsage().heapUsed / MiB;
};
const rss = () => process.memoryUsage().rss / MiB;
const which = process.argv.slice(2);
const wanted = (name) => which.length === 0 || which.includes(name);

const storePath = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-flood-soak-'));
const broker = await Broker.start({ storePath, port: 0 });
const agent = new Agent({ connections: 16, pipelining: 1 });
let failed = false;

async function call(command, header, body) {
  const res = await request(`${broker.address}/v1/${command}`, {
    method: 'POST',
    body: encodeFrame(header, body),
    headers: { 'content-type': 'application/x-rocketmq-command' },
    dispatcher: agent,
  });
  const frame = decodeFrame(Buffer.from(await res.body.arrayBuffer()));
  return frame.header;
}
const sendHeader = (topic) => ({
  producerGroup: 'pg',
  topic,
  defaultTopic: 'TBW102',
  defaultTopicQueueNums: 1,
  queueId: 0,
  sysFlag: 0,
  bornTimestamp: Date.now(),
  flag: 0,
  properties: '',
});
const pullHeader = (group, topic) => ({
  consumerGroup: group,
  topic,
  queueId: 0,
  queueOffset: 0,
  maxMsgNums: 32,
  sysFlag: buildPullSysFlag(false, false, true),
  commitOffset: 0,
  suspendTimeoutMillis: 0,
  subVersion: 0,
  subscription: '*',
});
async function pool(n, concurrency, fn) {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n) await fn(next++);
    }),
  );
}
function report(scenario, sent, acknowledged, notes, ok) {
  if (!ok) failed = true;
  console.log(
    `RESULT ${JSON.stringify({ scenario, runs: 1, sent, acknowledged, consumed: null, lost: 0, duplicates: null, notes: `${notes}; ${ok ? 'ok' : 'FAILED'}` })}`,
  );
}

const topic = 'FLOOD_T';
for (let i = 0; i < 32; i++) await call('SEND_MESSAGE', sendHeader(topic), Buffer.alloc(4000, 'x'));

if (wanted('names')) {
  const h0 = heap();
  const codes = {};
  let slowest = 0;
  await pool(20_000, 16, async (i) => {
    const t = Date.now();
    const h = await call('PULL_MESSAGE', pullHeader(`flood-g-${i}`, topic));
    slowest = Math.max(slowest, Date.now() - t);
    codes[h.code] = (codes[h.code] ?? 0) + 1;
  });
  await pool(5000, 16, async (i) => {
    const h = await call('SEND_MESSAGE', sendHeader(`flood-t-${i}`), Buffer.from('x'));
    codes[`send ${h.code}`] = (codes[`send ${h.code}`] ?? 0) + 1;
  });
  const grew = heap() - h0;
  report(
    'name flood (20,000 groups, 5,000 topics)',
    25_000,
    (codes[0] ?? 0) + (codes['send 0'] ?? 0),
    `codes ${JSON.stringify(codes)}; slowest ${slowest} ms; heap +${grew.toFixed(1)} MiB`,
    grew < 96,
  );
}

if (wanted('pipelining')) {
  const r0 = rss();
  const h0 = heap();
  const url = new URL(broker.address);
  const frame = encodeFrame(pullHeader('pipeline-g', topic));
  const one = Buffer.concat([
    Buffer.from(`POST /v1/PULL_MESSAGE HTTP/1.1\r\nHost: b\r\nContent-Length: ${frame.length}\r\n\r\n`, 'latin1'),
    frame,
  ]);
  const sockets = await Promise.all(
    Array.from(
      { length: 50 },
      () =>
        new Promise((resolve, reject) => {
          const s = net.connect({ host: url.hostname, port: Number(url.port) }, () => resolve(s));
          s.on('error', reject);
        }),
    ),
  );
  for (const s of sockets) s.write(Buffer.concat(Array.from({ length: 200 }, () => one)));
  let peakRss = r0;
  let last = -1;
  for (let stable = 0; stable < 10;) {
    await sleep(200);
    peakRss = Math.max(peakRss, rss());
    const st = broker.connectionStats();
    const seen = st.admittedRequests + st.refusedRequests;
    stable = seen === last ? stable + 1 : 0;
    last = seen;
  }
  const st = broker.connectionStats();
  for (const s of sockets) s.destroy();
  const grew = peakRss - r0;
  report(
    'pipelining flood (50 connections x 200 pulls, never read)',
    10_000,
    st.admittedRequests,
    `admitted ${st.admittedRequests}, refused ${st.refusedRequests}, buffered ${(st.bufferedBytes / MiB).toFixed(1)} MiB; RSS +${grew.toFixed(0)} MiB peak; heap +${(heap() - h0).toFixed(1)} MiB`,
    grew < 512,
  );
}

if (wanted('connections')) {
  const h0 = heap();
  const url = new URL(broker.address);
  const ask = Buffer.concat([
    Buffer.from(
      `POST /v1/GET_MAX_OFFSET HTTP/1.1\r\nHost: b\r\nContent-Length: ${encodeFrame({ topic, queueId: 0 }).length}\r\n\r\n`,
      'latin1',
    ),
    encodeFrame({ topic, queueId: 0 }),
  ]);
  let answered = 0;
  await pool(
    10_000,
    50,
    () =>
      new Promise((resolve) => {
        const s = net.connect({ host: url.hostname, port: Number(url.port) }, () => s.write(ask));
        s.once('data', () => {
          answered++;
          s.destroy();
        });
        s.on('error', () => undefined);
        s.on('close', () => resolve());
      }),
  );
  const held = await Promise.all(
    Array.from(
      { length: 5000 },
      () =>
        new Promise((resolve) => {
          const s = net.connect({ host: url.hostname, port: Number(url.port) }, () => resolve(s));
          s.on('error', () => resolve(s));
        }),
    ),
  );
  await sleep(1000);
  const st = broker.connectionStats();
  for (const s of held) s.destroy();
  const grew = heap() - h0;
  report(
    'connection flood (10,000 churned, 5,000 held)',
    15_000,
    answered,
    `answered ${answered}; open at most ${st.connections}; dropped ${st.droppedConnections}; heap +${grew.toFixed(1)} MiB`,
    grew < 96 && st.connections <= 4096,
  );
}

const h = await call('GET_MAX_OFFSET', { topic, queueId: 0 });
if (h.code !== 0 || h.header.offset !== 32) {
  failed = true;
  console.log(`FAILED: the broker no longer serves: ${JSON.stringify(h)}`);
}
await agent.close();
await broker.shutdown();
fs.rmSync(storePath, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
