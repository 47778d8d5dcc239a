// Child of bench/consumer-cost.mjs (not a bench on its own): one consumer drains the topic (push with
// listener batch 32, or lite with a `for await` loop, as bench/compare-worker.mjs runs them) and sends
// back its CPU per message from just before start() to the Nth message, per half, at the first message,
// the rates, and monotonic marks (µs) to window a --cpu-prof profile.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';

const [dist, connectJson, topic, nStr, type] = process.argv.slice(2);
const N = Number(nStr);
const lib = await import(path.join(dist, 'index.js'));
const options = {
  ...JSON.parse(connectJson),
  consumerGroup: `G_${topic}`,
  consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  pullBatchSize: 32,
  ...(process.env.CC_OTEL === '0' ? { openTelemetry: false } : {}),
};
const us = () => Number(process.hrtime.bigint() / 1000n);
const cpuMs = (c) => (c.user + c.system) / 1000;
const marks = {};
let received = 0;
let tFirst = 0;
let tHalf = 0;
let cFirst;
let cHalf;
let done;
const allIn = new Promise((r) => (done = r));
const seen = (n) => {
  if (tFirst === 0) {
    tFirst = performance.now();
    cFirst = process.cpuUsage(c0);
    marks.first = us();
  }
  received += n;
  if (tHalf === 0 && received >= N / 2) {
    tHalf = performance.now();
    cHalf = process.cpuUsage(c0);
    marks.half = us();
  }
  if (received >= N) done();
};
await new Promise((r) => {
  process.once('message', r);
  process.send('loaded');
});
const c0 = process.cpuUsage();
const t0 = performance.now();
marks.go = us();
let stop;
if (type === 'push') {
  const c = new lib.PushConsumer({ ...options, consumeMessageBatchMaxSize: 32 });
  c.subscribe(topic, '*');
  c.registerMessageListener((msgs) => {
    for (const m of msgs) if (m.body.length < 4) throw new Error('short body');
    seen(msgs.length);
    return lib.ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  await c.start();
  stop = () => c.shutdown();
} else {
  const c = new lib.LitePullConsumer(options);
  c.subscribe(topic);
  await c.start();
  void (async () => {
    for await (const m of c) {
      if (m.body.length < 4) throw new Error('short body');
      seen(1);
      if (received >= N) break;
    }
  })();
  stop = () => c.shutdown();
}
await allIn;
const t1 = performance.now();
const c1 = process.cpuUsage(c0);
marks.end = us();
const half = N / 2;
process.send(
  {
    cpu: (cpuMs(c1) * 1000) / N,
    sys: c1.system / N,
    rate: (N / (t1 - t0)) * 1000,
    halves: (t1 - tHalf) / (tHalf - t0),
    firstMs: tFirst - t0,
    startCpuMs: cpuMs(cFirst),
    firstHalfCpu: ((cpuMs(cHalf) - cpuMs(cFirst)) * 1000) / half,
    secondHalfCpu: ((cpuMs(c1) - cpuMs(cHalf)) * 1000) / half,
    marks,
  },
  async () => {
    await stop();
    process.exit(0);
  },
);
