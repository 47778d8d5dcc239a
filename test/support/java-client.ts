/**
 * RocketMQ's own Java client for the interoperability suites: finds the Apache RocketMQ 4.9.8 kit
 * (`RMQ_KIT_DIR`, else a `shared/rocketmq-java` folder beside the project or one of its parents), or with
 * version 5 the 5.3.3 kit (`RMQ5_KIT_DIR`, else `shared/rocketmq5-java`), and
 * Java 17, compiles small Java programs against the kit's class path once per test file, and runs them
 * through the kit's `bin/java-client`. When the kit, `java` or `javac` is missing, `javaKit()` returns
 * undefined with the reason, and the suites skip with one line.
 *
 * `JavaDriver` runs `test/integration/remoting-broker/java/Driver.java`: one JVM per test file that
 * starts producers (plain and transactional), push and lite pull consumers and mqadmin commands on
 * request (see that file's header).
 */
import { spawn, spawnSync, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KITS, describeUnless, detectKit, type KitVersion } from './rocketmq-kit.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');

export interface JavaKit {
  /** The kit's directory. */
  dir: string;
  /** 4 (RocketMQ 4.9.8) or 5 (RocketMQ 5.3.3). */
  version: KitVersion;
  /** Output of `bin/classpath`. */
  classpath: string;
}

const cached = new Map<KitVersion, { kit: JavaKit | undefined; reason: string }>();

/**
 * The kit of `version` (default 4.9.8) when it, `java` (17+), `javac` and its class path are usable (the
 * kit and Java as `detectKit` finds them); else undefined and `javaKitMissing()` says why.
 */
export function javaKit(version: KitVersion = 4): JavaKit | undefined {
  let entry = cached.get(version);
  if (!entry) {
    entry = findJavaKit(version);
    cached.set(version, entry);
  }
  return entry.kit;
}

function findJavaKit(version: KitVersion): { kit: JavaKit | undefined; reason: string } {
  const kit = detectKit(version);
  if (!kit.available) return { kit: undefined, reason: kit.reason };
  const javac = spawnSync('javac', ['-version'], { encoding: 'utf8' });
  if (javac.status !== 0) return { kit: undefined, reason: 'no javac on PATH (Java 17 JDK needed)' };
  const cp = spawnSync(path.join(kit.dir, 'bin', 'classpath'), { encoding: 'utf8' });
  if (cp.status !== 0) return { kit: undefined, reason: `the kit's class path is incomplete: ${cp.stderr.trim()}` };
  return { kit: { dir: kit.dir, version, classpath: cp.stdout.trim() }, reason: '' };
}

export function javaKitMissing(version: KitVersion = 4): string {
  javaKit(version);
  return cached.get(version)?.reason ?? '';
}

/**
 * A suite that needs the kit of `version` (default 4.9.8) and a JDK: skipped with one line saying why
 * when they are missing.
 */
export function describeWithJava(name: string, fn: () => void, version: KitVersion = 4): void {
  describeUnless(javaKit(version) ? null : javaKitMissing(version), name, fn);
}

/**
 * One `describeWithJava` per kit version (4.9.8's Java client, then 5.3.3's): `name(release)` names the
 * suite, `fn(version)` declares it. Each version skips on its own when its kit is missing.
 */
export function describeWithJavaEach(name: (release: string) => string, fn: (version: KitVersion) => void): void {
  for (const { version, release } of KITS) describeWithJava(name(release), () => fn(version), version);
}

/** Compiles Java sources into a new temp directory and returns it. */
export function compileJava(kit: JavaKit, sources: string[]): string {
  const out = mkdtempSync(path.join(os.tmpdir(), 'rmq-java-classes-'));
  const r = spawnSync('javac', ['-nowarn', '-d', out, '-cp', kit.classpath, ...sources], { encoding: 'utf8' });
  if (r.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    throw new Error(`javac failed: ${r.stderr}`);
  }
  return out;
}

/** The Java programs of the remoting-broker suites. */
export const DRIVER_SOURCE = path.join(root, 'test/integration/remoting-broker/java/Driver.java');

export interface DriverEvent {
  ev: string;
  [key: string]: unknown;
}

export interface JavaMessage {
  c: string;
  topic: string;
  tags: string | null;
  keys: string | null;
  body: string;
  queueId: number;
  queueOffset: number;
  reconsumeTimes: number;
  msgId: string;
  /** When the test process saw the delivery (Date.now()). */
  at: number;
}

/** A broker check-back answered by a Java transactional producer. */
export interface JavaCheck {
  p: string;
  topic: string;
  body: string;
  msgId: string;
  transactionId: string | null;
  /** What checkLocalTransaction answered: COMMIT_MESSAGE, ROLLBACK_MESSAGE or UNKNOW. */
  answer: string;
  at: number;
}

/**
 * One JVM running Driver.java: commands answered in order, deliveries collected in `messages`, check-backs
 * in `checks`, a lite pull consumer's poll failures in `pollErrors`.
 */
