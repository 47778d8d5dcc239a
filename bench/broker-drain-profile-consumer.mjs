// The consumer process of bench/broker-drain-profile.mjs (not meant to be run by hand): one PushConsumer
// drains `topic` over TCP from the first offset (pull 32, listener batch 32) and prints `drained N` once
// every sequence number (the body's first 4 bytes) below N was delivered, then shuts down.
//   argv: DIST_DIR NAMESRV_ADDR TOPIC GROUP N
import path from 'node:path';
import process from 'node:process';

const [dist, namesrvAddr, topic, group, n] = process.argv.slice(2);
const lib = await import(path.join(dist, 'index.js'));
const total = Number(n);
const seen = new Uint8Array(total);
let distinct = 0;
let drained;
const done = new Promise((resolve) => (drained = resolve));
const consumer = new lib.PushConsumer({
  namesrvAddr,
  consumerGroup: group,
  consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  pullBatchSize: 32,
  consumeMessageBatchMaxSize: 32,
});
consumer.subscribe(topic, '*');
consumer.registerMessageListener((msgs) => {
  for (const m of msgs) {
    const seq = m.body.readUInt32BE(0);
    if (seq < total && seen[seq] === 0) {
      seen[seq] = 1;
      distinct++;
    }
  }
  if (distinct >= total) drained();
  return lib.ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
});
await consumer.start();
await done;
console.log(`drained ${distinct}`);
await consumer.shutdown({ timeoutMs: 5000 });
