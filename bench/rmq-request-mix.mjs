#!/usr/bin/env node
// What RocketMQ 4.9.8's broker sees from a draining push consumer: ours over TCP next to the kit's Java
// client, on the same kind of backlog. A recording proxy sits between the consumers and the broker (the broker
// registers itself at 127.0.0.2, the proxy listens there and forwards to the broker's 127.0.0.1 port), decodes
// every frame both ways and counts, over the drain only: frames per request code, header serialization and
// sizes, PULL_MESSAGE sysFlag / subscription / suspend / batch fields, messages per PULL answer, and how many
// socket reads each side's bytes arrived in. Needs the kit (../shared/rocketmq-java) and `npm run build`.
//
// It also prints, per thread name, the CPU the broker's threads spent over each drain (from /proc), so a
// difference in broker CPU per message can be traced to the threads that spend it. `--no-proxy` leaves the
// proxy out (thread figures only, TCP as in the comparison harness).
//
//   node bench/rmq-request-mix.mjs [--messages N (50000)] [--only ours,java,ours-on-java-topic] [--no-proxy]
// (ours-on-java-topic: after the Java drain, ours drains the topic Java's producer filled, with a new group.)
//
// Ports: RMQ_NAMESRV_PORT / RMQ_BROKER_PORT, else idle ones in 35100-35199 (the broker also takes port-2 and port+1).
import { Buffer } from 'node:buffer';
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import process from 'node:process';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { findKitDir } from './compare-lib.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const { FrameReader, decodeRemotingCommand, frameSerializeType, isResponse, isOneway } =
  await import('../dist/remoting/index.js');
const { requestCodeName } = await import('../dist/protocol/request-code.js');

const args = process.argv.slice(2);
const arg = (name, fallback) => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : fallback;
};
const MESSAGES = Number(arg('--messages', '50000'));
const ONLY = arg('--only', 'ours,java').split(',');
const QUEUES = 8;
const kitDir = findKitDir(root, process.env.RMQ_KIT_DIR, existsSync);
/** A NameServer port `ns` (broker at ns + 5, fast port ns + 3, HA port ns + 6) whose ports no socket uses now. */
function idlePorts(from, to) {
  const used = new Set();
  for (const m of execFileSync('ss', ['-Htan'], { encoding: 'utf8' }).matchAll(/:(\d+)\s/g)) used.add(Number(m[1]));
  for (let ns = from; ns + 6 <= to; ns++) if ([0, 3, 5, 6].every((d) => !used.has(ns + d))) return ns;
  throw new Error(`no idle ports in ${from}-${to}`);
}
const base = process.env.RMQ_NAMESRV_PORT ? undefined : idlePorts(35100, 35199);
let nsPort = process.env.RMQ_NAMESRV_PORT ?? String(base);
let brokerPort = process.env.RMQ_BROKER_PORT ?? String(base + 5);
const USE_PROXY = !args.includes('--no-proxy');
const PROXY_HOST = USE_PROXY ? '127.0.0.2' : '127.0.0.1';

// ---------------------------------------------------------------- broker threads

let brokerPid = 0;
/** CPU ms per thread name of `pid` (digits in names folded, so pools add up). */
function threadCpu(pid) {
  const out = new Map();
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    let stat;
    try {
      stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
    } catch {
      continue; // the thread ended
    }
    const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+/g, '#');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    out.set(name, (out.get(name) ?? 0) + (Number(f[11]) + Number(f[12])) * 10);
  }
  return out;
}
let threads0 = new Map();
function threadReport() {
  const t1 = threadCpu(brokerPid);
  const rows = [...t1].map(([k, v]) => [k, v - (threads0.get(k) ?? 0)]).filter(([, v]) => v > 0);
  const total = rows.reduce((a, [, v]) => a + v, 0);
  console.log(`broker CPU by thread: ${total} ms = ${((total * 1000) / MESSAGES).toFixed(1)} us/msg`);
  for (const [k, v] of rows.sort((a, b) => b[1] - a[1]).slice(0, 14))
    console.log(`  ${k.padEnd(28)} ${String(v).padStart(6)} ms  ${((v * 1000) / MESSAGES).toFixed(2)} us/msg`);
}

// ---------------------------------------------------------------- the recording proxy

