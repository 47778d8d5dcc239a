// Child of bench/consumer-ab.mjs: imports the package from the given root, drains each given topic with C
// push consumers of one group, and sends back per topic the consumer CPU per message (process.cpuUsage from
// the first delivery to the last) and the rate. Not a bench on its own. With a sixth argument `paced`,
// every topic's consumers are started at once, 'ready' is sent to the parent once all are ready, and
// the one-byte message that created each topic is not counted.
import path from 'node:path';
import { PerformanceObserver, performance } from 'node:perf_hooks';
const [root, connectJson, topicsJson, nStr, cStr, mode] = process.argv.slice(2);
const paced = mode === 'paced';
const { PushConsumer } = await import(path.join(root, 'dist/index.js'));
const connect = JSON.parse(connectJson);
const topics = JSON.parse(topicsJson);
const N = Number(nStr);
const C = Number(cStr);
const cpu = () => {
  const u = process.cpuUsage();
  return [u.user, u.system];
};
/** Starts the consumers of `topic`; `measured` resolves with its figures once N messages are in. */
async function startTopic(topic) {
  let received = 0,
    first = 0,
    last = 0,
    c0,
    g0 = 0,
    done;
  const allIn = new Promise((r) => (done = r));
  const consumers = [];
  for (let i = 0; i < C; i++) {
    const c = new PushConsumer({
      ...connect,
      consumerGroup: `G_${topic}`,
      instanceName: `i${i}`,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      pullBatchSize: 32,
      consumeMessageBatchMaxSize: 32,
    });
    c.subscribe(topic, '*');
    c.registerMessageListener((msgs) => {
      const now = performance.now();
      const n = paced ? msgs.filter((m) => (m.body?.length ?? 0) > 1).length : msgs.length;
      if (n === 0) return;
      if (received === 0) {
        first = now;
        c0 = cpu();
        g0 = gcs;
      }
      last = now;
      received += n;
      if (received >= N) done();
    });
    consumers.push(c);
  }
  await Promise.all(consumers.map((c) => c.start()));
  const measured = allIn.then(async () => {
    const c1 = cpu();
    const result = {
      topic,
      rate: (received / (last - first)) * 1000,
      cpu: (c1[0] + c1[1] - c0[0] - c0[1]) / received,
      sys: (c1[1] - c0[1]) / received,
      gcPer1000: ((gcs - g0) * 1000) / received,
    };
    await Promise.all(consumers.map((c) => c.shutdown()));
    return result;
  });
  return { measured };
}
/** Garbage collections so far (young and full): per message, a load-proof measure of allocation. */
let gcs = 0;
new PerformanceObserver((list) => (gcs += list.getEntries().length)).observe({ entryTypes: ['gc'] });
const results = [];
if (paced) {
  const started = await Promise.all(topics.map(startTopic));
  process.send('ready');
  for (const s of started) results.push(await s.measured);
} else {
  for (const topic of topics) results.push(await (await startTopic(topic)).measured);
}
process.send(results, () => process.exit(0));
