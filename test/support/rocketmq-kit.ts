/**
 * Runs the stock Apache RocketMQ kits (NameServer, broker, mqadmin, Java client) for the interop suites:
 * 4.9.8 (the default, version 4) is `../shared/rocketmq-java` beside the project root (or beside a parent
 * folder), or `RMQ_KIT_DIR`; 5.3.3 (version 5) is `../shared/rocketmq5-java` found the same way, or
 * `RMQ5_KIT_DIR`. Both have the same scripts and variables. Java 17+ must be on PATH. `detectKit(v)` says
 * whether a kit and Java are there (and, if not, why: the suite then skips with one line);
 * `startKit({ version })` starts a NameServer and a broker on free ports in a fresh temp state dir and
 * returns helpers; `stop()` kills both and deletes the state dir. `KITS` and `kitDescribeEach` run one
 * suite body once per kit version.
 *
 * Ports: the broker also binds its port - 2 (fast port) and + 1 (HA), so all three are probed. Ports
 * are drawn below Linux's ephemeral range, so outgoing connections of other tests cannot take them
 * between the probe and the bind; a start that still loses a race is retried on other ports.
 */
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { silentLogger } from '../../src/common/logger.js';
import { AdminClient } from '../../src/index.js';
import { waitFor } from './broker-fixture.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** The kit's major version: 4 is Apache RocketMQ 4.9.8, 5 is Apache RocketMQ 5.3.3. */
export type KitVersion = 4 | 5;

/** The kits a suite can run against, with the release each one is (for suite names). */
export const KITS: ReadonlyArray<{ version: KitVersion; release: string }> = [
  { version: 4, release: '4.9.8' },
  { version: 5, release: '5.3.3' },
];

/** `4.9.8` or `5.3.3`. */
export function kitRelease(version: KitVersion): string {
  return KITS.find((k) => k.version === version)!.release;
}

/**
 * `env` when set, else `shared/<folder>` beside the clone or beside one of its parent folders (so a git
 * worktree nested deeper finds it too).
 */
function findKitDir(env: string | undefined, folder: string): string {
  if (env) return path.resolve(env);
  for (let dir = path.dirname(root); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared', folder);
    if (existsSync(candidate)) return candidate;
    if (dir === path.dirname(dir)) return path.join(path.dirname(root), 'shared', folder);
  }
}

/** The 4.9.8 kit: `RMQ_KIT_DIR`, else `shared/rocketmq-java` (see findKitDir). */
export const KIT_DIR = findKitDir(process.env.RMQ_KIT_DIR, 'rocketmq-java');

/** The 5.3.3 kit: `RMQ5_KIT_DIR`, else `shared/rocketmq5-java` (see findKitDir). */
export const KIT5_DIR = findKitDir(process.env.RMQ5_KIT_DIR, 'rocketmq5-java');

/** The directory of the kit of `version`. */
export function kitDir(version: KitVersion = 4): string {
  return version === 5 ? KIT5_DIR : KIT_DIR;
}

export type KitDetection = { available: true; dir: string } | { available: false; reason: string };

const detected = new Map<KitVersion, KitDetection>();

/** Whether the kit of `version` (default 4.9.8) and Java 17+ are present; the reason when not. Cached. */
export function detectKit(version: KitVersion = 4): KitDetection {
  const known = detected.get(version);
  if (known) return known;
  const result = detectUncached(version);
  detected.set(version, result);
  return result;
}

function detectUncached(version: KitVersion): KitDetection {
  const dir = kitDir(version);
  const variable = version === 5 ? 'RMQ5_KIT_DIR' : 'RMQ_KIT_DIR';
  if (!existsSync(path.join(dir, 'bin/start-broker'))) {
    return { available: false, reason: `no RocketMQ ${kitRelease(version)} kit at ${dir} (set ${variable} to run it)` };
  }
  const java = spawnSync(process.env.RMQ_JAVA ?? 'java', ['-version'], { encoding: 'utf8' });
  const m = /version "(\d+)/.exec(`${java.stderr ?? ''}${java.stdout ?? ''}`);
  if (java.status !== 0 || !m) return { available: false, reason: 'no java on PATH (Java 17+ runs the RocketMQ kit)' };
  if (Number(m[1]) < 17) return { available: false, reason: `java ${m[1]} found, the RocketMQ kit needs Java 17+` };
  return { available: true, dir };
}

/** Why the kit of `version` (default 4.9.8) cannot run here, or null when it can. */
export function kitUnavailable(version: KitVersion = 4): string | null {
  const kit = detectKit(version);
  return kit.available ? null : kit.reason;
}

/**
 * `describe` when `missing` is null; otherwise the suite is skipped after printing one line saying why
 * (the interop suites need the kit and Java, which a user's clone may not have). The one place a
 * suite is skipped, and only on that condition.
 */