/** Counters over one phase; `reset()` starts a new phase. */
class Recorder {
  constructor() {
    this.reset();
  }
  reset() {
    this.requests = new Map(); // code -> { n, headerBytes, bodyBytes, serialize: {JSON, ROCKETMQ}, oneway }
    this.responses = new Map(); // request code -> { n, headerBytes, bodyBytes, codes: Map }
    this.serverRequests = new Map();
    this.pull = {
      sysFlags: new Map(),
      suspend: new Map(),
      maxMsgNums: new Map(),
      withSubscription: 0,
      keys: new Map(),
    };
    this.pullAnswers = { found: 0, messages: 0, hist: new Map() };
    this.reads = { fromClient: 0, fromBroker: 0, bytesFromClient: 0, bytesFromBroker: 0 };
    if (brokerPid) threads0 = threadCpu(brokerPid);
  }
}
const rec = new Recorder();
const bump = (m, k, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

/** Counts the stored-message records of a pull body (each starts with its int32 total size). */
function countRecords(body) {
  let n = 0;
  for (let p = 0; p + 4 <= body.length; n++) p += body.readInt32BE(p);
  return n;
}

function startProxy() {
  const server = net.createServer((client) => {
    const broker = net.connect({ host: '127.0.0.1', port: Number(brokerPort) });
    client.setNoDelay(true);
    broker.setNoDelay(true);
    const pendingCodes = new Map(); // opaque of a client request -> its code
    const up = new FrameReader();
    const down = new FrameReader();
    const onFrame = (frame, fromClient) => {
      const cmd = decodeRemotingCommand(frame);
      const headerBytes = frame.readInt32BE(0) & 0xffffff;
      const bodyBytes = cmd.body?.length ?? 0;
      if (isResponse(cmd.flag)) {
        const reqCode = fromClient ? 'answer-to-server' : (pendingCodes.get(cmd.opaque) ?? -1);
        if (!fromClient) pendingCodes.delete(cmd.opaque);
        const r = rec.responses.get(reqCode) ?? { n: 0, headerBytes: 0, bodyBytes: 0, codes: new Map() };
        r.n++;
        r.headerBytes += headerBytes;
        r.bodyBytes += bodyBytes;
        bump(r.codes, cmd.code);
        rec.responses.set(reqCode, r);
        if (reqCode === 11 && cmd.code === 0 && cmd.body) {
          const n = countRecords(cmd.body);
          rec.pullAnswers.found++;
          rec.pullAnswers.messages += n;
          bump(rec.pullAnswers.hist, n);
        }
        return;
      }
      if (!fromClient) {
        bump(rec.serverRequests, cmd.code);
        return;
      }
      if (!isOneway(cmd.flag)) pendingCodes.set(cmd.opaque, cmd.code);
      const r = rec.requests.get(cmd.code) ?? { n: 0, headerBytes: 0, bodyBytes: 0, serialize: new Map(), oneway: 0 };
      r.n++;
      r.headerBytes += headerBytes;
      r.bodyBytes += bodyBytes;
      bump(r.serialize, frameSerializeType(frame));
      if (isOneway(cmd.flag)) r.oneway++;
      rec.requests.set(cmd.code, r);
      if (cmd.code === 11) {
        const e = cmd.extFields ?? {};
        bump(rec.pull.sysFlags, e.sysFlag);
        bump(rec.pull.suspend, e.suspendTimeoutMillis);
        bump(rec.pull.maxMsgNums, e.maxMsgNums);
        bump(rec.pull.keys, Object.keys(e).sort().join(','));
        if (e.subscription !== undefined && (Number(e.sysFlag) & 4) !== 0) rec.pull.withSubscription++;
      }
    };
    const pipe = (from, to, reader, fromClient) => {
      from.on('data', (chunk) => {
        if (fromClient) {
          rec.reads.fromClient++;
          rec.reads.bytesFromClient += chunk.length;
        } else {
          rec.reads.fromBroker++;
          rec.reads.bytesFromBroker += chunk.length;
        }
        to.write(chunk);
        for (const f of reader.push(chunk)) onFrame(f, fromClient);
      });
      from.on('close', () => to.destroy());
      from.on('error', () => to.destroy());
    };
    pipe(client, broker, up, true);
    pipe(broker, client, down, false);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(brokerPort), PROXY_HOST, () => resolve(server));
  });
}

