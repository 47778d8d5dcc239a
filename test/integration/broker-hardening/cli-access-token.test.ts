/**
 * The CLI takes the access token from a file (`--access-token-file`) or the environment, so it never has
 * to appear in the process list; `--access-token` on the command line still works, with a warning.
 */
import { chmodSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import { CLI_TEST_TIMEOUT_MS as TIMEOUT_MS, listeningAddress, runCli } from '../../support/cli-process.js';

/** The CLI with no token in the environment unless the test gives one. */
function run(args: string[], env: Record<string, string> = {}) {
  return runCli(args, { ROCKETMQ_TS_ACCESS_TOKEN: '', ...env });
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
