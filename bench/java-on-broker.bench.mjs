// RocketMQ's own Java client (the kit's `bench/run drain N`: 4 sync-send threads preload N x 1 KiB into a new
// 8-queue topic, then DefaultMQPushConsumer with pullBatchSize=32 / consumeMessageBatchMaxSize=32 drains it)
// against the bundled broker over TCP remoting (`node dist/cli.js broker --remoting-port P`, used as name server
// and broker at once), next to the same client on Apache RocketMQ 4.9.8's own name server and broker, in one run.
// Rounds alternate the two brokers. Prints the Java client's preload and drain figures and each broker's CPU per
// message (user+system from /proc/<pid>/stat) for the preload and the drain phase. Imports nothing from the
// package but runs dist/cli.js (npm run build first). Needs the kit (../shared/rocketmq-java or RMQ_KIT_DIR),
// Java 17 and javac; skipped with one line otherwise.
//
//   node bench/java-on-broker.bench.mjs   env: JAVA_DRAIN_MESSAGES [200000]  JAVA_DRAIN_ROUNDS [1]
//                                              JAVA_DRAIN_ONLY [ours|kit]  JAVA_DRAIN_CPU_PROF [dir: --cpu-prof of our broker]
//                                              RMQ_NAMESRV_PORT [36876]  RMQ_BROKER_PORT [36911]  OUR_REMOTING_PORT [36100]
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** RMQ_KIT_DIR, else the first `shared/rocketmq-java` beside the project or one of its parents. */
function findKit() {
  if (process.env.RMQ_KIT_DIR) return path.resolve(process.env.RMQ_KIT_DIR);
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared/rocketmq-java');
    if (existsSync(candidate) || dir === path.dirname(dir)) return candidate;
  }
}
const kit = findKit();
const N = Number(process.env.JAVA_DRAIN_MESSAGES ?? 200_000);
const ROUNDS = Number(process.env.JAVA_DRAIN_ROUNDS ?? 1);
const ONLY = process.env.JAVA_DRAIN_ONLY ?? '';
const CPU_PROF = process.env.JAVA_DRAIN_CPU_PROF ?? '';
const NS_PORT = process.env.RMQ_NAMESRV_PORT ?? '36876';
const BROKER_PORT = process.env.RMQ_BROKER_PORT ?? '36911';
const OUR_PORT = process.env.OUR_REMOTING_PORT ?? '36100';

if (!existsSync(path.join(kit, 'bench/run'))) {
  console.log(`java-on-broker: skipped, no RocketMQ kit at ${kit}`);
  process.exit(0);
}
if (!existsSync(path.join(root, 'dist/cli.js'))) {
  console.log('java-on-broker: run `npm run build` first (dist/cli.js is missing)');
  process.exit(1);
}

const home = mkdtempSync(path.join(os.tmpdir(), 'rmq-java-on-broker-'));
const baseEnv = {
  ...process.env,
  RMQ_HOME_DIR: path.join(home, 'kit'),
  RMQ_CLIENT_DIR: path.join(home, 'client'),
  RMQ_STOP_TIMEOUT: '0',
  RMQ_JAVA_OPTS: '-Dtls.server.mode=disabled',
  RMQ_BROKER_HEAP: '-Xms1g -Xmx1g',
  RMQ_NAMESRV_HEAP: '-Xms256m -Xmx256m',
};
const kitEnv = { ...baseEnv, RMQ_NAMESRV_PORT: NS_PORT, RMQ_BROKER_PORT: BROKER_PORT };
const oursEnv = { ...baseEnv, RMQ_NAMESRV_PORT: OUR_PORT, RMQ_BROKER_PORT: OUR_PORT };