function report(label) {
  if (!USE_PROXY) {
    console.log(`\n== ${label}: drain of ${MESSAGES} messages`);
    threadReport();
    return;
  }
  const name = (c) => (typeof c === 'number' ? `${c} ${requestCodeName(c) ?? ''}`.trim() : c);
  const fmtMap = (m) => [...m].map(([k, v]) => `${k}:${v}`).join(' ');
  console.log(`\n== ${label}: what the broker saw during the drain of ${MESSAGES} messages`);
  console.log('requests (client -> broker):');
  for (const [code, r] of [...rec.requests].sort((a, b) => b[1].n - a[1].n))
    console.log(
      `  ${name(code).padEnd(32)} n=${String(r.n).padStart(7)}  header avg ${(r.headerBytes / r.n).toFixed(0).padStart(4)} B` +
        `  body avg ${(r.bodyBytes / r.n).toFixed(0).padStart(5)} B  serialize ${fmtMap(r.serialize)}  oneway ${r.oneway}`,
    );
  console.log('answers (broker -> client), by request code:');
  for (const [code, r] of rec.responses)
    console.log(
      `  ${name(code).padEnd(32)} n=${String(r.n).padStart(7)}  header avg ${(r.headerBytes / r.n).toFixed(0).padStart(4)} B` +
        `  codes ${fmtMap(r.codes)}`,
    );
  if (rec.serverRequests.size) console.log(`server requests: ${fmtMap(rec.serverRequests)}`);
  const a = rec.pullAnswers;
  console.log(
    `PULL_MESSAGE: sysFlag ${fmtMap(rec.pull.sysFlags)}; suspendTimeoutMillis ${fmtMap(rec.pull.suspend)};` +
      ` maxMsgNums ${fmtMap(rec.pull.maxMsgNums)}; with SUBSCRIPTION bit ${rec.pull.withSubscription}`,
  );
  for (const [keys, n] of rec.pull.keys) console.log(`  header keys (${n}): ${keys}`);
  console.log(
    `FOUND answers ${a.found}, messages ${a.messages} (${(a.messages / Math.max(a.found, 1)).toFixed(2)} per answer);` +
      ` pulls per message ${((rec.requests.get(11)?.n ?? 0) / Math.max(a.messages, 1)).toFixed(4)}`,
  );
  console.log(`  messages per FOUND answer: ${fmtMap(new Map([...a.hist].sort((x, y) => x[0] - y[0])))}`);
  const rd = rec.reads;
  console.log(
    `socket reads at the proxy: from client ${rd.fromClient} (${rd.bytesFromClient} B), from broker ${rd.fromBroker} (${rd.bytesFromBroker} B)`,
  );
  threadReport();
}

// ---------------------------------------------------------------- kit, producers, consumers

