// The clients of remoting-attacks.soak.mjs: the broker's child process and its IPC, raw remoting connections,
// and the well-behaved clients measured while an attack runs.
import { Buffer } from 'node:buffer';
import { fork } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { RequestCode, ResponseCode, decodeFrame, encodeFrame } from '../../dist/protocol/index.js';
import { encodeRemotingCommand, decodeRemotingCommand } from '../../dist/remoting/index.js';

/**
 * Starts remoting-attacks-broker.mjs with `extraEnv` ("K=V K2=V2") added to its environment. `ask(op, arg)`
 * asks it over IPC; `rss()` reads its RSS (MiB) from /proc, which does not wait for its event loop.
 */
export async function startBrokerChild(extraEnv) {
  const env = { ...process.env };
  for (const kv of (extraEnv ?? '').split(/\s+/).filter(Boolean)) {
    const at = kv.indexOf('=');
    env[kv.slice(0, at)] = kv.slice(at + 1);
  }
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'remoting-attacks-broker.mjs');
  // SOAK_BROKER_ARGS adds node options to the broker's (e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof").
  const execArgv = ['--expose-gc', ...(process.env.SOAK_BROKER_ARGS ?? '').split(/\s+/).filter(Boolean)];
  const child = fork(script, [], { env, execArgv, stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const pending = new Map();
  let seq = 0;
  const ready = new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`broker exited (${code})`)));
  });
  child.on('message', (m) => {
    if (m.id === undefined) return;
    pending.get(m.id)?.(m.result);
    pending.delete(m.id);
  });
  const ask = (op, arg) =>
    new Promise((resolve) => {
      const id = ++seq;
      pending.set(id, resolve);
      child.send({ id, op, arg });
    });
  const { remoting, http, wide, storePath } = await ready;
  const rss = () => {
    const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${child.pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  };
  const [host, port] = [remoting.split(':')[0], Number(remoting.split(':')[1])];
  /** Ends the broker at once (a hung scenario), its store with it. */
  const kill = () => {
    child.kill('SIGKILL');
    fs.rmSync(storePath, { recursive: true, force: true });
  };
  return { child, ask, rss, host, port, http, wide, kill };
}

/** Connections to the remoting port at `host:port`. */
export function connector(host, port) {
  /** Opens one (kept in `set` while open); rejects when it cannot connect within 5 s. */
  function open({ read = true, set = null } = {}) {
    return new Promise((resolve, reject) => {
      const s = net.connect({ host, port });
      set?.add(s);
      const timer = setTimeout(() => (s.destroy(), reject(new Error('connect timeout'))), 5000);
      s.on('error', (e) => (clearTimeout(timer), reject(e)));
      s.on('close', () => (clearTimeout(timer), set?.delete(s)));
      if (read) s.resume();
      else s.pause();
      s.once('connect', () => (clearTimeout(timer), resolve(s)));
    });
  }
  return { open };
}

/**
 * The next answer on `s` (one request at a time; `state.buf` keeps bytes past it), or a rejection when `s`
 * closes first or after `ms`: a destroyed socket fires no more 'close', so it is checked before waiting.
 */
export function nextAnswer(s, state, ms) {
  return new Promise((resolve, reject) => {
    if (s.destroyed) return reject(new Error('closed'));
    const done = (err, cmd) => {
      clearTimeout(timer);
      s.off('data', onData);
      s.off('close', onClose);
      if (err) reject(err);
      else resolve(cmd);
    };
    const onClose = () => done(new Error('closed'));
    const timer = setTimeout(() => done(new Error('timeout')), ms);
    const onData = (d) => {
      state.buf = Buffer.concat([state.buf, d]);
      if (state.buf.length >= 4 && state.buf.length >= 4 + state.buf.readInt32BE(0)) {
        const n = state.buf.readInt32BE(0);
        const cmd = decodeRemotingCommand(state.buf.subarray(4, 4 + n));
        state.buf = state.buf.subarray(4 + n);
        done(null, cmd);
      }
    };
    s.on('data', onData);
    s.once('close', onClose);
  });
}

/** The extFields of a SEND_MESSAGE to queue 0 of `topic`. */
export const sendExt = (topic) => ({
  producerGroup: 'soak-p',
  topic,
  defaultTopic: 'TBW102',
  defaultTopicQueueNums: '4',
  queueId: '0',
  sysFlag: '0',
  bornTimestamp: String(Date.now()),
  flag: '0',
  properties: '',
});

const p99 = (l) => [...l].sort((a, b) => a - b)[Math.floor(l.length * 0.99)] ?? NaN;

/**
 * Well-behaved clients until stopped: one over TCP (a connection of its own, never one of the attackers')
 * and one over HTTP, each sending a message every 20 ms (the acknowledged ones kept for the lost check), and
 * a health probe every 500 ms: a new TCP connection asking GET_BROKER_RUNTIME_INFO, late past 2 s.
 */
