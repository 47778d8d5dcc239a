// CPU per call of the fixed per-exchange work of the TCP remoting path, for one build or an A/B of several:
// encode and decode of a send request (1 KiB body, the header a Producer writes) and of a pull answer's
// header, and the broker's encoding of a send answer plus a pull answer (with a 1 KiB body).
//
//   npm run build && node bench/remoting-exchange.bench.mjs [DIST ...]     (default: this checkout's dist/)
//   e.g. node bench/remoting-exchange.bench.mjs /work/main/dist dist
//
// CPU time (process.cpuUsage), not wall time, so that other processes on the machine count less; each
// figure is the best of 7 rounds, the builds interleaved round by round. µs per call.
import { Buffer } from 'node:buffer';
import path from 'node:path';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const dists = (process.argv.length > 2 ? process.argv.slice(2) : ['dist']).map((d) => path.resolve(d));
const load = async (d) => ({
  dist: d,
  cmd: await import(pathToFileURL(path.join(d, 'remoting/remoting-command.js')).href),
  server: await import(pathToFileURL(path.join(d, 'broker/remoting-server.js')).href),
});
const builds = await Promise.all(dists.map(load));

const sendRequest = {
  code: 310,
  language: 'NODE_JS',
  version: 405,
  opaque: 1,
  flag: 0,
  remark: null,
  extFields: {
    a: 'please_rename_unique_group_name',
    b: 'BenchTopic_1764641234567',
    c: 'TBW102',
    d: '4',
    e: '3',
    f: '0',
    g: '1764641234567',
    h: '0',
    i: 'UNIQ_KEY\u00010A0B0C0D00002A9F0000000000000001\u0002WAIT\u0001true',
    j: '0',
    k: 'false',
    n: 'broker-a',
  },
  body: Buffer.alloc(1024, 0x61),
};
const pullHeader = {
  code: 0,
  language: 'JAVA',
  version: 405,
  opaque: 1,
  flag: 1,
  remark: 'FOUND',
  extFields: { suggestWhichBrokerId: '0', nextBeginOffset: '12345', minOffset: '0', maxOffset: '12346' },
  body: null,
};
const pullAnswer = () => ({ ...pullHeader, flag: 0, body: Buffer.alloc(1024, 0x62) });
const sendAnswer = () => ({
  code: 0,
  remark: null,
  extFields: {
    msgId: '0A0B0C0D00002A9F0000000000000001',
    queueId: '3',
    queueOffset: '1234',
    transactionId: '0A0B0C0D00002A9F0000000000000001',
  },
});
const ref = builds[0].cmd;
const frames = [ref.encodeRemotingCommand(sendRequest).subarray(4), ref.encodeRemotingCommand(pullHeader).subarray(4)];

// The broker's answer as each build encodes it (the builds before this bench spread a copy per answer).
const answer = (b, response, opaque) =>
  b.server.encodeResponseParts.length >= 3
    ? b.server.encodeResponseParts(response, opaque, 'JSON')
    : b.server.encodeResponseParts({ ...response, opaque, flag: 1 | (response.flag ?? 0) }, 'JSON');

const cases = {
  'encode send request': (b, i) => {
    sendRequest.opaque = i;
    b.cmd.encodeRemotingCommand(sendRequest);
  },
  'decode send request': (b) => b.cmd.decodeRemotingCommand(frames[0]),
  'encode pull answer header': (b, i) => {
    pullHeader.opaque = i;
    b.cmd.encodeRemotingCommand(pullHeader);
  },
  'decode pull answer header': (b) => b.cmd.decodeRemotingCommand(frames[1]),
  'broker: send answer + pull answer': (b, i) => {
    answer(b, sendAnswer(), i);
    answer(b, pullAnswer(), i);
  },
};

const N = 40_000;
const best = builds.map(() => ({}));
for (let round = 0; round < 7; round++) {
  for (const [name, fn] of Object.entries(cases)) {
    builds.forEach((b, bi) => {
      const t = process.cpuUsage();
      for (let i = 0; i < N; i++) fn(b, i);
      const c = process.cpuUsage(t);
      best[bi][name] = Math.min(best[bi][name] ?? Infinity, (c.user + c.system) / N);
    });
  }
}
for (const name of Object.keys(cases)) {
  console.log(`${name.padEnd(36)} ${builds.map((b, bi) => `${best[bi][name].toFixed(2)} µs`).join('  |  ')}`);
}
console.log(`builds: ${builds.map((b) => b.dist).join('  |  ')}`);