const home = mkdtempSync(path.join(os.tmpdir(), 'rmq-mix-'));
const env = {
  ...process.env,
  RMQ_NAMESRV_PORT: nsPort,
  RMQ_BROKER_PORT: brokerPort,
  RMQ_HOME_DIR: path.join(home, 'state'),
  RMQ_CLIENT_DIR: path.join(home, 'client'),
  RMQ_STOP_TIMEOUT: '0',
  RMQ_JAVA_OPTS: '-Dtls.server.mode=disabled',
  RMQ_BROKER_HEAP: '-Xms1g -Xmx1g',
  RMQ_NAMESRV_HEAP: '-Xms256m -Xmx256m',
  RMQ_BROKER_EXTRA_CONF: USE_PROXY ? `brokerIP1=${PROXY_HOST}` : '',
  RMQ_BENCH_HEAP: '-Xms1g -Xmx1g',
};
const run = (script, a = []) =>
  execFileSync(path.join(kitDir, script), a, { env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const cleanup = () => {
  try {
    execFileSync(path.join(kitDir, 'bin/stop'), ['--clean'], { env, stdio: 'ignore' });
  } catch (e) {
    console.error(`kit stop failed: ${e.message}`);
  }
  rmSync(home, { recursive: true, force: true });
};
process.on('SIGINT', () => {
  cleanup();
  process.exit(130);
});

let namesrvAddr = `127.0.0.1:${nsPort}`;

/** Our producer sends MESSAGES x 1 KiB to a new topic, in batches of 64 from 4 senders. */
async function preload(topic) {
  run('bin/mqadmin', ['updateTopic', '-c', 'DefaultCluster', '-t', topic, '-r', `${QUEUES}`, '-w', `${QUEUES}`]);
  const { Producer } = await import('../dist/index.js');
  const p = new Producer({ namesrvAddr, defaultTopicQueueNums: QUEUES, sendMsgTimeoutMs: 30_000 });
  await p.start();
  let next = 0;
  const body = Buffer.alloc(1024, 0x61);
  const worker = async () => {
    while (next < MESSAGES) {
      const from = next;
      const n = Math.min(64, MESSAGES - from);
      next += n;
      const batch = Array.from({ length: n }, (_, i) => {
        const b = Buffer.from(body);
        b.writeUInt32BE(from + i, 0);
        return { topic, body: b };
      });
      // A loaded broker answers SYSTEM_BUSY now and then: the batch is sent again.
      for (let attempt = 1; ; attempt++) {
        try {
          await p.sendBatch(batch);
          break;
        } catch (e) {
          if (!e.retriable || attempt >= 20) throw e;
          await sleep(100);
        }
      }
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  await p.shutdown();
}

/** Our PushConsumer (bench/compare-worker.mjs) drains `topic` with a new group. */
async function oursDrain(topic) {
  const cfg = {
    kind: 'push',
    namesrvAddr,
    topic,
    group: `MixG_${topic}_${Date.now()}`,
    consumers: 1,
    mode: 'drain',
    messages: MESSAGES,
    queues: QUEUES,
  };
  const child = spawn(process.execPath, [path.join(root, 'bench/compare-worker.mjs'), JSON.stringify(cfg)], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  let distinct = 0;
  const waiters = [];
  lines.on('line', (l) => {
    const m = JSON.parse(l);
    if (m.type === 'progress') distinct = m.distinct;
    for (const w of waiters.splice(0)) w(m);
  });
  const next1 = (type) =>
    new Promise((resolve) => {
      const w = (m) => (m.type === type ? resolve(m) : waiters.push(w));
      waiters.push(w);
    });
  await next1('loaded');
  rec.reset();
  child.stdin.write('go\n');
  while (distinct < MESSAGES) await sleep(50);
  child.stdin.write('counts\n');
  const c = await next1('counts');
  report(`ours (${((MESSAGES * 1000) / (c.lastNewAt - c.firstAt)).toFixed(0)} msg/s first-to-last delivery)`);
  child.stdin.write('stop\n');
  await next1('done');
  child.stdin.end();
}

/** The kit's Drain.java: its own preload (Java producer, one message a send) and drain; returns its topic. */
async function javaDrain() {
  let reported = false;
  let topic;
  return new Promise((resolve, reject) => {
    const tmp = mkdtempSync(path.join(os.tmpdir(), 'rmq-mix-javac-'));
    const child = spawn(path.join(kitDir, 'bench/run'), ['drain', `${MESSAGES}`], {
      env: { ...env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    createInterface({ input: child.stdout }).on('line', (line) => {
      if (line.startsWith('preload:')) {
        topic = /into (\S+)/.exec(line)?.[1];
        rec.reset();
      }
      if (line.startsWith('drain:')) {
        if (!reported) report('java');
        reported = true;
        console.log(`java: ${line}`);
      }
    });
    child.once('exit', (code) => {
      rmSync(tmp, { recursive: true, force: true });
      if (code === 0) resolve(topic);
      else reject(new Error(`bench/run drain exited with ${code}`));
    });
  });
}

let proxy;
try {
  // Ports in the ephemeral range may be held by anyone's outgoing connection for a while: a start-up that
  // finds one taken moves both ports on by 10.
  for (let attempt = 1; ; attempt++) {
    try {
      run('bin/start-namesrv');
      break;
    } catch (e) {
      if (attempt >= 5 || !/Address already in use/.test(`${e.stderr}`)) throw e;
      cleanup();
      nsPort = String(Number(nsPort) + 10);
      brokerPort = String(Number(brokerPort) + 10);
      Object.assign(env, { RMQ_NAMESRV_PORT: nsPort, RMQ_BROKER_PORT: brokerPort });
      namesrvAddr = `127.0.0.1:${nsPort}`;
    }
  }
  proxy = USE_PROXY ? await startProxy() : undefined;
  brokerPid = Number(/pid (\d+)/.exec(run('bin/start-broker'))?.[1]);
  if (ONLY.includes('ours')) {
    const topic = `MixOurs_${Date.now()}`;
    await preload(topic);
    await oursDrain(topic);
  }
  if (ONLY.includes('java')) {
    const topic = await javaDrain();
    // The same messages drained again by ours: a difference that follows the messages, not the client.
    if (ONLY.includes('ours-on-java-topic')) await oursDrain(topic);
  }
} finally {
  proxy?.close();
  cleanup();
}
// Exit once stdout has taken everything (an exit right after a write to a pipe can cut it short).
process.stdout.write('', () => process.exit(0));
