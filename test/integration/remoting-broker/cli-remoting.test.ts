/**
 * `rocketmq-ts broker --remoting-port N` from the compiled package: the listener is announced, answers
 * a RocketMQ client's name-server query with its own address, and goes away on SIGTERM.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const cli = path.join(root, 'dist', 'cli.js');

test('rocketmq-ts broker --remoting-port 0 serves RocketMQ remoting and stops on SIGTERM', async () => {
  const store = tempStorePath('rmq-cli-remoting-');
  const child = spawn(process.execPath, [cli, 'broker', '--store', store, '--port', '0', '--remoting-port', '0'], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    const deadline = Date.now() + 40_000;
    let address: string | undefined;
    while (!(address = /remoting listening on (\S+)/.exec(out)?.[1])) {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`no remoting line: ${out} ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
    const c = await RemotingTestClient.connect(address);
    const cluster = await c.request(106, null);
    expect(cluster.code).toBe(ResponseCode.SUCCESS);
    expect(String(cluster.body)).toContain(`{0:"${address}"}`);
    const route = await c.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TBW102' });
    expect(route.code).toBe(ResponseCode.SUCCESS);
    child.kill('SIGTERM');
    expect(await exit).toBe(0);
    await c.closed;
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(store, { recursive: true, force: true });
  }
}, 60_000);
