// The client's TCP remoting path alone, as a push consumer drives it while draining a backlog: PULL_MESSAGE
// requests (the header RocketMQ's push consumer sends, 8 queues with one pull each in flight) through
// MQClientAPI and TcpRemotingClient, answered by a stand-in broker in another process with pre-built 32 x 1 KiB
// answers (JSON headers as RocketMQ 4.9.8 writes them). Measures the client process's CPU per pull: request
// header check and encoding, the write, frame reassembly, header decoding, correlation by opaque, response
// header reading. Message decoding is not included. `npm run build` first.
//
//   node bench/tcp-client.bench.mjs     env: TCB_PULLS [20000]  TCB_ROUNDS [3]
//                                            TCB_DIST [dist; TCB_DIST=/other/dist,dist alternates two builds per round]
//                                            TCB_CPU_PROF [dir: --cpu-prof of the client children]
import { Buffer } from 'node:buffer';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import process from 'node:process';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const PULLS = Number(process.env.TCB_PULLS ?? 20_000);
const ROUNDS = Number(process.env.TCB_ROUNDS ?? 3);
const DISTS = (process.env.TCB_DIST ?? 'dist').split(',').map((d) => path.resolve(root, d));
const CPU_PROF = process.env.TCB_CPU_PROF ?? '';
const { AbortController } = globalThis;
const QUEUES = 8;
const BATCH = 32;
const RECORD = 1024 + 120;

/** The stand-in broker: answers every PULL_MESSAGE with FOUND and 32 records, in the request's serialization. */
async function server(dist) {
  const { FrameReader, decodeRemotingCommand, encodeRemotingCommand, markResponse } = await import(
    pathToFileURL(path.join(dist, 'remoting/index.js')).href
  );
  const body = Buffer.alloc(BATCH * RECORD, 0x61);
  for (let i = 0; i < BATCH; i++) body.writeInt32BE(RECORD, i * RECORD);
  const srv = net.createServer((sock) => {
    sock.setNoDelay(true);
    const reader = new FrameReader();
    sock.on('data', (chunk) => {
      for (const frame of reader.push(chunk)) {
        const req = decodeRemotingCommand(frame);
        const offset = Number(req.extFields?.queueOffset ?? 0);
        sock.write(
          encodeRemotingCommand({
            code: 0,
            language: 'JAVA',
            version: 405,
            opaque: req.opaque,
            flag: markResponse(0),
            remark: 'FOUND',
            extFields: {
              suggestWhichBrokerId: '0',
              nextBeginOffset: String(offset + BATCH),
              minOffset: '0',
              maxOffset: '100000000',
            },
            body,
          }),
        );
      }
    });
    sock.on('error', () => sock.destroy());
  });
  srv.listen(0, '127.0.0.1', () => process.stdout.write(`${srv.address().port}\n`));
  process.stdin.on('end', () => process.exit(0));
  process.stdin.resume();
}

/** One measured run: PULLS pulls over 8 queues, one in flight per queue; prints a JSON line. */
async function client(dist, port) {
  const { TcpRemotingClient } = await import(pathToFileURL(path.join(dist, 'remoting/tcp-remoting-client.js')).href);
  const { MQClientAPI } = await import(pathToFileURL(path.join(dist, 'client/instance/mq-client-api.js')).href);
  const remoting = new TcpRemotingClient();
  const api = new MQClientAPI(remoting, { requestTimeoutMs: 3000 });
  const addr = `127.0.0.1:${port}`;
  let left = PULLS;
  const lane = async (queueId) => {
    // A push consumer's queue keeps one controller for its pulls.
    const abort = new AbortController();
    let offset = 0;
    while (left > 0) {
      left--;
      const res = await api.pullMessage(
        addr,
        {
          consumerGroup: 'bench_group',
          topic: 'bench_topic',
          queueId,
          queueOffset: offset,
          maxMsgNums: BATCH,
          sysFlag: 3,
          commitOffset: offset,
          suspendTimeoutMillis: 15_000,
          subVersion: 1_700_000_000_000,
          expressionType: 'TAG',
          bname: 'broker-a',
        },
        { timeoutMs: 30_000, signal: abort.signal },
      );
      if (res.code !== 0 || res.body?.length !== BATCH * RECORD) throw new Error(`unexpected answer ${res.code}`);
      offset = res.header.nextBeginOffset;
    }
  };
  // Warm-up, then the measured part.
  left = Math.min(2000, PULLS);
  await Promise.all(Array.from({ length: QUEUES }, (_, q) => lane(q)));
  left = PULLS;
  const cpu0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  await Promise.all(Array.from({ length: QUEUES }, (_, q) => lane(q)));
  const wallMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const cpu = process.cpuUsage(cpu0);
  await remoting.close();
  process.stdout.write(`${JSON.stringify({ wallMs, cpuUs: cpu.user + cpu.system, sysUs: cpu.system })}\n`);
}

function runChild(args, nodeArgs = []) {
  return spawn(process.execPath, [...nodeArgs, fileURLToPath(import.meta.url), ...args], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
}
const firstLine = (child) =>
  new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      const i = out.indexOf('\n');
      if (i >= 0) resolve(out.slice(0, i));
    });
    child.once('exit', (code) => reject(new Error(`child exited with ${code}: ${out}`)));
  });

async function main() {
  const srv = runChild(['server', DISTS[0]]);
  try {
    const port = Number(await firstLine(srv));
    const results = new Map(DISTS.map((d) => [d, []]));
    console.log(`# tcp-client: ${PULLS} pulls of ${BATCH} x ${RECORD} B over ${QUEUES} queues, ${ROUNDS} round(s)`);
    for (let r = 1; r <= ROUNDS; r++) {
      for (const dist of DISTS) {
        const c = runChild(['client', dist, `${port}`], CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : []);
        const res = JSON.parse(await firstLine(c));
        results.get(dist).push(res);
        console.log(
          `round ${r} ${path.relative(root, dist) || dist}: ${((res.cpuUs / PULLS) | 0).toString().padStart(4)} us CPU/pull` +
            ` (system ${Math.round(res.sysUs / PULLS)}; ${(res.cpuUs / PULLS / BATCH).toFixed(2)} us/msg),` +
            ` ${Math.round((PULLS * 1000) / res.wallMs)} pulls/s`,
        );
      }
    }
    for (const [dist, rs] of results) {
      const per = rs.map((x) => x.cpuUs / PULLS).sort((a, b) => a - b);
      const median = per[Math.floor(per.length / 2)];
      console.log(
        `tcp-client ${dist}: median ${median.toFixed(1)} us CPU per pull, ${(median / BATCH).toFixed(2)} us per message`,
      );
    }
  } finally {
    srv.stdin.end();
  }
}

const role = process.argv[2];
if (role === 'server') await server(process.argv[3]);
else if (role === 'client') await client(process.argv[3], Number(process.argv[4]));
else await main();
