/**
 * The CLI takes the access token from a file (`--access-token-file`) or the environment, so it never has
 * to appear in the process list; `--access-token` on the command line still works, with a warning.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const cli = path.join(root, 'dist', 'cli.js');
const TIMEOUT_MS = 60_000;

interface Run {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exit: Promise<number | null>;
}

function run(args: string[], env: Record<string, string> = {}): Run {
  const child = spawn(process.execPath, [cli, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ROCKETMQ_TS_ACCESS_TOKEN: '', ...env },
  });
  let out = '';
  let err = '';
  child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exit };
}

async function listeningAddress(r: Run): Promise<string> {
  const deadline = Date.now() + 40_000;
  for (;;) {
    const m = /rocketmq-ts broker listening on (http:\/\/\S+)/.exec(r.stdout());
    if (m?.[1]) return m[1];
    if (r.child.exitCode !== null) throw new Error(`CLI exited early: ${r.stderr()}`);
    if (Date.now() > deadline) {
      r.child.kill('SIGKILL');
      throw new Error(`no listening line: ${r.stdout()} ${r.stderr()}`);
    }
    await new Promise((res) => setTimeout(res, 20));
  }
}

/** Sends once without and once with `token`; expects 401 then SUCCESS. */
async function expectTokenRequired(address: string, token: string): Promise<void> {
  const anonymous = new TestBrokerClient(address);
  const authorized = new TestBrokerClient(address, { token });
  try {
    expect((await anonymous.send(uniqueName('T'), 'x')).status).toBe(401);
    expect((await authorized.send(uniqueName('T'), 'x')).code).toBe(ResponseCode.SUCCESS);
  } finally {
    await anonymous.close();
    await authorized.close();
  }
}

describe('rocketmq-ts broker: the access token', () => {
  test(
    '--access-token-file reads the token from a file; nothing secret is in the arguments',
    async () => {
      const store = tempStorePath('rmq-cli-tok-');
      const file = path.join(store, 'token');
      writeFileSync(file, 's3cret-from-file\n');
      chmodSync(file, 0o600);
      const r = run(['broker', '--store', store, '--port', '0', '--access-token-file', file]);
      try {
        await expectTokenRequired(await listeningAddress(r), 's3cret-from-file');
        expect(r.child.spawnargs.join(' ')).not.toContain('s3cret');
        expect(r.stderr()).not.toMatch(/warning/);
      } finally {
        r.child.kill('SIGTERM');
      }
      expect(await r.exit).toBe(0);
      rmSync(store, { recursive: true, force: true });
    },
    TIMEOUT_MS,
  );

  test(
    'the environment variable works; --access-token works with a warning about ps',
    async () => {
      const store = tempStorePath('rmq-cli-tok-');
      const fromEnv = run(['broker', '--store', store, '--port', '0'], { ROCKETMQ_TS_ACCESS_TOKEN: 'env-token' });
      try {
        await expectTokenRequired(await listeningAddress(fromEnv), 'env-token');
      } finally {
        fromEnv.child.kill('SIGTERM');
      }
      expect(await fromEnv.exit).toBe(0);
      const fromFlag = run(['broker', '--store', store, '--port', '0', '--access-token', 'flag-token']);
      try {
        await expectTokenRequired(await listeningAddress(fromFlag), 'flag-token');
        expect(fromFlag.stderr()).toMatch(
          /--access-token is visible .* ROCKETMQ_TS_ACCESS_TOKEN or --access-token-file/,
        );
      } finally {
        fromFlag.child.kill('SIGTERM');
      }
      expect(await fromFlag.exit).toBe(0);
      rmSync(store, { recursive: true, force: true });
    },
    TIMEOUT_MS,
  );

  test(
    'a missing or empty token file, or both flags, exit 2; --help prefers the file and the environment',
    async () => {
      const store = tempStorePath('rmq-cli-tok-');
      const empty = path.join(store, 'empty');
      writeFileSync(empty, '  \n');
      for (const args of [
        ['--access-token-file', path.join(store, 'missing')],
        ['--access-token-file', empty],
        ['--access-token-file', empty, '--access-token', 'x'],
      ]) {
        const r = run(['broker', '--store', store, '--port', '0', ...args]);
        expect(await r.exit).toBe(2);
        expect(r.stderr()).toMatch(/access-token/);
      }
      const help = run(['broker', '--help']);
      expect(await help.exit).toBe(0);
      expect(help.stdout()).toMatch(/--access-token-file F/);
      expect(help.stdout()).toMatch(/ROCKETMQ_TS_ACCESS_TOKEN/);
      expect(help.stdout()).toMatch(/discouraged/);
      rmSync(store, { recursive: true, force: true });
    },
    TIMEOUT_MS,
  );
});
