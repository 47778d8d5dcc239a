// The broker's per-request header check (decoded SEND_MESSAGE headers through validateRequest), in a fresh
// process each time: CPU µs per call for the first 2,000 calls (code not yet compiled, as in a broker's
// first second) and for the 20,000 after them. With `--baseline DIR` (another checkout's dist), the two
// builds run alternately, each in its own child, and the medians are printed side by side.
//
//   npm run build && node bench/header-check.mjs [--baseline ../other/dist] [--rounds 3]
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const COLD = 2000;
const WARM = 20000;

async function child(dist) {
  const { validateRequest } = await import(`${dist}/broker/dispatch.js`);
  const { COMMANDS, RequestCode, decodeFrame, encodeFrame } = await import(`${dist}/protocol/index.js`);
  const spec = COMMANDS.get(RequestCode.SEND_MESSAGE);
  const headers = Array.from(
    { length: COLD },
    (_, i) =>
      decodeFrame(
        encodeFrame({
          producerGroup: 'P',
          topic: `T${i % 7}`,
          defaultTopic: 'TBW102',
          defaultTopicQueueNums: 4,
          queueId: i & 7,
          sysFlag: 0,
          bornTimestamp: Date.now(),
          flag: 0,
          reconsumeTimes: 0,
          unitMode: false,
          bname: 'broker-a',
          properties: `UNIQ_KEY\u0001ID${i}\u0002WAIT\u0001true\u0002`,
        }),
      ).header,
  );
  const cpu = () => {
    const u = process.cpuUsage();
    return u.user + u.system;
  };
  const run = (n) => {
    const c0 = cpu();
    for (let i = 0; i < n; i++) {
      if (!validateRequest(spec, headers[i % headers.length], undefined).ok) throw new Error('header refused');
    }
    return (cpu() - c0) / n;
  };
  const cold = run(COLD);
  const warm = run(WARM);
  process.stdout.write(JSON.stringify({ cold, warm }));
}

function arg(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 ? process.argv[i + 1] : fallback;
}

if (process.argv[2] === '--child') {
  await child(process.argv[3]);
} else {
  const ours = fileURLToPath(new URL('../dist', import.meta.url));
  const baseline = arg('--baseline', undefined);
  const rounds = Number(arg('--rounds', 3));
  const builds = baseline
    ? [
        ['baseline', baseline],
        ['this', ours],
      ]
    : [['this', ours]];
  const results = new Map(builds.map(([name]) => [name, []]));
  for (let r = 0; r < rounds; r++) {
    for (const [name, dist] of builds) {
      const out = spawnSync(process.execPath, [fileURLToPath(import.meta.url), '--child', dist], { encoding: 'utf8' });
      if (out.status !== 0) throw new Error(`${name} failed: ${out.stderr}`);
      const { cold, warm } = JSON.parse(out.stdout);
      results.get(name).push({ cold, warm });
      console.log(
        `${name.padEnd(8)} round ${r + 1}: first ${COLD} ${cold.toFixed(1)} µs/call, then ${warm.toFixed(2)} µs/call`,
      );
    }
  }
  const median = (xs) => xs.sort((a, b) => a - b)[xs.length >> 1];
  for (const [name, rows] of results)
    console.log(
      `${name.padEnd(8)} median: first ${COLD} ${median(rows.map((x) => x.cold)).toFixed(1)} µs/call, then ${median(rows.map((x) => x.warm)).toFixed(2)} µs/call`,
    );
}
