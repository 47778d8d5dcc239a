// Drain over TCP from Apache RocketMQ 4.9.8: a backlog of N x 1 KiB messages in an 8-queue topic on the
// kit's broker, drained by our PushConsumer through namesrvAddr, next to the kit's own Java client
// (`bench/run drain N`, DefaultMQPushConsumer with pullBatchSize=32, consumeMessageBatchMaxSize=32) on the
// same broker in the same run. Starts the kit's NameServer and broker in a temp state dir and stops them.
// Imports the compiled package (npm run build). Needs the kit (../shared/rocketmq-java or RMQ_KIT_DIR),
// Java 17 and javac.
//
//   node bench/tcp-drain.bench.mjs          env: TCP_DRAIN_MESSAGES [200000]  TCP_DRAIN_BODY_BYTES [1024]
//                                                RMQ_NAMESRV_PORT [33876]  RMQ_BROKER_PORT [33911]
import { Buffer } from 'node:buffer';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { ConsumeConcurrentlyStatus, Producer, PushConsumer } from '../dist/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const kit = path.resolve(process.env.RMQ_KIT_DIR ?? path.join(root, '../shared/rocketmq-java'));
const N = Number(process.env.TCP_DRAIN_MESSAGES ?? 200_000);
const BODY = Number(process.env.TCP_DRAIN_BODY_BYTES ?? 1024);
const NS_PORT = process.env.RMQ_NAMESRV_PORT ?? '33876';
const BROKER_PORT = process.env.RMQ_BROKER_PORT ?? '33911';
const namesrvAddr = `127.0.0.1:${NS_PORT}`;

if (!existsSync(path.join(kit, 'bin/start-broker'))) {
  console.log(`tcp-drain: skipped, no RocketMQ kit at ${kit}`);
  process.exit(0);
}

const home = mkdtempSync(path.join(os.tmpdir(), 'rmq-bench-'));
const env = {
  ...process.env,
  RMQ_NAMESRV_PORT: NS_PORT,
  RMQ_BROKER_PORT: BROKER_PORT,
  RMQ_HOME_DIR: home,
  RMQ_CLIENT_DIR: path.join(home, 'client'),
  RMQ_STOP_TIMEOUT: '0',
  RMQ_JAVA_OPTS: '-Dtls.server.mode=disabled',
  RMQ_BROKER_HEAP: '-Xms1g -Xmx1g',
  RMQ_NAMESRV_HEAP: '-Xms256m -Xmx256m',
};
const run = (script, args = []) =>
  new Promise((resolve, reject) => {
    execFile(path.join(kit, script), args, { env, maxBuffer: 256 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} failed: ${stderr || err.message}`));
      else resolve(String(stdout));
    });
  });

async function preload(producer, topic) {
  const body = Buffer.alloc(BODY, 0x61);
  const t0 = performance.now();
  const BATCH = 64;
  let next = 0;
  const worker = async () => {
    while (next < N) {
      const n = Math.min(BATCH, N - next);
      next += n;
      await producer.sendBatch(Array.from({ length: n }, () => ({ topic, body })));
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return (performance.now() - t0) / 1000;
}

async function drain(topic) {
  let count = 0;
  let first = 0;
  let last = 0;
  let resolveDone;
  const done = new Promise((r) => (resolveDone = r));
  const consumer = new PushConsumer({
    namesrvAddr,
    consumerGroup: `tcp_drain_${Date.now()}`,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    pullBatchSize: 32,
    consumeMessageBatchMaxSize: 32,
  });
  consumer.subscribe(topic, '*').registerMessageListener((msgs) => {
    const now = performance.now();
    if (count === 0) first = now;
    count += msgs.length;
    last = now;
    if (count >= N) resolveDone();
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  });
  const t0 = performance.now();
  await consumer.start();
  await done;
  const fromStart = (last - t0) / 1000;
  const firstToLast = (last - first) / 1000;
  await consumer.shutdown();
  return { count, fromStart, firstToLast };
}

try {
  await run('bin/start-namesrv');
  await run('bin/start-broker');
  const javaOut = await run('bench/run', ['drain', String(N)]);
  for (const line of javaOut.split('\n').filter((l) => /^(preload|drain):/.test(l))) console.log(`java ${line}`);

  const producer = new Producer({ namesrvAddr, defaultTopicQueueNums: 8, sendMsgTimeoutMs: 30_000 });
  await producer.start();
  const topic = `TcpDrain_${Date.now()}`;
  const loadS = await preload(producer, topic);
  await producer.shutdown();
  console.log(
    `ours preload: ${N} x ${BODY} B in ${loadS.toFixed(2)} s = ${Math.round(N / loadS)} msg/s (batches of 64)`,
  );
  const r = await drain(topic);
  console.log(
    `ours drain: ${r.fromStart.toFixed(2)} s from consumer.start() = ${Math.round(N / r.fromStart)} msg/s; ` +
      `${r.firstToLast.toFixed(2)} s first-to-last delivery = ${Math.round(N / r.firstToLast)} msg/s ` +
      `(${((N * BODY) / r.firstToLast / 1024 / 1024).toFixed(1)} MiB/s), deliveries=${r.count}`,
  );
} finally {
  await run('bin/stop', ['--clean']).catch((e) => console.error(String(e)));
  rmSync(home, { recursive: true, force: true });
}
