#!/usr/bin/env node
// A recording TCP proxy for RocketMQ remoting: put it between a client (e.g. the kit's Java client) and a
// NameServer / broker to see the request stream a client sends and how the server answers it.
//
//   node bench/remoting-recorder.mjs --map LISTEN=UPSTREAM [--map LISTEN=UPSTREAM ...] [--json FILE]
//
// Each --map forwards 127.0.0.1:LISTEN to 127.0.0.1:UPSTREAM. Route answers (GET_ROUTEINFO_BY_TOPIC) have
// every "127.0.0.1:UPSTREAM" of a map rewritten to "127.0.0.1:LISTEN", so a client that learns its broker
// from a NameServer (or from our broker, which answers as its own NameServer) keeps talking through the
// proxy. On SIGTERM / SIGINT it prints (and with --json writes) what it saw, and exits:
// - per request code: frames, header bytes, body bytes, the response codes answered and how long answers took;
// - pulls: messages per FOUND answer (records counted in the body), remarks (GetMessageStatus) and
//   response codes, hold times, the request header of the first pull (maxMsgNums, sysFlag, suspend ...).
// Needs `npm run build` (it reads frames with dist/remoting).
import { Buffer } from 'node:buffer';
import net from 'node:net';
import process from 'node:process';
import { writeFileSync } from 'node:fs';
import { FrameReader, decodeRemotingCommand, isResponse } from '../dist/remoting/index.js';

const PULL_MESSAGE = 11;
const GET_ROUTEINFO_BY_TOPIC = 105;

const maps = [];
let jsonFile;
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--map') {
    const [listen, upstream] = (argv[++i] ?? '').split('=').map(Number);
    if (!(listen >= 0 && upstream > 0)) throw new Error(`--map wants LISTEN=UPSTREAM, got ${argv[i]}`);
    maps.push({ listen, upstream });
  } else if (argv[i] === '--json') jsonFile = argv[++i];
  else throw new Error(`unknown argument ${argv[i]}`);
}
if (maps.length === 0) throw new Error('usage: remoting-recorder.mjs --map LISTEN=UPSTREAM [...] [--json FILE]');

const t0 = process.hrtime.bigint();
const nowMs = () => Number(process.hrtime.bigint() - t0) / 1e6;

/** code → { frames, headerBytes, bodyBytes, responses: code → n, latencyMs: [] } */
const requests = new Map();
const pulls = {
  found: [],
  byRemark: {},
  byResponse: {},
  holdMsByResponse: {},
  firstHeader: null,
  first: null,
  last: null,
};
const serverRequests = {};
let connections = 0;

function statsFor(code) {
  let s = requests.get(code);
  if (!s) requests.set(code, (s = { frames: 0, headerBytes: 0, bodyBytes: 0, responses: {}, latencyMs: [] }));
  return s;
}

/** Records in a pull body (each starts with its int32 total size). */
function countRecords(body) {
  let n = 0;
  for (let pos = 0; body && pos + 4 <= body.length; n++) pos += body.readInt32BE(pos);
  return n;
}

const headerLength = (frame) => frame.readInt32BE(0) & 0xffffff;

/** Rewrites upstream addresses in a route body to the proxy's; returns the new frame (prefix included). */
function rewriteRoute(frame, cmd) {
  let text = cmd.body.toString('utf8');
  for (const m of maps) text = text.split(`127.0.0.1:${m.upstream}`).join(`127.0.0.1:${m.listen}`);
  const body = Buffer.from(text, 'utf8');
  const head = frame.subarray(0, 4 + headerLength(frame));
  const out = Buffer.alloc(4 + head.length + body.length);
  out.writeInt32BE(head.length + body.length, 0);
  head.copy(out, 4);
  body.copy(out, 4 + head.length);
  return out;
}

