// The bundled broker's remoting path under the request mix RocketMQ's Java client sends: the CLI broker
// (`dist/cli.js broker --remoting-port 0`) in a child process, driven over one TCP connection with
// JSON-header frames shaped as the Java client writes them: SEND_MESSAGE_V2 (one-letter keys, 1 KiB
// bodies, SENDERS requests outstanding, as the kit's Drain preload with 4 sync-send threads), then
// PULL_MESSAGE (32 per pull, commit offset in the pull, one pull outstanding per queue of 8 queues, as a
// push consumer drains a backlog). Prints per phase the throughput and the broker's CPU per message
// (user+system from /proc/<pid>/stat), which survives a loaded machine better than throughput, and the
// JavaScript heap bytes the broker allocated per message and its GCs (bench/broker-alloc-hook.mjs).
// A third phase, "held", is the latency run's pattern: a held pull on each of 8 queues, then RB_HELD single
// sends one after another, each waking the held pull of its queue, which answers that one message and is
// sent again; so every message costs exactly one send and one pull.
// `npm run build` first.
//
//   node bench/remoting-broker.bench.mjs   env: RB_MESSAGES [100000]  RB_SENDERS [4]  RB_ROUNDS [1]
//                                               RB_HELD [20000]  RB_NODE_ARGS [extra node flags for the broker]
//                                               RB_BODY_BYTES [1024: the sent bodies' size]
//                                               RB_CPU_PROF [dir: --cpu-prof of the broker child]
//                                               RB_CLI [dist/cli.js; RB_CLI=a.js,b.js alternates two builds per round]
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { FrameReader } from '../dist/remoting/frame-reader.js';
import { decodeRemotingCommand, encodeRemotingCommand } from '../dist/remoting/remoting-command.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const N = Number(process.env.RB_MESSAGES ?? 100_000);
const SENDERS = Number(process.env.RB_SENDERS ?? 4);
const ROUNDS = Number(process.env.RB_ROUNDS ?? 1);
const HELD = Number(process.env.RB_HELD ?? 20_000);
const CPU_PROF = process.env.RB_CPU_PROF ?? '';
const QUEUES = 8;
const BODY = Buffer.alloc(Number(process.env.RB_BODY_BYTES ?? 1024), 0x61);
const JAVA_VERSION = 399; // RocketMQ 4.9.8's MQVersion ordinal

function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

/** A minimal remoting client: one connection, requests matched by opaque. */
class Conn {
  constructor(socket) {
    this.socket = socket;
    this.pending = new Map();
    this.opaque = 0;
    const reader = new FrameReader({ maxFrameLength: 64 * 1024 * 1024 });
    socket.on('data', (chunk) => {
      for (const frame of reader.push(chunk)) {
        const cmd = decodeRemotingCommand(frame);
        const p = this.pending.get(cmd.opaque);
        if (p) {
          this.pending.delete(cmd.opaque);
          p(cmd);
        }
      }
    });
  }
  static connect(port) {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host: '127.0.0.1', port, noDelay: true }, () => resolve(new Conn(s)));
      s.once('error', reject);
    });
  }
  request(code, extFields, body) {
    const opaque = ++this.opaque;
    const frame = encodeRemotingCommand({ code, opaque, language: 'JAVA', version: JAVA_VERSION, extFields, body });
    return new Promise((resolve) => {
      this.pending.set(opaque, resolve);
      this.socket.write(frame);
    });
  }
  close() {
    this.socket.destroy();
  }
}

const CLIS = (process.env.RB_CLI ?? 'dist/cli.js').split(',');

async function startBroker(store, cli) {
  const nodeArgs = ['--import', path.join(root, 'bench/broker-alloc-hook.mjs')];
  if (CPU_PROF) nodeArgs.push('--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`);
  if (process.env.RB_NODE_ARGS) nodeArgs.push(...process.env.RB_NODE_ARGS.split(' ').filter(Boolean));
  const args = [cli, 'broker', '--store', store, '--port', '0', '--remoting-port', '0', '--log-level', 'warn'];
  const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      const m = /remoting listening on [\d.]+:(\d+)/.exec(out);
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', (code) => reject(new Error(`broker exited ${code}`)));
  });
  return { child, port };
}

