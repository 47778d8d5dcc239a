// Child of bench/consumer-ab.mjs: imports the package from the given root, drains each given topic with C
// push consumers of one group, and sends back per topic the consumer CPU per message (process.cpuUsage from
// the first delivery to the last) and the rate. Not a bench on its own.
import path from 'node:path';
import { performance } from 'node:perf_hooks';
const [root, connectJson, topicsJson, nStr, cStr] = process.argv.slice(2);
const { PushConsumer } = await import(path.join(root, 'dist/index.js'));
const connect = JSON.parse(connectJson);
const topics = JSON.parse(topicsJson);
const N = Number(nStr);
const C = Number(cStr);
const cpu = () => {
  const u = process.cpuUsage();
  return [u.user, u.system];
};
const results = [];
for (const topic of topics) {
  let received = 0,
    first = 0,
    last = 0,
    c0,
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
      if (received === 0) {
        first = now;
        c0 = cpu();
      }
      last = now;
      received += msgs.length;
      if (received >= N) done();
    });
    consumers.push(c);
  }
  await Promise.all(consumers.map((c) => c.start()));
  await allIn;
  const c1 = cpu();
  results.push({
    topic,
    rate: (received / (last - first)) * 1000,
    cpu: (c1[0] + c1[1] - c0[0] - c0[1]) / received,
    sys: (c1[1] - c0[1]) / received,
  });
  await Promise.all(consumers.map((c) => c.shutdown()));
}
process.send(results, () => process.exit(0));
