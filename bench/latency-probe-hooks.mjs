// Loaded with `node --import ./bench/latency-probe-hooks.mjs` into the broker and consumer processes of
// bench/latency-probe.mjs (not meant to be used by hand). It records, in process.hrtime ms (the same
// monotonic clock in every process of the machine):
//   - event-loop delay per second (perf_hooks.monitorEventLoopDelay, 1 ms resolution), every GC, and the
//     CPU time used every 100 ms;
//   - in the broker (PROBE_ROLE=broker): each put of a probe message (arrival at the store, written),
//     each arrival announcement, each held pull suspended and woken, each getMessage of a probe topic;
//   - in the consumer (PROBE_ROLE=consumer): each pull sent and answered.
// At exit it writes everything as JSON to $PROBE_OUT. Only topics starting with $PROBE_TOPIC are traced.
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { PerformanceObserver, monitorEventLoopDelay, performance } from 'node:perf_hooks';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { pathToFileURL } from 'node:url';

const role = process.env.PROBE_ROLE ?? 'process';
const topicPrefix = process.env.PROBE_TOPIC ?? '';
const out = process.env.PROBE_OUT;
const now = () => Number(process.hrtime.bigint()) / 1e6;
const traced = (topic) => typeof topic === 'string' && topicPrefix !== '' && topic.startsWith(topicPrefix);

export const rec = { role, eld: [], gc: [], cpu: [], put: [], arrival: [], suspend: [], wake: [], get: [], pull: [] };

const eld = monitorEventLoopDelay({ resolution: 1 });
eld.enable();
let cpuBefore = process.cpuUsage();
setInterval(() => {
  const c = process.cpuUsage(cpuBefore);
  cpuBefore = process.cpuUsage();
  rec.cpu.push({ at: now(), ms: (c.user + c.system) / 1000, sysMs: c.system / 1000 });
}, 100).unref();
setInterval(() => {
  rec.eld.push({ at: now(), p99: eld.percentile(99) / 1e6, max: eld.max / 1e6, mean: eld.mean / 1e6 });
  eld.reset();
}, 1000).unref();

const origin = now() - performance.now();
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    rec.gc.push({ at: origin + e.startTime, ms: e.duration, kind: e.detail?.kind ?? e.kind });
  }
}).observe({ entryTypes: ['gc'] });

const dist = process.env.PROBE_DIST
  ? pathToFileURL(`${process.env.PROBE_DIST}/`)
  : new URL('../dist/', import.meta.url);

if (role === 'broker') {
  const { MessageStore } = await import(new URL('store/message-store.js', dist).href);
  const { PullRequestHoldService } = await import(new URL('broker/pull-request-hold-service.js', dist).href);
  const listening = new WeakSet();
  const putMessage = MessageStore.prototype.putMessage;
  MessageStore.prototype.putMessage = function (msg) {
    if (!listening.has(this)) {
      listening.add(this);
      this.onMessageArriving((a) => {
        if (traced(a.topic)) rec.arrival.push([a.queueId, a.queueOffset, now()]);
      });
    }
    const p = putMessage.call(this, msg);
    if (!traced(msg.topic) || msg.body.length < 4) return p;
    const at = now();
    const seq = msg.body.readUInt32BE(0);
    return p.then((r) => {
      rec.put.push([seq, msg.queueId, r.queueOffset, at, now()]);
      return r;
    });
  };
  const getMessage = MessageStore.prototype.getMessage;
  MessageStore.prototype.getMessage = function (group, topic, queueId, offset, ...rest) {
    const p = getMessage.call(this, group, topic, queueId, offset, ...rest);
    if (!traced(topic)) return p;
    const at = now();
    return p.then((r) => {
      rec.get.push([queueId, offset, r.nextBeginOffset, at, now(), r.status]);
      return r;
    });
  };
  const suspend = PullRequestHoldService.prototype.suspendPullRequest;
  PullRequestHoldService.prototype.suspendPullRequest = function (req) {
    if (traced(req.topic)) rec.suspend.push([req.queueId, req.pullFromThisOffset, now()]);
    return suspend.call(this, req);
  };
  const finish = PullRequestHoldService.prototype.finish;
  PullRequestHoldService.prototype.finish = function (key, entry, how) {
    if (!entry.done && traced(entry.req.topic)) rec.wake.push([entry.req.queueId, entry.req.pullFromThisOffset, now()]);
    return finish.call(this, key, entry, how);
  };
}

if (role === 'consumer') {
  const { PullAPIWrapper } = await import(new URL('client/consumer/pull-api-wrapper.js', dist).href);
  const kernel = PullAPIWrapper.prototype.pullKernelImpl;
  PullAPIWrapper.prototype.pullKernelImpl = function (req) {
    const p = kernel.call(this, req);
    if (!traced(req.mq.topic)) return p;
    const at = now();
    return p.then((r) => {
      rec.pull.push([req.mq.queueId, req.offset, r.nextBeginOffset, at, now(), r.pullStatus]);
      return r;
    });
  };
}

/** CPU ms so far of the main thread and of the others (V8's GC and compiler workers, libuv's pool). */
export function threadCpu() {
  const byName = {};
  for (const tid of readdirSync('/proc/self/task')) {
    try {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const name = Number(tid) === process.pid ? 'main' : 'other threads';
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      byName[name] = (byName[name] ?? 0) + ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
    } catch {
      // the thread ended
    }
  }
  return byName;
}

process.on('exit', () => {
  rec.threads = threadCpu();
  if (out) writeFileSync(out, JSON.stringify(rec));
});