/** The next line of the broker's output that `re` matches (the allocation hook's answers). */
function brokerLine(child, re) {
  return new Promise((resolve) => {
    let out = '';
    const onData = (d) => {
      out += d;
      const m = re.exec(out);
      if (!m) return;
      child.stdout.off('data', onData);
      resolve(m);
    };
    child.stdout.on('data', onData);
  });
}

/** Starts counting the broker's heap allocation; the returned function stops and gives {bytes, scavenges, others}. */
async function allocationCounter(child) {
  const started = brokerLine(child, /ALLOC-START\n/);
  child.kill('SIGUSR2');
  await started;
  return async () => {
    const done = brokerLine(child, /ALLOC (\d+) (\d+) (\d+)\n/);
    child.kill('SIGUSR2');
    const m = await done;
    return { bytes: Number(m[1]), scavenges: Number(m[2]), others: Number(m[3]) };
  };
}

const allocText = (a, n) => `heap ${Math.round(a.bytes / n)} B/msg, GCs ${a.scavenges} scavenges + ${a.others} other`;

/** One SEND_MESSAGE_V2 of a BODY to queue `i % QUEUES`, its header as the Java client writes it. */
function sendOne(conn, topic, i) {
  return conn.request(
    310,
    {
      a: 'bench-producer',
      b: topic,
      c: 'TBW102',
      d: '4',
      e: String(i % QUEUES),
      f: '0',
      g: String(Date.now()),
      h: '0',
      i: `TAGS\u0001T\u0002WAIT\u0001true\u0002UNIQ_KEY\u00017F000001${String(i).padStart(24, '0')}\u0002`,
      j: '0',
      k: 'false',
      m: 'false',
    },
    BODY,
  );
}

async function round(r, cli) {
  const store = mkdtempSync(path.join(os.tmpdir(), 'rmq-rb-bench-'));
  const { child, port } = await startBroker(store, cli);
  const conn = await Conn.connect(port);
  try {
    const topic = `RB_${Date.now()}`;
    const group = `RBG_${Date.now()}`;
    const created = await conn.request(17, {
      topic,
      defaultTopic: 'TBW102',
      readQueueNums: String(QUEUES),
      writeQueueNums: String(QUEUES),
      perm: '6',
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: '0',
      order: 'false',
    });
    if (created.code !== 0) throw new Error(`create topic: ${created.code} ${created.remark}`);

    // Send phase.
    let next = 0;
    const sendAlloc = await allocationCounter(child);
    const cpu0 = cpuSeconds(child.pid);
    const t0 = performance.now();
    const sender = async () => {
      while (next < N) {
        const i = next++;
        const res = await sendOne(conn, topic, i);
        if (res.code !== 0) throw new Error(`send: ${res.code} ${res.remark}`);
      }
    };
    await Promise.all(Array.from({ length: SENDERS }, sender));
    const sendS = (performance.now() - t0) / 1000;
    const cpu1 = cpuSeconds(child.pid);
    const sendA = await sendAlloc();
    const pullAlloc = await allocationCounter(child);
    const cpu1b = cpuSeconds(child.pid);

    // Pull phase: one pull outstanding per queue, committing the previous offset, until every queue is read.
    let pulled = 0;
    const t1 = performance.now();
    const puller = async (queueId) => {
      let offset = 0;
      for (;;) {
        const res = await conn.request(11, {
          consumerGroup: group,
          topic,
          queueId: String(queueId),
          queueOffset: String(offset),
          maxMsgNums: '32',
          sysFlag: String(offset > 0 ? 1 | 2 | 4 : 2 | 4),
          commitOffset: String(offset),
          suspendTimeoutMillis: '15000',
          subscription: '*',
          subVersion: '0',
          expressionType: 'TAG',
        });
        if (res.code !== 0) return; // PULL_NOT_FOUND / no new message: the queue is drained
        const nextOffset = Number(res.extFields.nextBeginOffset);
        const max = Number(res.extFields.maxOffset);
        pulled += nextOffset - offset;
        offset = nextOffset;
        if (offset >= max) return;
      }
    };
    await Promise.all(Array.from({ length: QUEUES }, (_, q) => puller(q)));
    const pullS = (performance.now() - t1) / 1000;
    const cpu2 = cpuSeconds(child.pid);
    const pullA = await pullAlloc();
    if (pulled !== N) throw new Error(`pulled ${pulled} of ${N}`);
    const held = await heldPhase(conn, child, topic, group);
    const us = (s, n) => `${((s / n) * 1e6).toFixed(1)} us/msg`;
    console.log(
      `[round ${r + 1}]${CLIS.length > 1 ? ` ${cli}` : ''}\n` +
        `  send ${N} x ${BODY.length} B (SEND_MESSAGE_V2, ${SENDERS} outstanding): ${Math.round(N / sendS)} msg/s, ` +
        `broker CPU ${us(cpu1 - cpu0, N)}, ${allocText(sendA, N)}\n` +
        `  pull (32/pull, 8 queues): ${Math.round(N / pullS)} msg/s, broker CPU ${us(cpu2 - cpu1b, N)}, ${allocText(pullA, N)}\n` +
        `  held (1 send + 1 woken pull per message): ${Math.round(HELD / held.seconds)} msg/s, ` +
        `broker CPU ${us(held.cpu, HELD)}, ${allocText(held.alloc, HELD)}`,
    );
  } finally {
    conn.close();
    const exited = new Promise((res) => child.once('exit', res));
    child.kill('SIGTERM');
    await exited;
    rmSync(store, { recursive: true, force: true });
  }
}