export function describeUnless(missing: string | null, name: string, body: () => void): void {
  if (missing === null) {
    describe(name, body);
    return;
  }
  process.stdout.write(`[interop] ${name}: skipped, ${missing}\n`);
  describe.skip(name, body);
}

/** `describeUnless` for the kit of `version` (default 4.9.8) and Java 17+. Use it once per interop file and kit. */
export function kitDescribe(name: string, body: () => void, version: KitVersion = 4): void {
  describeUnless(kitUnavailable(version), name, body);
}

/**
 * One `kitDescribe` per kit version: `name(release)` names the suite, `body(version)` declares it (its
 * `beforeAll` starts that version's cluster: one per file and version). Each version skips on its own.
 */
export function kitDescribeEach(name: (release: string) => string, body: (version: KitVersion) => void): void {
  for (const { version, release } of KITS) kitDescribe(name(release), () => body(version), version);
}

export interface KitOptions {
  /** Which kit: 4 (Apache RocketMQ 4.9.8, the default) or 5 (Apache RocketMQ 5.3.3). */
  version?: KitVersion;
  /** Heap of each server. Default `-Xms256m -Xmx256m`. */
  heap?: string;
  /** Extra `key=value` lines for broker.conf. */
  brokerExtraConf?: string[];
  /** Extra JVM options for both servers. */
  javaOpts?: string[];
  /** A `plain_acl.yml` to start the broker with (ACL turned on), as the kit's `RMQ_ACL_FILE`. */
  aclFile?: string;
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RocketMQKit {
  dir: string;
  /** 4 (RocketMQ 4.9.8) or 5 (RocketMQ 5.3.3). */
  version: KitVersion;
  /** `4.9.8` or `5.3.3`. */
  release: string;
  /** `127.0.0.1:port` of the NameServer: what `namesrvAddr` takes. */
  namesrvAddr: string;
  /** `127.0.0.1:port` of the broker. */
  brokerAddr: string;
  brokerName: string;
  clusterName: string;
  /** The state dir (configs, logs, store). */
  homeDir: string;
  /** Runs a kit script (`bin/<name>`) with this kit's environment. Never rejects: check `code`. */
  run(script: string, args: string[], opts?: { timeoutMs?: number }): Promise<RunResult>;
  /** `bin/mqadmin ARGS`; resolves with stdout (mqadmin exits 0 even when a command fails: check it). */
  mqadmin(...args: string[]): Promise<string>;
  /** Creates (or updates) a topic with `queues` read and write queues on the broker; throws unless it worked. */
  createTopic(topic: string, queues?: number): Promise<void>;
  /** Compiles the kit's examples (`examples/*.java`: Producer, Consumer, and Pop in 5.3.3) once; resolves with the class dir. */
  exampleClasses(): Promise<string>;
  /** Kills both servers and deletes the state dir. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Runs a kit command in `cwd`, the kit's temp state dir: some of RocketMQ's tools write files relative
 * to the working directory (`mqadmin consumerStatus` without `-i` dumps every client's running info to
 * `<now>/<clientId>`), and the project's work tree must stay clean.
 */
function run(cmd: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number, cwd: string): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(cmd, args, { env, cwd, timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (err, stdout, stderr) => {
      const code = err ? (typeof err.code === 'number' ? err.code : 1) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) + (err && code === 1 ? `\n${err.message}` : '') });
    });
  });
}

function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = net.createServer();
    srv.once('error', () => resolve(false));
    srv.listen({ port, host: '127.0.0.1', exclusive: true }, () => srv.close(() => resolve(true)));
  });
}

async function pickPorts(): Promise<{ namesrv: number; broker: number }> {
  for (let i = 0; i < 200; i++) {
    const namesrv = 20_000 + Math.floor(Math.random() * 12_000);
    const broker = 20_000 + Math.floor(Math.random() * 12_000);
    const all = [namesrv, broker - 2, broker, broker + 1];
    if (new Set(all).size !== all.length) continue;
    const free = await Promise.all(all.map(portFree));
    if (free.every(Boolean)) return { namesrv, broker };
  }
  throw new Error('no free ports found for the RocketMQ kit');
}

/**
 * Whether the name server at `namesrvAddr` lists a broker within `timeoutMs`. The broker prints 'boot success'
 * before its registration has surely gone through: on a loaded machine a registration that timed out waits
 * for the next one, 30 s later, and an admin call made meanwhile finds no broker.
 */
async function registered(namesrvAddr: string, tls: boolean, timeoutMs: number): Promise<boolean> {
  const admin = new AdminClient({
    namesrvAddr,
    logger: silentLogger,
    ...(tls ? { tls: { rejectUnauthorized: false } } : {}),
  });
  try {
    const listed = async (): Promise<boolean> => (await admin.brokerAddresses().catch(() => [])).length > 0;
    return await waitFor(listed, timeoutMs).then(
      () => true,
      () => false,
    );
  } finally {
    await admin.shutdown();
  }
}

