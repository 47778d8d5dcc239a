/**
 * A send the broker's ACL refuses is not tried again on another broker: RocketMQ's producer retries
 * after SYSTEM_ERROR, the code a 4.x broker answers its AclException with, but the same account is
 * refused by every broker of the cluster, so the caller gets the typed refusal at once.
 */
import { Producer, AclAccessDeniedError } from '../../../../src/index.js';
import { RequestCode } from '../../../../src/protocol/index.js';
import { MQClientInstance } from '../../../../src/client/instance/mq-client-instance.js';
import { ManualClock } from '../../../support/manual-clock.js';
import { FakeRemotingClient, json, ok, routeOf } from '../core-fakes.js';

test('an ACL refusal of a send is not retried on another broker', async () => {
  const route = routeOf({ 'broker-a': 'http://a:1', 'broker-b': 'http://b:1' }, 2);
  const fake = new FakeRemotingClient((addr, r) => {
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) return ok({}, json(route));
    throw new AclAccessDeniedError(
      'refused',
      addr,
      {
        accessKey: 'subUser',
        resource: 'topic:T',
        adminRequestCode: undefined,
        reason: 'No default permission for topic:T',
      },
      { responseCode: 1 },
    );
  });
  const p = new Producer({
    endpoints: 'http://ep:1',
    instanceName: 'acl-refusal',
    clientIP: '10.1.1.1',
    clock: new ManualClock(),
  });
  const holder = MQClientInstance.acquire(p.options, fake);
  try {
    await p.start();
    const err = await p.send({ topic: 'T', body: Buffer.from('x') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AclAccessDeniedError);
    expect(fake.callsOf(RequestCode.SEND_MESSAGE)).toHaveLength(1);
  } finally {
    await p.shutdown();
    await holder.release();
  }
});