export class JavaDriver {
  readonly messages: JavaMessage[] = [];
  readonly checks: JavaCheck[] = [];
  readonly pollErrors: string[] = [];
  private readonly child: ChildProcessWithoutNullStreams;
  private readonly clientDir: string;
  private readonly waiting: Array<{ resolve: (e: DriverEvent) => void; reject: (e: Error) => void }> = [];
  private buffered = '';
  private stderr = '';
  private exited = false;
  private readonly exit: Promise<void>;
  private readonly ready: Promise<void>;

  private constructor(kit: JavaKit, classesDir: string, jvmOptions: readonly string[]) {
    this.clientDir = mkdtempSync(path.join(os.tmpdir(), 'rmq-java-client-'));
    this.child = spawn(
      path.join(kit.dir, 'bin', 'java-client'),
      [
        '-Xmx256m',
        '-XX:TieredStopAtLevel=1',
        `-Drocketmq.home.dir=${kit.dir}`,
        // Rebalance every second rather than every 20 s, so a route learnt late (e.g. %RETRY%group, created by
        // the group's first heartbeat) is used at once.
        '-Drocketmq.client.rebalance.waitInterval=1000',
        ...jvmOptions,
        '-cp',
        classesDir,
        'Driver',
      ],
      {
        env: {
          ...process.env,
          RMQ_CLIENT_DIR: this.clientDir,
          // java.io.tmpdir: what the client's libraries make there (Netty's self-signed certificates with TLS)
          // goes with the directory rather than staying in /tmp when the JVM is killed.
          RMQ_CLIENT_JAVA_OPTS: `-Duser.home=${this.clientDir} -Djava.io.tmpdir=${this.clientDir}`,
        },
        cwd: this.clientDir, // anything the client writes relative to its working directory stays in its temp dir
        stdio: ['pipe', 'pipe', 'pipe'],
      },
    );
    let readyResolve!: () => void;
    this.ready = new Promise((r) => (readyResolve = r));
    this.child.stdout.setEncoding('utf8');
    this.child.stderr.setEncoding('utf8');
    this.child.stderr.on('data', (d: string) => {
      this.stderr = (this.stderr + d).slice(-20_000);
    });
    this.child.stdout.on('data', (d: string) => {
      this.buffered += d;
      let nl: number;
      while ((nl = this.buffered.indexOf('\n')) >= 0) {
        const line = this.buffered.slice(0, nl);
        this.buffered = this.buffered.slice(nl + 1);
        if (!line.startsWith('{')) continue;
        const ev = JSON.parse(line) as DriverEvent;
        if (ev.ev === 'ready') readyResolve();
        else if (ev.ev === 'msg') this.messages.push({ ...(ev as unknown as JavaMessage), at: Date.now() });
        else if (ev.ev === 'check') this.checks.push({ ...(ev as unknown as JavaCheck), at: Date.now() });
        else if (ev.ev === 'pollError') this.pollErrors.push(`${String(ev.c)}: ${String(ev.message)}`);
        else this.waiting.shift()?.resolve(ev);
      }
    });
    this.exit = new Promise((resolve) =>
      this.child.on('exit', () => {
        this.exited = true;
        for (const w of this.waiting.splice(0)) w.reject(new Error(`the Java driver exited: ${this.stderr}`));
        readyResolve();
        resolve();
      }),
    );
  }

  /** Starts the JVM (with extra `jvmOptions`, e.g. `-Dtls.enable=true`) and waits until it reads commands. */
  static async start(kit: JavaKit, classesDir: string, jvmOptions: readonly string[] = []): Promise<JavaDriver> {
    const d = new JavaDriver(kit, classesDir, jvmOptions);
    await d.ready;
    if (d.exited) throw new Error(`the Java driver did not start: ${d.stderr}`);
    return d;
  }

  /** Sends one command; resolves with its answer, rejects on an error answer. */
  command(...fields: string[]): Promise<DriverEvent> {
    if (this.exited) return Promise.reject(new Error(`the Java driver exited: ${this.stderr}`));
    for (const f of fields)
      if (/[\t\n]/.test(f)) throw new Error(`a driver field may not contain TAB or newline: ${f}`);
    return new Promise<DriverEvent>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      this.child.stdin.write(`${fields.join('\t')}\n`);
    }).then((ev) => {
      if (ev.ev === 'error') throw new Error(`Java driver: ${String(ev.message)}`);
      return ev;
    });
  }

  /** Runs an mqadmin command inside the JVM; resolves with what it printed. */
  async admin(...args: string[]): Promise<string> {
    return String((await this.command('admin', ...args)).out);
  }

  /** The last lines the JVM wrote to stderr (for failure messages). */
  get log(): string {
    return this.stderr;
  }

  /** Shuts the clients down and ends the JVM (killed after `timeoutMs`). */
  async close(timeoutMs = 20_000): Promise<void> {
    if (!this.exited) {
      this.child.stdin.end('exit\n');
      const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
      await this.exit;
      clearTimeout(timer);
    }
    rmSync(this.clientDir, { recursive: true, force: true });
  }
}

/** Polls `cond` until it holds or `timeoutMs` passes; the error carries `describe()` when given. */
export async function waitUntil(cond: () => boolean, timeoutMs: number, describeState?: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline)
      throw new Error(`condition not met in ${timeoutMs} ms${describeState ? `: ${describeState()}` : ''}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
