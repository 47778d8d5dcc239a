// Members of a new group starting together in two child processes (two members each), shared by the
// Jest test (push-consumer-start-together.test.ts) and `npm run soak -- start-together`. Both children
// load the package first; then both are told to start at the same moment; each prints every message
// it consumes. Uses the compiled package in dist/ (built by Jest's globalSetup or `npm run build`).
import { spawn } from 'node:child_process';
import path from 'node:path';
import { clearTimeout, setTimeout } from 'node:timers';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '../../dist/index.js');

async function until(cond, timeoutMs, what) {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

/** How each kind of member is made and consumes (the child prints `consumed <body>` per message). */
const members = {
  push: (options, topic) => `
    const { PushConsumer } = await import(${JSON.stringify(dist)});
    const members = [0, 1].map(() => {
      const c = new PushConsumer(${JSON.stringify(options)});
      c.subscribe(${JSON.stringify(topic)}, '*');
      c.registerMessageListener(async (msgs) => {
        await new Promise((r) => setTimeout(r, 1));
        for (const m of msgs) process.stdout.write('consumed ' + m.body.toString() + '\\n');
      });
      return c;
    });
    const consume = () => undefined;`,
  lite: (options, topic) => `
    const { LitePullConsumer } = await import(${JSON.stringify(dist)});
    const members = [0, 1].map((i) => {
      // A client of its own per member, as separate deployments have.
      const instanceName = ${JSON.stringify(String(options.consumerGroup))} + '_' + process.pid + '_' + i;
      const c = new LitePullConsumer({ ...${JSON.stringify(options)}, instanceName });
      c.subscribe(${JSON.stringify(topic)}, '*');
      return c;
    });
    const consume = async (c) => {
      for await (const m of c) process.stdout.write('consumed ' + m.body.toString() + '\\n');
    };`,
};

/**
 * A child process with two members (`kind` 'push' or 'lite'; `options`: its consumer options) of
 * `topic`, started on `go`.
 */
function spawnPair(options, topic, kind) {
  const script = `${members[kind](options, topic)}
    process.stdout.write('loaded\\n');
    let started;
    let loops = [];
    // The parent went away (a timed-out test, a Jest worker that was killed): don't linger.
    process.stdin.on('end', () => process.exit(1));
    process.stdin.on('data', async (d) => {
      const s = d.toString();
      if (s.includes('go'))
        started = Promise.all(
          members.map(async (c) => {
            await c.start();
            loops.push(consume(c));
            await c.ready;
          }),
        );
      if (s.includes('stop')) {
        await started?.catch(() => undefined);
        await Promise.all(members.map((c) => c.shutdown()));
        await Promise.all(loops);
        process.exit(0);
      }
    });
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['pipe', 'pipe', 'inherit'] });
  // `closed`: the child has exited and its output has been read to the end
  const closed = new Promise((resolve) => child.once('close', resolve));
  const state = { child, closed, bodies: [], loaded: false };
  let partial = '';
  child.stdout.on('data', (d) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) {
      if (l.startsWith('consumed ')) state.bodies.push(l.slice(9));
      else if (l === 'loaded') state.loaded = true;
    }
  });
  return state;
}

async function stopPair(p) {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return p.closed;
  p.child.stdin.write('stop\n');
  const kill = setTimeout(() => p.child.kill('SIGKILL'), 20_000);
  await p.closed;
  clearTimeout(kill);
}

/**
 * One round: two child processes with two members each (PushConsumers, or LitePullConsumers consuming
 * with `for await`, by `kind`) of a new group start together on `topic`, which holds `backlog`
 * messages; resolves once every message was consumed and the children stopped. `staggerMs`: the second
 * child is told to start this long after the first (members of a deployment never start in the same
 * millisecond).
 * @returns {Promise<{ consumed: number, duplicates: number, perProcess: number[] }>}
 */
export async function twoProcessRound(options, topic, backlog, kind = 'push', staggerMs = 0) {
  const pairs = [spawnPair(options, topic, kind), spawnPair(options, topic, kind)];
  try {
    await until(() => pairs.every((p) => p.loaded), 60_000, 'the children');
    pairs[0].child.stdin.write('go\n');
    if (staggerMs > 0) await sleep(staggerMs);
    pairs[1].child.stdin.write('go\n');
    await until(() => new Set(pairs.flatMap((p) => p.bodies)).size === backlog, 120_000, 'the backlog');
  } finally {
    await Promise.all(pairs.map(stopPair));
  }
  const all = pairs.flatMap((p) => p.bodies);
  const consumed = new Set(all).size;
  return { consumed, duplicates: all.length - consumed, perProcess: pairs.map((p) => p.bodies.length) };
}