const runKit = (script, args, env) =>
  new Promise((resolve, reject) => {
    execFile(path.join(kit, script), args, { env, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${script} failed: ${stderr || err.message}`));
      else resolve(String(stdout));
    });
  });

/** Child processes to stop when this one is stopped. */
const running = new Set();
function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

const TICK = 100; // USER_HZ on Linux
/** user+system CPU seconds of a process. */
function cpuSeconds(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / TICK;
}
function rssMiB(pid) {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Runs the kit's Drain against `env`'s ports; samples the broker's CPU when the preload line appears. */
function drain(env, brokerPid) {
  return new Promise((resolve, reject) => {
    const cpu0 = cpuSeconds(brokerPid);
    let cpuPreload = NaN;
    let out = '';
    let err = '';
    // Its own process group, so the JVM under bench/run can be stopped with it.
    const child = spawn(path.join(kit, 'bench/run'), ['drain', String(N)], { env, detached: true });
    running.add(child);
    let failedSends = 0;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (d) => {
      out += d;
      if (Number.isNaN(cpuPreload) && out.includes('preload:')) {
        cpuPreload = cpuSeconds(brokerPid);
        // Drain waits (up to 10 minutes) for all N messages: with failed sends it can never finish.
        failedSends = Number(/failed=(\d+)/.exec(out)?.[1] ?? 0);
        if (failedSends > 0) killGroup(child);
      }
    });
    child.stderr.on('data', (d) => {
      err = (err + d).slice(-4000);
      // Drain's main thread died (the JVM would linger on the client's threads): stop it.
      if (err.includes('Exception in thread "main"')) killGroup(child);
    });
    child.on('error', reject);
    child.on('exit', (code) => {
      running.delete(child);
      if (failedSends > 0) return reject(new Error(`the preload had ${failedSends} failed sends: ${out.trim()}`));
      if (code !== 0) return reject(new Error(`bench/run drain exited ${code}: ${err}`));
      const cpu1 = cpuSeconds(brokerPid);
      const lines = out.split('\n').filter((l) => /^(preload|drain):/.test(l));
      const rate = (re) => Number(re.exec(out)?.[1] ?? NaN);
      resolve({
        lines,
        preloadRate: rate(/preload: .* = (\d+) msg\/s/),
        drainRate: rate(/first-to-last delivery = (\d+) msg\/s/),
        complete: /drain: complete/.test(out),
        preloadCpuUs: ((cpuPreload - cpu0) / N) * 1e6,
        drainCpuUs: ((cpu1 - cpuPreload) / N) * 1e6,
        rss: rssMiB(brokerPid),
      });
    });
  });
}

/**
 * A first topic creation on a broker that just started can take longer than the Java admin's 3 s
 * timeout on a loaded machine, which kills Drain: create one topic with mqadmin first (both brokers alike).
 */
async function warmUp(env) {
  const out = await runKit(
    'bin/mqadmin',
    ['updateTopic', '-c', 'DefaultCluster', '-t', 'BENCH_WARMUP', '-r', '8', '-w', '8'],
    env,
  );
  if (!out.includes('success')) console.log(`java-on-broker: warm-up topic not created: ${out.trim().slice(-300)}`);
}

async function onKit() {
  await runKit('bin/start-namesrv', [], kitEnv);
  try {
    const line = await runKit('bin/start-broker', [], kitEnv);
    const pid = Number(/pid (\d+)/.exec(line)?.[1]);
    await warmUp(kitEnv);
    return await drain(kitEnv, pid);
  } finally {
    await runKit('bin/stop', ['--clean'], kitEnv).catch((e) => console.error(String(e)));
  }
}

async function onOurs(round) {
  const store = path.join(home, `store-${round}`);
  const args = ['dist/cli.js', 'broker', '--store', store, '--port', '0', '--remoting-port', OUR_PORT];
  args.push('--log-level', 'warn');
  const nodeArgs = CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...nodeArgs, ...args], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  running.add(child);
  try {
    await new Promise((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8');
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('remoting listening')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`our broker exited ${code} before listening`)));
    });
    await warmUp(oursEnv);
    return await drain(oursEnv, child.pid);
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
    running.delete(child);
    rmSync(store, { recursive: true, force: true });
  }
}

const print = (name, r) => {
  for (const l of r.lines) console.log(`${name} ${l}`);
  console.log(
    `${name} summary: preload ${r.preloadRate} msg/s, drain ${r.drainRate} msg/s${r.complete ? '' : ' (INCOMPLETE)'}, ` +
      `broker CPU ${r.preloadCpuUs.toFixed(1)} us/msg preload, ${r.drainCpuUs.toFixed(1)} us/msg drain, ` +
      `broker peak RSS ${r.rss.toFixed(0)} MiB`,
  );
};

// Stopped from outside: stop the kit's servers (they outlive this process otherwise) and clean up.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    for (const child of running) {
      if (child.spawnargs.includes('drain')) killGroup(child);
      else child.kill('SIGTERM');
    }
    void runKit('bin/stop', ['--clean'], kitEnv)
      .catch(() => undefined)
      .finally(() => {
        rmSync(home, { recursive: true, force: true });
        process.exit(1);
      });
  });
}

const results = { ours: [], kit: [] };
try {
  console.log(`java-on-broker: ${N} x 1 KiB, ${ROUNDS} round(s), ${os.cpus().length} cpus, load ${os.loadavg()[0]}`);
  // A round that fails (a port taken by another process, sends timing out on a loaded machine) is
  // reported and the others go on; the exit code says that one failed.
  const attempt = async (name, fn, list) => {
    try {
      const r = await fn();
      list.push(r);
      print(name, r);
    } catch (e) {
      process.exitCode = 1;
      console.log(
        `${name} FAILED: ${String(e?.message ?? e)
          .split('\n')
          .slice(0, 3)
          .join(' | ')}`,
      );
    }
  };
  for (let round = 0; round < ROUNDS; round++) {
    if (ONLY !== 'kit')
      await attempt(`[round ${round + 1}] ours (rocketmq-ts broker)`, () => onOurs(round), results.ours);
    if (ONLY !== 'ours') await attempt(`[round ${round + 1}] kit  (RocketMQ 4.9.8 broker)`, onKit, results.kit);
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  if (results.ours.length && results.kit.length) {
    const o = median(results.ours.map((r) => r.drainRate));
    const k = median(results.kit.map((r) => r.drainRate));
    const op = median(results.ours.map((r) => r.preloadRate));
    const kp = median(results.kit.map((r) => r.preloadRate));
    console.log(
      `java-on-broker: Java client drain on ours / on RocketMQ's broker = ${(o / k).toFixed(2)} (${o} vs ${k} msg/s); ` +
        `preload ${(op / kp).toFixed(2)} (${op} vs ${kp} msg/s)`,
    );
  }
} finally {
  rmSync(home, { recursive: true, force: true });
}
