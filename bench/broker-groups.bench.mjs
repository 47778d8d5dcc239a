// Consumer groups: membership-news latency (a join / a leave → a held WATCH_CONSUMER_IDS answered),
// CONSUMER_SEND_MSG_BACK throughput (to %RETRY% through the delay topic, and to %DLQ%), and the delivery
// of a burst of delayed messages when due. In-process broker over loopback HTTP; imports the compiled
// package (npm run build). One line per figure: name, value, unit; the last is the process's peak RSS
// (broker and this bench's calls together, sampled every 100 ms).
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { clearInterval, setImmediate, setInterval, setTimeout } from 'node:timers';
import { Agent, request } from 'undici';
import { Broker } from '../dist/broker/index.js';
import { decodeMessages, messageProperties2String } from '../dist/common/codec/index.js';
import { decodeFrame, encodeFrame } from '../dist/protocol/index.js';

const storePath = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-groups-'));
const broker = await Broker.start({ storePath, port: 0, store: { messageDelayLevel: '1s 1s 1s' } });
const agent = new Agent({ connections: 64 });
let rssPeak = process.memoryUsage().rss;
const rssSampler = setInterval(() => (rssPeak = Math.max(rssPeak, process.memoryUsage().rss)), 100);

async function call(command, header, body) {
  const res = await request(`${broker.address}/v1/${command}`, {
    method: 'POST',
    body: encodeFrame(header, body),
    headers: { 'content-type': 'application/x-rocketmq-command' },
    dispatcher: agent,
  });
  const frame = decodeFrame(Buffer.from(await res.body.arrayBuffer()));
  return { ...frame.header, body: frame.body ?? Buffer.alloc(0) };
}

const heartbeat = (clientID, group) =>
  call(
    'HEART_BEAT',
    {},
    Buffer.from(
      JSON.stringify({
        clientID,
        consumerDataSet: [
          {
            groupName: group,
            consumeType: 'CONSUME_PASSIVELY',
            messageModel: 'CLUSTERING',
            consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
            subscriptionDataSet: [
              { topic: 'BenchT', subString: '*', tagsSet: [], codeSet: [], subVersion: 1, expressionType: 'TAG' },
            ],
          },
        ],
      }),
    ),
  );

const pct = (sorted, p) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
const report = (name, value, unit) => console.log(`${name} ${Number(value.toFixed(3))} ${unit}`);

// ---- membership news latency
{
  const group = 'BenchWatchGroup';
  await heartbeat('watcher', group);
  let version = (
    await call('WATCH_CONSUMER_IDS', { consumerGroup: group, clientID: 'watcher', version: -1, timeoutMillis: 0 })
  ).header.version;
  const lat = [];
  for (let i = 0; i < 300; i++) {
    const held = call('WATCH_CONSUMER_IDS', {
      consumerGroup: group,
      clientID: 'watcher',
      version,
      timeoutMillis: 30_000,
    });
    while (broker.consumerManager.waiterCount(group) === 0) await new Promise((r) => setImmediate(r));
    const t0 = process.hrtime.bigint();
    if (i % 2 === 0) void heartbeat(`member-${i}`, group);
    else void call('UNREGISTER_CLIENT', { clientID: `member-${i - 1}`, consumerGroup: group });
    const answer = await held;
    lat.push(Number(process.hrtime.bigint() - t0) / 1e6);
    version = answer.header.version;
  }
  lat.sort((a, b) => a - b);
  report('watch_news_latency_p50', pct(lat, 50), 'ms');
  report('watch_news_latency_p99', pct(lat, 99), 'ms');
}

// ---- send-back throughput
async function sendMany(topic, n) {
  const offsets = [];
  for (let i = 0; i < n; i += 32) {
    const batch = [];
    for (let j = i; j < Math.min(n, i + 32); j++) {
      batch.push(
        call(
          'SEND_MESSAGE',
          {
            producerGroup: 'bench',
            topic,
            defaultTopic: 'TBW102',
            defaultTopicQueueNums: 1,
            queueId: 0,
            sysFlag: 0,
            bornTimestamp: Date.now(),
            flag: 0,
            properties: messageProperties2String({ TAGS: 'a', UNIQ_KEY: `u${j}` }),
          },
          Buffer.alloc(1024, 97),
        ),
      );
    }
    await Promise.all(batch);
  }
  let offset = 0;
  while (offsets.length < n) {
    const r = await call('PULL_MESSAGE', {
      consumerGroup: 'bench-g',
      topic,
      queueId: 0,
      queueOffset: offset,
      maxMsgNums: 32,
      sysFlag: 4,
      commitOffset: 0,
      suspendTimeoutMillis: 0,
      subVersion: 0,
      subscription: '*',
    });
    if (r.code !== 0) break;
    for (const m of decodeMessages(r.body)) offsets.push(m.commitLogOffset);
    offset = r.header.nextBeginOffset;
  }
  return offsets;
}

async function sendBackAll(offsets, group, delayLevel) {
  const start = Date.now();
  for (let i = 0; i < offsets.length; i += 16) {
    const codes = await Promise.all(
      offsets.slice(i, i + 16).map((offset) => call('CONSUMER_SEND_MSG_BACK', { offset, group, delayLevel })),
    );
    if (codes.some((c) => c.code !== 0))
      throw new Error(`send-back failed: ${JSON.stringify(codes.find((c) => c.code !== 0))}`);
  }
  const end = Date.now();
  return { start, end, rate: offsets.length / ((end - start) / 1000) };
}

const N = 2000;
const offsets = await sendMany('BenchSendBack', N);
if (offsets.length !== N) throw new Error(`pulled ${offsets.length} of ${N}`);
const retry = await sendBackAll(offsets, 'BenchRetryGroup', 0);
report('send_back_to_retry_throughput', retry.rate, 'msg/s');
report('send_back_to_dlq_throughput', (await sendBackAll(offsets, 'BenchDlqGroup', -1)).rate, 'msg/s');

// ---- delivery of the retry burst when due (level 3 = 1 s here)
{
  while (broker.store.getMaxOffsetInQueue('%RETRY%BenchRetryGroup', 0) < N && Date.now() - retry.end < 30_000) {
    await new Promise((r) => setTimeout(r, 5));
  }
  const done = Date.now();
  report('delayed_burst_last_delivered_after_due', Math.max(0, done - (retry.end + 1000)), 'ms');
  report('delayed_delivery_throughput', N / (Math.max(1, done - (retry.start + 1000)) / 1000), 'msg/s');
}

clearInterval(rssSampler);
report('process_rss_peak', Math.max(rssPeak, process.memoryUsage().rss) / 1048576, 'MiB');
await agent.close();
await broker.shutdown();
rmSync(storePath, { recursive: true, force: true });