function proxy(map) {
  const server = net.createServer({ noDelay: true }, (client) => {
    connections++;
    const upstream = net.connect({ host: '127.0.0.1', port: map.upstream, noDelay: true });
    const pending = new Map(); // opaque → { code, at }
    const fromClient = new FrameReader();
    const fromServer = new FrameReader();
    const prefix = Buffer.alloc(4);
    client.on('data', (chunk) => {
      upstream.write(chunk);
      for (const frame of fromClient.push(chunk)) {
        const cmd = decodeRemotingCommand(frame);
        if (isResponse(cmd.flag)) continue;
        const s = statsFor(cmd.code);
        s.frames++;
        s.headerBytes += headerLength(frame);
        s.bodyBytes += cmd.body?.length ?? 0;
        pending.set(cmd.opaque, { code: cmd.code, at: nowMs() });
        if (cmd.code === PULL_MESSAGE) {
          pulls.firstHeader ??= cmd.extFields;
          pulls.first ??= nowMs();
        }
      }
    });
    upstream.on('data', (chunk) => {
      const frames = fromServer.push(chunk);
      if (frames.length === 0) return;
      for (const frame of frames) {
        const cmd = decodeRemotingCommand(frame);
        if (!isResponse(cmd.flag)) {
          serverRequests[cmd.code] = (serverRequests[cmd.code] ?? 0) + 1;
          prefix.writeInt32BE(frame.length, 0);
          client.write(Buffer.concat([prefix, frame]));
          continue;
        }
        const req = pending.get(cmd.opaque);
        pending.delete(cmd.opaque);
        let out = Buffer.concat([Buffer.from([0, 0, 0, 0]), frame]);
        out.writeInt32BE(frame.length, 0);
        if (req) {
          const s = statsFor(req.code);
          s.responses[cmd.code] = (s.responses[cmd.code] ?? 0) + 1;
          const ms = nowMs() - req.at;
          s.latencyMs.push(ms);
          if (req.code === PULL_MESSAGE) {
            pulls.last = nowMs();
            pulls.byResponse[cmd.code] = (pulls.byResponse[cmd.code] ?? 0) + 1;
            pulls.byRemark[cmd.remark ?? 'null'] = (pulls.byRemark[cmd.remark ?? 'null'] ?? 0) + 1;
            (pulls.holdMsByResponse[cmd.code] ??= []).push(ms);
            if (cmd.code === 0) pulls.found.push(countRecords(cmd.body));
          }
          if (req.code === GET_ROUTEINFO_BY_TOPIC && cmd.code === 0 && cmd.body)
            out = rewriteRoute(out.subarray(4), cmd);
        }
        client.write(out);
      }
    });
    const close = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  });
  server.listen(map.listen, '127.0.0.1');
  return server;
}

const servers = maps.map(proxy);

const pct = (sorted, p) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
const dist = (values) => {
  const v = [...values].sort((a, b) => a - b);
  const sum = v.reduce((a, b) => a + b, 0);
  return {
    n: v.length,
    mean: v.length ? sum / v.length : NaN,
    p50: pct(v, 0.5),
    p90: pct(v, 0.9),
    p99: pct(v, 0.99),
    max: v.at(-1) ?? NaN,
  };
};

function summary() {
  const byCode = {};
  for (const [code, s] of [...requests].sort((a, b) => a[0] - b[0])) {
    byCode[code] = {
      frames: s.frames,
      meanHeaderBytes: Math.round(s.headerBytes / s.frames),
      bodyBytes: s.bodyBytes,
      responses: s.responses,
      latencyMs: dist(s.latencyMs),
    };
  }
  const msgs = pulls.found.reduce((a, b) => a + b, 0);
  const pullsTotal = requests.get(PULL_MESSAGE)?.frames ?? 0;
  return {
    connections,
    byCode,
    serverRequests,
    pull: {
      pulls: pullsTotal,
      messages: msgs,
      messagesPerFound: dist(pulls.found),
      pullsPerMessage: msgs ? pullsTotal / msgs : NaN,
      byResponse: pulls.byResponse,
      byRemark: pulls.byRemark,
      holdMsByResponse: Object.fromEntries(Object.entries(pulls.holdMsByResponse).map(([k, v]) => [k, dist(v)])),
      firstToLastMs: pulls.last - pulls.first,
      firstHeader: pulls.firstHeader,
    },
  };
}

function finish() {
  const s = summary();
  const fix = (x) => (typeof x === 'number' && !Number.isInteger(x) ? Number(x.toFixed(2)) : x);
  const text = JSON.stringify(s, (_k, v) => fix(v), 2);
  if (jsonFile) writeFileSync(jsonFile, text);
  console.log(text);
  for (const srv of servers) srv.close();
  process.exit(0);
}
process.on('SIGTERM', finish);
process.on('SIGINT', finish);
console.log(`recording: ${maps.map((m) => `127.0.0.1:${m.listen} -> ${m.upstream}`).join(', ')}`);
