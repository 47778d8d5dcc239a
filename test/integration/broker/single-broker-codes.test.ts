/**
 * The RocketMQ 4.9.8 request codes that only make sense in a cluster (a slave's sync, a broker's
 * registration with a name server, the name server's data-version check) are answered
 * REQUEST_CODE_NOT_SUPPORTED with a remark naming the code and why, over remoting and HTTP; any other
 * unknown code keeps RocketMQ's generic remark.
 */
import { ResponseCode } from '../../../src/protocol/response-code.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

const CLUSTER_ONLY: ReadonlyArray<readonly [number, string]> = [
  [43, 'GET_ALL_CONSUMER_OFFSET'],
  [45, 'GET_ALL_DELAY_OFFSET'],
  [103, 'REGISTER_BROKER'],
  [104, 'UNREGISTER_BROKER'],
  [322, 'QUERY_DATA_VERSION'],
];

describe('cluster-only request codes on a single broker', () => {
  let fx: BrokerFixture;
  let client: RemotingTestClient;

  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0 });
    client = await RemotingTestClient.connect(fx.broker.remotingAddress as string);
  });
  afterAll(async () => {
    await client?.close();
    await fx?.close();
  });

  test.each(CLUSTER_ONLY)(
    'code %i over remoting: REQUEST_CODE_NOT_SUPPORTED naming %s and a reason',
    async (code, name) => {
      const r = await client.request(code, {});
      expect(r.code).toBe(ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
      expect(r.remark).toMatch(new RegExp(`^${name} \\(code ${code}\\) is not supported on a single broker: \\S.*`));
    },
  );

  test('over HTTP, by number and by name, the same remark', async () => {
    const byCode = await fx.client.call(103, {});
    expect([byCode.code, byCode.remark]).toEqual([
      ResponseCode.REQUEST_CODE_NOT_SUPPORTED,
      expect.stringMatching(/^REGISTER_BROKER \(code 103\) is not supported on a single broker: /),
    ]);
    const byName = await fx.client.call('QUERY_DATA_VERSION', {});
    expect(byName.code).toBe(ResponseCode.REQUEST_CODE_NOT_SUPPORTED);
    expect(byName.remark).toMatch(/^QUERY_DATA_VERSION \(code 322\) is not supported on a single broker: /);
  });

  test('another unknown code keeps the generic remark', async () => {
    const r = await client.request(4243, {});
    expect([r.code, r.remark]).toEqual([ResponseCode.REQUEST_CODE_NOT_SUPPORTED, ' request type 4243 not supported']);
  });
});