export function probers({ open }, http, topic) {
  let stop = false;
  const tcp = { latencies: [], failures: 0, acked: [], slowAt: [] };
  const web = { latencies: [], failures: 0, acked: [], slowAt: [] };
  const began = performance.now();
  /** Keeps a latency, and when (ms since the probers began) it ended if it took over 20 ms. */
  const took = (c, t0) => {
    const now = performance.now();
    c.latencies.push(now - t0);
    if (now - t0 > 20) c.slowAt.push(Math.round(now - began));
  };
  const health = { probes: 0, late: 0, worstMs: 0 };
  /** What each loop awaits now (reported when stopping takes long). */
  const where = { tcp: 'start', http: 'start', health: 'start' };
  let n = 0;
  const tcpLoop = (async () => {
    while (!stop) {
      let s;
      try {
        where.tcp = 'connecting';
        s = await open();
        const state = { buf: Buffer.alloc(0) };
        while (!stop) {
          const body = `tcp ${topic} ${++n}`;
          const t0 = performance.now();
          const command = {
            code: RequestCode.SEND_MESSAGE,
            opaque: n,
            extFields: sendExt(topic),
            body: Buffer.from(body),
          };
          s.write(encodeRemotingCommand(command));
          where.tcp = 'waiting for an answer';
          const a = await nextAnswer(s, state, 30_000);
          where.tcp = 'sleeping';
          took(tcp, t0);
          if (a.code === ResponseCode.SUCCESS) tcp.acked.push({ msgId: a.extFields.msgId, body });
          else tcp.failures++;
          await sleep(20);
        }
      } catch {
        tcp.failures++;
        await sleep(100);
      } finally {
        s?.destroy();
      }
    }
  })();
  const httpLoop = (async () => {
    while (!stop) {
      const body = `http ${topic} ${++n}`;
      const header = { ...sendExt(topic), queueId: 1, sysFlag: 0, bornTimestamp: Date.now(), flag: 0 };
      const t0 = performance.now();
      try {
        where.http = 'waiting for headers';
        const res = await request(`${http}/v1/SEND_MESSAGE`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-rocketmq-command' },
          body: encodeFrame({ ...header, defaultTopicQueueNums: 4 }, Buffer.from(body)),
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        });
        where.http = 'reading the body';
        const frame = decodeFrame(Buffer.from(await res.body.arrayBuffer()));
        where.http = 'sleeping';
        took(web, t0);
        if (res.statusCode === 200 && frame.header.code === ResponseCode.SUCCESS) {
          web.acked.push({ msgId: frame.header.header.msgId, body });
        } else web.failures++;
      } catch {
        web.failures++;
      }
      await sleep(20);
    }
  })();
  const healthLoop = (async () => {
    while (!stop) {
      const t0 = performance.now();
      let s;
      try {
        where.health = 'connecting';
        s = await open();
        s.write(encodeRemotingCommand({ code: 28, opaque: 1, extFields: {} })); // GET_BROKER_RUNTIME_INFO
        where.health = 'waiting for an answer';
        await nextAnswer(s, { buf: Buffer.alloc(0) }, 2000);
        where.health = 'sleeping';
      } catch {
        health.late++;
      } finally {
        s?.destroy();
      }
      health.probes++;
      health.worstMs = Math.max(health.worstMs, performance.now() - t0);
      await sleep(500);
    }
  })();
  return {
    async stop() {
      stop = true;
      const slow = setTimeout(() => process.stderr.write(`probers still stopping: ${JSON.stringify(where)}\n`), 40_000);
      await Promise.all([tcpLoop, httpLoop, healthLoop]);
      clearTimeout(slow);
      const figures = (c) => ({ ...c, p99: p99(c.latencies), over20: c.latencies.filter((l) => l > 20).length });
      return { tcp: figures(tcp), web: figures(web), health };
    },
  };
}

/** probers() in a child process of their own (remoting-attacks-probers.mjs); `stop()` gives the same figures. */
export async function proberChild(host, port, http, topic) {
  const script = path.join(path.dirname(fileURLToPath(import.meta.url)), 'remoting-attacks-probers.mjs');
  const child = fork(script, [host, String(port), http, topic], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise((resolve, reject) => {
    child.once('message', resolve);
    child.once('exit', (code) => reject(new Error(`probers exited (${code})`)));
  });
  return {
    async stop() {
      // 'disconnect' comes after every message the channel carried; 'exit' may come before the last one.
      const result = new Promise((resolve, reject) => {
        child.once('message', (m) => resolve(m.result));
        child.once('disconnect', () => reject(new Error('the probers closed their channel before their figures came')));
      });
      child.send('stop');
      const r = await result;
      await exited;
      return r;
    },
  };
}
