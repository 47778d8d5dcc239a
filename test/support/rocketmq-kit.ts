/**
 * Starts Apache RocketMQ 4.9.8 from the shared kit (`../shared/rocketmq-java`) on free ports with a
 * temp state directory, for interoperability tests, and stops and cleans it afterwards. When the kit
 * or Java is missing (a user's clone), `kitUnavailable()` says why and suites skip.
 * `RMQ_KIT=0` skips them on purpose. Set `RMQ_KIT_NAMESRV=host:port` and `RMQ_KIT_BROKER=host:port` to use servers that are already running.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The kit: `RMQ_KIT_DIR`, else `shared/rocketmq-java` beside the clone or beside one of its parent folders. */
export const KIT_DIR = ((): string => {
  if (process.env.RMQ_KIT_DIR) return path.resolve(process.env.RMQ_KIT_DIR);
  const clone = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  for (let dir = path.dirname(clone); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'shared/rocketmq-java');
    if (existsSync(candidate)) return candidate;
    if (dir === path.dirname(dir)) return path.join(path.dirname(clone), 'shared/rocketmq-java');
  }
})();

/** Why the kit cannot run here, or null when it can. */
export function kitUnavailable(): string | null {
  if (process.env.RMQ_KIT === '0') return 'RMQ_KIT=0';
  if (process.env.RMQ_KIT_NAMESRV && process.env.RMQ_KIT_BROKER) return null;
  if (!existsSync(path.join(KIT_DIR, 'bin/start-broker'))) return `RocketMQ kit not found at ${KIT_DIR}`;
  try {
    execFileSync('java', ['-version'], { stdio: 'ignore' });
  } catch {
    return 'java is not installed';
  }
  return null;
}

export interface RocketMQKit {
  namesrvAddr: string;
  brokerAddr: string;
  stop(): Promise<void>;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });
}

async function freePort(): Promise<number> {
  const s = net.createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', () => r()));
  const port = (s.address() as net.AddressInfo).port;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

/** A broker port whose fast port (port - 2) and HA port (port + 1) are free too. */
async function freeBrokerPort(): Promise<number> {
  for (;;) {
    const p = await freePort();
    if (p > 1026 && p < 65534 && (await canListen(p - 2)) && (await canListen(p + 1))) return p;
  }
}

export async function startKit(): Promise<RocketMQKit> {
  const { RMQ_KIT_NAMESRV: ns, RMQ_KIT_BROKER: br } = process.env;
  if (ns && br) return { namesrvAddr: ns, brokerAddr: br, stop: async () => undefined };
  const namesrvPort = await freePort();
  const brokerPort = await freeBrokerPort();
  const env = {
    ...process.env,
    RMQ_NAMESRV_PORT: String(namesrvPort),
    RMQ_BROKER_PORT: String(brokerPort),
    RMQ_HOME_DIR: path.join(os.tmpdir(), `rmq-kit-${process.pid}-${namesrvPort}`),
    RMQ_JAVA_OPTS: '-Dtls.server.mode=disabled',
    RMQ_STOP_TIMEOUT: '0',
  };
  const stop = async (): Promise<void> => {
    await run(path.join(KIT_DIR, 'bin/stop'), ['--clean'], { env, timeout: 60_000 }).catch(() => undefined);
  };
  try {
    await run(path.join(KIT_DIR, 'bin/start-namesrv'), [], { env, timeout: 120_000 });
    await run(path.join(KIT_DIR, 'bin/start-broker'), [], { env, timeout: 120_000 });
  } catch (e) {
    await stop();
    throw e;
  }
  return { namesrvAddr: `127.0.0.1:${namesrvPort}`, brokerAddr: `127.0.0.1:${brokerPort}`, stop };
}
