// The cost of ACL signing (RocketMQ's AclClientRPCHook signature on every request), in one run:
//   - CPU per signed request: signExtFields on a PULL_MESSAGE header (no body) and on a SEND_MESSAGE_V2
//     header with a 1 KiB body, in a tight loop;
//   - drain throughput of a TCP PushConsumer with and without credentials, on one backlog, against an
//     in-process broker's remoting port (the broker has no ACL file, so it accepts signed and unsigned
//     requests alike and the difference is the client's signing).
// Imports the compiled package (npm run build). One line per figure.
//
// Scale with env vars (defaults in brackets): ACL_MESSAGES [50000]  ACL_BODY_BYTES [1024]  ACL_SIGN_LOOPS [200000]
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Producer, PushConsumer } from '../dist/index.js';
import { Broker } from '../dist/broker/index.js';
import { signExtFields } from '../dist/remoting/index.js';
import { drainRate, sendBacklog } from './bench-broker.mjs';

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const N = env('ACL_MESSAGES', 50_000);
const BODY = env('ACL_BODY_BYTES', 1024);
const LOOPS = env('ACL_SIGN_LOOPS', 200_000);
const report = (name, value, unit) => console.log(`${name} ${Number(Number(value).toFixed(2))} ${unit}`);
const credentials = { accessKey: 'benchUser', secretKey: 'benchSecret123' };

const pull = {
  consumerGroup: 'BenchGroup',
  topic: 'BenchTopic',
  queueId: '3',
  queueOffset: '123456',
  maxMsgNums: '32',
  sysFlag: '3',
  commitOffset: '123400',
  suspendTimeoutMillis: '20000',
  subscription: '*',
  subVersion: '1733550000000',
  expressionType: 'TAG',
};
const send = {
  a: 'pg',
  b: 'BenchTopic',
  c: 'TBW102',
  d: '4',
  e: '2',
  f: '0',
  g: '1733550000000',
  h: '0',
  i: 'TAGS\u0001t\u0002',
  j: '0',
  k: 'false',
  m: 'false',
};
const body = Buffer.alloc(BODY, 0x61);
for (const [label, header, b] of [
  ['pull', pull, null],
  ['send_1KiB', send, body],
]) {
  for (let i = 0; i < 20_000; i++) signExtFields(header, b, credentials); // warm-up
  const t0 = performance.now();
  for (let i = 0; i < LOOPS; i++) signExtFields(header, b, credentials);
  report(`sign_${label}`, ((performance.now() - t0) * 1000) / LOOPS, 'us/request');
}

const storePath = mkdtempSync(path.join(os.tmpdir(), 'bench-acl-'));
const broker = await Broker.start({ port: 0, remotingPort: 0, storePath });
try {
  const topic = 'BenchAclSigning';
  const producer = new Producer({ endpoints: broker.address, producerGroup: 'BenchAclProducer' });
  await producer.start();
  await sendBacklog(producer, topic, N, BODY);
  await producer.shutdown();
  for (const [label, extra] of [
    ['unsigned', {}],
    ['signed', { credentials }],
    ['unsigned_again', {}],
  ]) {
    const rate = await drainRate(
      (group) =>
        new PushConsumer({
          namesrvAddr: broker.remotingAddress,
          consumerGroup: group,
          consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
          pullBatchSize: 32,
          ...extra,
        }),
      `BenchAclGroup_${label}`,
      topic,
      N,
    );
    report(`drain_tcp_${label}`, rate, 'msg/s');
  }
} finally {
  await broker.shutdown();
  rmSync(storePath, { recursive: true, force: true });
}