/**
 * The latency run's pattern: a pull held on every queue (the queue is drained), then HELD sends one after
 * another; each send's answer and the woken pull's answer (its one message) come before the next send.
 */
async function heldPhase(conn, child, topic, group) {
  const offsets = [];
  const waiting = [];
  const pull = (queueId) =>
    conn
      .request(11, {
        consumerGroup: group,
        topic,
        queueId: String(queueId),
        queueOffset: String(offsets[queueId]),
        maxMsgNums: '32',
        sysFlag: String(1 | 2 | 4),
        commitOffset: String(offsets[queueId]),
        suspendTimeoutMillis: '15000',
        subscription: '*',
        subVersion: '0',
        expressionType: 'TAG',
      })
      .then((res) => {
        if (res.code !== 0) throw new Error(`held pull: ${res.code} ${res.remark}`);
        offsets[queueId] = Number(res.extFields.nextBeginOffset);
        const w = waiting[queueId];
        waiting[queueId] = null;
        pull(queueId);
        w?.();
      });
  for (let q = 0; q < QUEUES; q++) {
    offsets[q] = N / QUEUES;
    pull(q);
  }
  // Let the pulls reach the broker and be held.
  await sleep(300);
  const one = async (k) => {
    const woken = new Promise((r) => (waiting[k % QUEUES] = r));
    const res = await sendOne(conn, topic, k);
    if (res.code !== 0) throw new Error(`send: ${res.code} ${res.remark}`);
    await woken;
  };
  const WARM = 200;
  for (let i = 0; i < WARM; i++) await one(N + i);
  const stop = await allocationCounter(child);
  const cpu0 = cpuSeconds(child.pid);
  const t0 = performance.now();
  for (let i = 0; i < HELD; i++) await one(N + WARM + i);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuSeconds(child.pid) - cpu0;
  return { seconds, cpu, alloc: await stop() };
}

console.log(`remoting-broker: ${N} messages, ${ROUNDS} round(s), load ${os.loadavg()[0].toFixed(1)}`);
for (let r = 0; r < ROUNDS; r++) for (const cli of CLIS) await round(r, cli);
