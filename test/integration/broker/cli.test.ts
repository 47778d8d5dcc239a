/**
 * The CLI (`rocketmq-ts broker ...`) from the compiled package, as a user runs it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ResponseCode } from '../../../src/protocol/index.js';
import { TestBrokerClient, uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import { CLI_TEST_TIMEOUT_MS, listeningAddress, runCli as run } from '../../support/cli-process.js';

describe('rocketmq-ts broker (CLI)', () => {
  test(
    'starts, prints where it listens, serves a command, exits 0 on SIGTERM',
    async () => {
      const store = tempStorePath('rmq-cli-');
      const r = run(['broker', '--store', store, '--port', '0']);
      const client = new TestBrokerClient(await listeningAddress(r));
      try {
        const topic = uniqueName('T');
        expect((await client.send(topic, 'hello')).code).toBe(ResponseCode.SUCCESS);
        expect((await client.call('GET_MAX_OFFSET', { topic, queueId: 0 })).header.offset).toBe(1);
      } finally {
        await client.close();
        r.child.kill('SIGTERM');
      }
      expect(await r.exit).toBe(0);
      rmSync(store, { recursive: true, force: true });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    '--host 0.0.0.0 prints the address it really listens on, and the one clients are told to use',
    async () => {
      const store = tempStorePath('rmq-cli-');
      const r = run(['broker', '--store', store, '--host', '0.0.0.0', '--port', '0', '--remoting-port', '0']);
      try {
        expect(await listeningAddress(r)).toMatch(/^http:\/\/0\.0\.0\.0:\d+$/);
        const deadline = Date.now() + 40_000;
        while (!/remoting clients connect to/.test(r.stdout())) {
          if (r.child.exitCode !== null || Date.now() > deadline) throw new Error(`no remoting lines: ${r.stdout()}`);
          await new Promise((res) => setTimeout(res, 20));
        }
        expect(r.stdout()).toMatch(/^rocketmq-ts broker clients connect to http:\/\/127\.0\.0\.1:\d+$/m);
        const remoting = /remoting listening on 0\.0\.0\.0:(\d+)\n/.exec(r.stdout())?.[1];
        expect(r.stdout()).toContain(`remoting clients connect to 127.0.0.1:${remoting}\n`);
      } finally {
        r.child.kill('SIGTERM');
      }
      expect(await r.exit).toBe(0);
      rmSync(store, { recursive: true, force: true });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    'SIGINT shuts down cleanly too, and the store can be opened again',
    async () => {
      const store = tempStorePath('rmq-cli-');
      const first = run(['broker', '--store', store, '--port', '0', '--broker-name', 'broker-x']);
      await listeningAddress(first);
      first.child.kill('SIGINT');
      expect(await first.exit).toBe(0);
      const second = run(['broker', '--store', store, '--port', '0']);
      await listeningAddress(second);
      second.child.kill('SIGTERM');
      expect(await second.exit).toBe(0);
      rmSync(store, { recursive: true, force: true });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    '--access-token is required from clients',
    async () => {
      const store = tempStorePath('rmq-cli-');
      const r = run(['broker', '--store', store, '--port', '0', '--access-token', 'tok']);
      const address = await listeningAddress(r);
      const anonymous = new TestBrokerClient(address);
      const authed = new TestBrokerClient(address, { token: 'tok' });
      try {
        expect((await anonymous.call('GET_MAX_OFFSET', { topic: 'T', queueId: 0 })).status).toBe(401);
        expect((await authed.call('GET_MAX_OFFSET', { topic: 'T', queueId: 0 })).status).toBe(200);
      } finally {
        await anonymous.close();
        await authed.close();
        r.child.kill('SIGTERM');
      }
      expect(await r.exit).toBe(0);
      rmSync(store, { recursive: true, force: true });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test(
    '--config FILE sets options in broker.conf form; a flag on the command line wins; a bad line stops it',
    async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-cli-conf-'));
      const store = path.join(dir, 'store');
      const conf = path.join(dir, 'broker.conf');
      writeFileSync(conf, `storePathRootDir=${store}\nlistenPort=0\nbrokerName=broker-conf\nport=1\n`);
      const r = run(['broker', '--config', conf, '--port', '0']);
      const client = new TestBrokerClient(await listeningAddress(r));
      try {
        await r.waitFor(/remoting listening on 127\.0\.0\.1:(\d+)/);
        const route = await client.call('GET_ROUTEINFO_BY_TOPIC', { topic: 'TBW102' });
        expect(route.body.toString('utf8')).toContain('broker-conf');
      } finally {
        await client.close();
        r.child.kill('SIGTERM');
      }
      expect(await r.exit).toBe(0);
      writeFileSync(conf, `storePathRootDir=${store}\nremotingMaxConnections=many\n`);
      const bad = run(['broker', '--config', conf]);
      expect(await bad.exit).toBe(2);
      expect(bad.stderr()).toContain(`--config: ${conf}:2: remotingMaxConnections must be a whole number, got 'many'`);
      rmSync(dir, { recursive: true, force: true });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test.each([
    [['broker'], /--store DIR is required/],
    [['broker', '--store', '/tmp/x', '--port', 'abc'], /--port must be a number/],
    [['broker', '--store', '/tmp/x', '--bogus'], /Unknown option '--bogus'/],
    [['frobnicate'], /unknown command 'frobnicate'/],
  ])(
    'bad usage %j exits non-zero with a clear message',
    async (args, message) => {
      const r = run(args);
      const code = await r.exit;
      expect({ code, stderr: r.stderr() }).toMatchObject({ code: 2, stderr: expect.stringMatching(message) });
    },
    CLI_TEST_TIMEOUT_MS,
  );

  test('--help prints the usage and exits 0', async () => {
    const r = run(['broker', '--help']);
    expect(await r.exit).toBe(0);
    expect(r.stdout()).toContain('--store DIR');
  });
});
