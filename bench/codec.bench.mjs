// Codec throughput: decode of a pull body (32 × 1 KiB messages with TAGS, KEYS, UNIQ_KEY, WAIT), encode of
// stored records, and the store's recovery/dispatch probes. Imports the compiled package (npm run build).
// One line per figure: name, value, unit.
import { Buffer } from 'node:buffer';
import { performance } from 'node:perf_hooks';
import {
  checkRecord,
  createUniqId,
  decodeMessages,
  decodeProperties,
  encodeMessage,
  encodeStoredMessage,
} from '../dist/common/codec/index.js';
import { benchRecords } from './bench-records.mjs';

const MESSAGES = 32;
const BODY = 1024;
const budgetMs = Number(process.env.BENCH_CODEC_MS ?? 2000);

const makeRecords = () => benchRecords({ encodeStoredMessage, createUniqId }, MESSAGES, BODY);

/** Runs `fn` repeatedly for about `ms` milliseconds after a warm-up; returns calls per second. */
function measure(fn, ms = budgetMs) {
  const warmEnd = performance.now() + Math.min(300, ms / 4);
  while (performance.now() < warmEnd) fn();
  let calls = 0;
  const t0 = performance.now();
  let t = t0;
  while (t - t0 < ms) {
    for (let i = 0; i < 50; i++) fn();
    calls += 50;
    t = performance.now();
  }
  return (calls * 1000) / (t - t0);
}

const line = (name, value, unit) =>
  console.log(`${name.padEnd(44)} ${value.toFixed(value < 10 ? 3 : 0).padStart(14)} ${unit}`);

const records = makeRecords();
const body = Buffer.concat(records);
let sink = 0;

const cpu0 = process.cpuUsage();
const wall0 = performance.now();
const decodeRate = measure(() => {
  sink += decodeMessages(body).length;
});
const cpu = process.cpuUsage(cpu0);
const cpuShare = (cpu.user + cpu.system) / 1000 / (performance.now() - wall0);
const msgsPerSec = decodeRate * MESSAGES;
line('codec.decode pull body (32 x 1 KiB)', msgsPerSec, 'messages/s');
line('codec.decode pull body throughput', (decodeRate * body.length) / 1e6, 'MB/s');
line('codec.decode per message', 1e9 / msgsPerSec, 'ns/message');
// On a loaded machine wall time includes time slices lost to other processes; CPU time (all threads of
// this process, GC helpers included) per message is the steadier figure.
line('codec.decode per message (process CPU time)', (1e9 / msgsPerSec) * cpuShare, 'cpu-ns/message');

// The client's pull path decodes with bodyViews (the response buffer is its own): no private copy.
const viewsRate = measure(() => {
  sink += decodeMessages(body, { bodyViews: true }).length;
});
line('codec.decode per message, bodyViews', 1e9 / (viewsRate * MESSAGES), 'ns/message');

const noBodyRate = measure(() => {
  sink += decodeMessages(body, { readBody: false }).length;
});
line('codec.decode without body per message', 1e9 / (noBodyRate * MESSAGES), 'ns/message');

const crcRate = measure(() => {
  sink += decodeMessages(body, { checkCRC: true }).length;
});
line('codec.decode with checkCRC per message', 1e9 / (crcRate * MESSAGES), 'ns/message');

const template = {
  topic: 'BenchTopic',
  body: Buffer.alloc(BODY, 120),
  queueId: 1,
  queueOffset: 0,
  commitLogOffset: 0,
  bornTimestamp: Date.now(),
  storeTimestamp: Date.now(),
  bornHost: { ip: '192.168.1.100', port: 50000 },
  storeHost: { ip: '10.0.0.1', port: 10911 },
  properties: { TAGS: 'TagA', KEYS: 'key-1 order-7', UNIQ_KEY: createUniqId(), WAIT: 'true' },
};
let offset = 0;
const storedRate = measure(() => {
  template.queueOffset++;
  template.commitLogOffset = offset;
  offset += encodeStoredMessage(template).length;
});
line('codec.encodeStoredMessage (1 KiB)', storedRate, 'messages/s');
line('codec.encodeStoredMessage per message', 1e9 / storedRate, 'ns/message');
line('codec.encodeStoredMessage throughput', (storedRate * records[0].length) / 1e6, 'MB/s');

const ext = decodeMessages(records[0])[0];
const encodeRate = measure(() => {
  sink += encodeMessage(ext).length;
});
line('codec.encodeMessage (1 KiB MessageExt)', encodeRate, 'messages/s');

const checkRate = measure(() => {
  for (let p = 0; p < body.length;) {
    const c = checkRecord(body, p);
    p += c.size;
  }
});
line('codec.checkRecord with CRC per record', 1e9 / (checkRate * MESSAGES), 'ns/record');

const propsRate = measure(() => {
  for (let p = 0, i = 0; i < MESSAGES; i++) {
    sink += decodeProperties(body, p) === null ? 0 : 1;
    p += records[i].length;
  }
});
line('codec.decodeProperties per record', 1e9 / (propsRate * MESSAGES), 'ns/record');

if (sink < 0) console.log(sink);
