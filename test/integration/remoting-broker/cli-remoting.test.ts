/**
 * `rocketmq-ts broker --remoting-port N` from the compiled package: the listener is announced, answers
 * a RocketMQ client's name-server query with its own address, and goes away on SIGTERM.
 */
import { rmSync } from 'node:fs';
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import { CLI_TEST_TIMEOUT_MS, runCli } from '../../support/cli-process.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

test(
  'rocketmq-ts broker --remoting-port 0 serves RocketMQ remoting and stops on SIGTERM',
  async () => {
    const store = tempStorePath('rmq-cli-remoting-');
    const r = runCli(['broker', '--store', store, '--port', '0', '--remoting-port', '0']);
    try {
      const address = await r.waitFor(/remoting listening on (\S+)/);
      expect(address).toMatch(/^127\.0\.0\.1:\d+$/);
      const c = await RemotingTestClient.connect(address);
      const cluster = await c.request(106, null);
      expect(cluster.code).toBe(ResponseCode.SUCCESS);
      expect(String(cluster.body)).toContain(`{0:"${address}"}`);
      const route = await c.request(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic: 'TBW102' });
      expect(route.code).toBe(ResponseCode.SUCCESS);
      r.child.kill('SIGTERM');
      expect(await r.exit).toBe(0);
      await c.closed;
    } finally {
      if (r.child.exitCode === null) r.child.kill('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    }
  },
  CLI_TEST_TIMEOUT_MS,
);
