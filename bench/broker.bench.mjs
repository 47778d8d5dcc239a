// The broker's pull path: pulls served per second for 32 × 1 KiB batches over loopback keep-alive
// (undici Pool), long-poll wake latency (send acknowledged → held pull answered) p50/p99, and the
// broker's CPU per message served (process.cpuUsage of the broker process). The broker runs in a child
// process (this file, forked with `child`) so its CPU is measured apart from the client's.
// Imports the compiled package (npm run build). One line per figure: name, value, unit.
import { Buffer } from 'node:buffer';
import { fork } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

if (process.argv[2] === 'child') {
  const { Broker } = await import('../dist/broker/index.js');
  const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-broker-'));
  const broker = await Broker.start({ storePath, port: 0 });
  process.on('message', async (m) => {
    if (m === 'cpu') process.send({ cpu: process.cpuUsage() });
    if (m === 'stop') {
      await broker.shutdown();
      rmSync(storePath, { recursive: true, force: true });
      process.exit(0);
    }
  });
  process.send({ address: broker.address });
} else {
  await main();
}

async function main() {
  const { Pool } = await import('undici');
  const { decodeFrame, encodeFrame, buildPullSysFlag } = await import('../dist/protocol/index.js');
  const { encodeBatchBody } = await import('../dist/common/codec/index.js');

  const report = (name, value, unit) => console.log(`${name} ${Number(value.toFixed(3))} ${unit}`);
  const child = fork(fileURLToPath(import.meta.url), ['child'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const nextMessage = () => new Promise((resolve) => child.once('message', resolve));
  const { address } = await nextMessage();
  const cpu = async () => {
    child.send('cpu');
    return (await nextMessage()).cpu;
  };

  const pool = new Pool(address, { connections: 16, pipelining: 1 });
  async function call(command, header, body) {
    const res = await pool.request({
      path: `/v1/${command}`,
      method: 'POST',
      body: encodeFrame(header, body),
      headers: { 'content-type': 'application/x-rocketmq-command' },
      headersTimeout: 60_000,
      bodyTimeout: 60_000,
    });
    const frame = decodeFrame(Buffer.from(await res.body.arrayBuffer()));
    return { ...frame.header, body: frame.body ?? Buffer.alloc(0) };
  }
  const sendHeader = (topic, queueId) => ({
    producerGroup: 'bench',
    topic,
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: 4,
    queueId,
    sysFlag: 0,
    bornTimestamp: Date.now(),
    flag: 0,
    properties: '\u0001',
  });

  // ---- preload: 4 queues × 2048 messages of 1 KiB, sent in batches of 32
  const topic = 'BenchPull';
  const QUEUES = 4;
  const PER_QUEUE = 2048;
  const batch = encodeBatchBody(Array.from({ length: 32 }, () => ({ body: Buffer.alloc(1024, 0x61) })));
  for (let q = 0; q < QUEUES; q++) {
    const sends = [];
    for (let i = 0; i < PER_QUEUE / 32; i++) sends.push(call('SEND_BATCH_MESSAGE', sendHeader(topic, q), batch));
    await Promise.all(sends);
  }

  // ---- pulls/s: 16 loops, each walking one queue in steps of 32
  const pull = (group, t, queueId, queueOffset, extra = {}) =>
    call('PULL_MESSAGE', {
      consumerGroup: group,
      topic: t,
      queueId,
      queueOffset,
      maxMsgNums: 32,
      sysFlag: buildPullSysFlag(false, false, true),
      commitOffset: 0,
      suspendTimeoutMillis: 0,
      subVersion: 0,
      subscription: '*',
      ...extra,
    });
  // warm-up
  for (let i = 0; i < 200; i++) await pull('warm', topic, i % QUEUES, (i * 32) % PER_QUEUE);
  const DURATION_MS = 5000;
  let pulls = 0;
  let messages = 0;
  const cpu0 = await cpu();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: 16 }, async (_, w) => {
      let offset = (w * 128) % PER_QUEUE;
      while (performance.now() - t0 < DURATION_MS) {
        const r = await pull('bench', topic, w % QUEUES, offset);
        if (r.code !== 0) throw new Error(`pull answered ${r.code} ${r.remark}`);
        pulls += 1;
        messages += r.header.nextBeginOffset - offset;
        offset = r.header.nextBeginOffset >= PER_QUEUE ? 0 : r.header.nextBeginOffset;
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const cpu1 = await cpu();
  const cpuMicros = cpu1.user - cpu0.user + (cpu1.system - cpu0.system);
  report('broker.pull.32x1KiB.pulls_per_s', pulls / seconds, 'pulls/s');
  report('broker.pull.32x1KiB.messages_per_s', messages / seconds, 'msgs/s');
  report('broker.pull.cpu_per_message', cpuMicros / messages, 'us/msg');
  report('broker.pull.cpu_per_pull', cpuMicros / pulls, 'us/pull');

  // ---- long-poll wake latency: a held pull at the head of a queue, then one send
  const lpTopic = 'BenchLongPoll';
  await call('SEND_MESSAGE', sendHeader(lpTopic, 0), Buffer.from('seed'));
  const latencies = [];
  const fromSend = [];
  let head = 1;
  for (let i = 0; i < 300; i++) {
    let answeredAt = 0;
    const held = pull('lp', lpTopic, 0, head, {
      sysFlag: buildPullSysFlag(false, true, true),
      suspendTimeoutMillis: 10_000,
    }).then((r) => {
      answeredAt = performance.now();
      return r;
    });
    // give the pull time to reach the broker and be suspended
    await sleep(3);
    const sentAt = performance.now();
    const ack = await call('SEND_MESSAGE', sendHeader(lpTopic, 0), Buffer.from(`m${i}`));
    const ackedAt = performance.now();
    const r = await held;
    if (r.code !== 0) throw new Error(`held pull answered ${r.code} ${r.remark}`);
    head = ack.header.queueOffset + 1;
    latencies.push(Math.max(0, answeredAt - ackedAt));
    fromSend.push(answeredAt - sentAt);
  }
  const pct = (list, p) => {
    const sorted = [...list].sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
  };
  report('broker.longpoll.wake_after_ack.p50', pct(latencies, 50), 'ms');
  report('broker.longpoll.wake_after_ack.p99', pct(latencies, 99), 'ms');
  report('broker.longpoll.send_to_pull_answer.p50', pct(fromSend, 50), 'ms');
  report('broker.longpoll.send_to_pull_answer.p99', pct(fromSend, 99), 'ms');

  await pool.close();
  child.send('stop');
  await new Promise((resolve) => child.once('exit', resolve));
}
