// The drain phase's consumer hosts for bench/push-consumer.bench.mjs: `DrainHost` runs push consumers
// of one group in this process, `ChildDrainHost` runs them in a child process (push-consumer-child.mjs)
// through IPC. Both count deliveries and mark each (queueId, queueOffset) seen, so the parent can tell
// distinct messages from duplicates across processes. Also the CPU-time readers (/proc/<pid>/stat).
import { Buffer } from 'node:buffer';
import { fork } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout } from 'node:timers';
import { fileURLToPath } from 'node:url';
import { ConsumeConcurrentlyStatus, PushConsumer } from '../dist/index.js';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
/** Milliseconds since the epoch with sub-ms precision, comparable across processes. */
export const wallNow = () => performance.timeOrigin + performance.now();

/** Waits until a started consumer holds its queues and its first pulls are out. */
export async function consumerReady(consumer, topic, queues) {
  if (consumer.ready !== undefined) {
    await consumer.ready;
    return;
  }
  // Without a `ready` signal: wait for the assignment, then for the first pulls (500 ms after it).
  while (consumer.assignedQueues().filter((q) => q.topic === topic).length < queues) await sleep(10);
  await sleep(700);
}

/**
 * Push consumers of one group in this process. `config`: { connect, group, topic, consumers, queues,
 * slots (per-queue offsets to track), pullBatchSize, consumeMessageBatchMaxSize, tag, slowListenerMs? }.
 */
export class DrainHost {
  constructor(config) {
    this.config = config;
    this.received = 0;
    this.first = 0;
    this.last = 0;
    this.seen = new Uint8Array(config.queues * config.slots);
    this.consumers = [];
  }

  async start() {
    const { connect, group, topic, consumers, slots } = this.config;
    for (let i = 0; i < consumers; i++) {
      const c = new PushConsumer({
        ...connect,
        consumerGroup: group,
        instanceName: `${this.config.tag}-${process.pid}-${i}`,
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        pullBatchSize: this.config.pullBatchSize,
        consumeMessageBatchMaxSize: this.config.consumeMessageBatchMaxSize,
      });
      c.subscribe(topic, '*');
      const count = (msgs) => {
        const now = wallNow();
        if (this.received === 0) this.first = now;
        this.last = now;
        this.received += msgs.length;
        for (const m of msgs) {
          if (m.queueOffset < slots) this.seen[m.queueId * slots + m.queueOffset] = 1;
        }
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      };
      const slow = this.config.slowListenerMs ?? 0;
      c.registerMessageListener(slow > 0 ? async (msgs) => (await sleep(slow), count(msgs)) : count);
      this.consumers.push(c);
    }
    // Start them together, as a deployment would: the group's rebalance settles among all of them.
    await Promise.all(this.consumers.map((c) => c.start()));
  }

  progress() {
    return { received: this.received, first: this.first, last: this.last };
  }

  snapshot() {
    return { received: this.received, seen: Buffer.from(this.seen.buffer).toString('base64') };
  }

  async stop() {
    await Promise.all(this.consumers.map((c) => c.shutdown({ timeoutMs: 5000 })));
  }
}

/** The same consumers in a child process; `progress()` is the child's last report. */
export class ChildDrainHost {
  constructor(config) {
    this.config = config;
    this.state = { received: 0, first: 0, last: 0 };
    this.waiters = new Map();
  }

  async start() {
    const file = path.join(path.dirname(fileURLToPath(import.meta.url)), 'push-consumer-child.mjs');
    this.child = fork(file, [JSON.stringify(this.config)], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      execArgv: (process.env.PC_CHILD_NODE_ARGS ?? '').split(' ').filter(Boolean),
    });
    this.pid = this.child.pid;
    this.child.on('message', (msg) => {
      if (msg.type === 'progress') this.state = msg;
      const waiter = this.waiters.get(msg.type);
      if (waiter !== undefined) {
        this.waiters.delete(msg.type);
        waiter(msg);
      }
    });
    this.exited = new Promise((r) => this.child.once('exit', r));
    await this.request(undefined, 'started');
  }

  request(message, answer) {
    const reply = new Promise((resolve, reject) => {
      this.waiters.set(answer, resolve);
      this.exited.then((code) => reject(new Error(`drain child exited (${code}) before '${answer}'`)));
    });
    if (message !== undefined) this.child.send(message);
    return reply;
  }

  progress() {
    return this.state;
  }

  async snapshotAsync() {
    return this.request({ type: 'snapshot' }, 'snapshot');
  }

  async stop() {
    await this.request({ type: 'stop' }, 'stopped');
    await this.exited;
  }
}

/** CPU time (user + system) of a process, µs: this process via process.cpuUsage, others via /proc. */
export function cpuMicros(pid) {
  if (pid === process.pid) {
    const u = process.cpuUsage();
    return u.user + u.system;
  }
  // /proc/<pid>/stat: fields 14 and 15 (utime, stime) in clock ticks (USER_HZ, 100 on Linux), after the
  // parenthesised command name, which may hold spaces.
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** Resident set size of another process, bytes (/proc/<pid>/statm, 4 KiB pages). */
export function rssOf(pid) {
  return Number(readFileSync(`/proc/${pid}/statm`, 'utf8').split(' ')[1]) * 4096;
}

/** Counts the distinct (queueId, offset) pairs over the hosts' bitmaps. */
export function distinctSeen(seenList) {
  const union = new Uint8Array(seenList[0].length);
  for (const seen of seenList) for (let i = 0; i < seen.length; i++) union[i] |= seen[i];
  let n = 0;
  for (let i = 0; i < union.length; i++) n += union[i];
  return n;
}

/** A host's bitmap, from this process or from a child's snapshot. */
export async function seenOf(host) {
  if (host instanceof DrainHost) return host.seen;
  const snap = await host.snapshotAsync();
  return new Uint8Array(Buffer.from(snap.seen, 'base64'));
}