/** Starts a NameServer and a broker from the kit (see the module comment). */
export async function startKit(options: KitOptions = {}): Promise<RocketMQKit> {
  const version = options.version ?? 4;
  const kit = detectKit(version);
  if (!kit.available) throw new Error(`RocketMQ kit unavailable: ${kit.reason}`);
  const dir = kit.dir;
  let lastErr = '';
  for (let attempt = 0; attempt < 3; attempt++) {
    const ports = await pickPorts();
    const homeDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-kit-'));
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      RMQ_NAMESRV_PORT: String(ports.namesrv),
      RMQ_BROKER_PORT: String(ports.broker),
      RMQ_NAMESRV_ADDR: `127.0.0.1:${ports.namesrv}`,
      RMQ_HOME_DIR: homeDir,
      RMQ_CLIENT_DIR: path.join(homeDir, 'client'),
      RMQ_HEAP: options.heap ?? '-Xms256m -Xmx256m',
      RMQ_STOP_TIMEOUT: '0',
      RMQ_START_TIMEOUT: '120',
      // java.io.tmpdir in the state dir: the servers are stopped with KILL at once (RMQ_STOP_TIMEOUT 0), before
      // their exit hooks delete what they made there (with TLS, Netty's self-signed certificate and key).
      RMQ_JAVA_OPTS: ['-Dtls.server.mode=disabled', `-Djava.io.tmpdir=${homeDir}`, ...(options.javaOpts ?? [])].join(
        ' ',
      ),
      RMQ_BROKER_EXTRA_CONF: (options.brokerExtraConf ?? []).join('\n'),
      ...(options.aclFile === undefined ? {} : { RMQ_ACL_FILE: options.aclFile }),
    };
    const script = (name: string): string => path.join(dir, 'bin', name);
    let stopped: Promise<void> | undefined;
    const stop = (): Promise<void> => {
      stopped ??= run(script('stop'), ['--clean'], env, 60_000, os.tmpdir()).then(() => {
        rmSync(homeDir, { recursive: true, force: true });
      });
      return stopped;
    };
    const ns = await run(script('start-namesrv'), [], env, 130_000, homeDir);
    const br = ns.code === 0 ? await run(script('start-broker'), [], env, 130_000, homeDir) : undefined;
    if (ns.code !== 0 || !br || br.code !== 0) {
      lastErr = `${ns.stdout}${ns.stderr}${br ? br.stdout + br.stderr : ''}`;
      await stop();
      continue;
    }
    const tls = (options.javaOpts ?? []).includes('-Dtls.server.mode=enforcing');
    if (!(await registered(`127.0.0.1:${ports.namesrv}`, tls, 60_000))) {
      lastErr = `the broker did not register with its name server within 60 s`;
      await stop();
      continue;
    }
    let classes: Promise<string> | undefined;
    const result: RocketMQKit = {
      dir,
      version,
      release: kitRelease(version),
      namesrvAddr: `127.0.0.1:${ports.namesrv}`,
      brokerAddr: `127.0.0.1:${ports.broker}`,
      brokerName: 'broker-a',
      clusterName: 'DefaultCluster',
      homeDir,
      run: (name, args, opts = {}) => run(script(name), args, env, opts.timeoutMs ?? 120_000, homeDir),
      async mqadmin(...args) {
        const r = await run(script('mqadmin'), args, env, 120_000, homeDir);
        if (r.code !== 0) throw new Error(`mqadmin ${args.join(' ')} failed (${r.code}): ${r.stderr}`);
        return r.stdout;
      },
      async createTopic(topic, queues = 4) {
        const n = String(queues);
        // mqadmin gives up on a call after its own 3 s timeout, which a busy machine can exceed: try again.
        // (startKit has already waited for the broker's registration with the name server.)
        let out = '';
        for (let attempt = 0; attempt < 3 && !/success/.test(out); attempt++)
          out = await result.mqadmin('updateTopic', '-c', 'DefaultCluster', '-t', topic, '-r', n, '-w', n);
        if (!/success/.test(out)) throw new Error(`mqadmin updateTopic ${topic} did not succeed:\n${out}`);
      },
      exampleClasses() {
        classes ??= (async () => {
          const out = path.join(homeDir, 'classes');
          const cp = (await run(script('classpath'), [], env, 30_000, homeDir)).stdout.trim();
          const examples = readdirSync(path.join(dir, 'examples'))
            .filter((f) => f.endsWith('.java'))
            .map((f) => path.join(dir, 'examples', f));
          const javac = await run('javac', ['-d', out, '-cp', cp, ...examples], env, 120_000, homeDir);
          if (javac.code !== 0) throw new Error(`javac of the kit's examples failed: ${javac.stderr}`);
          return out;
        })();
        return classes;
      },
      stop,
    };
    return result;
  }
  throw new Error(`the RocketMQ kit did not start:\n${lastErr}`);
}
