/**
 * A held pull whose suspendTimeoutMillis is past what a timer can hold (2^31 - 1 ms) is held for the
 * capped time, not answered at once (which would make the client busy-poll).
 */
import { ResponseCode } from '../../../src/protocol/index.js';
import { MAX_SUSPEND_TIMEOUT_MS } from '../../../src/broker/processors/pull-message.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;
beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

test('a huge suspendTimeoutMillis is capped, and the pull stays held until a message arrives', async () => {
  const topic = uniqueName('T');
  await f.client.send(topic, 'first');
  let settled = false;
  const pending = f.client
    .pull({ group: uniqueName('g'), topic, offset: 1, suspend: true, suspendTimeoutMillis: 2 ** 31 + 10 })
    .finally(() => (settled = true));
  await waitFor(() => f.broker.pullRequestHoldService.size === 1);
  // Several round trips later the pull is still held: its timer did not fire at once.
  for (let i = 0; i < 5; i++) await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 });
  expect(settled).toBe(false);
  expect(MAX_SUSPEND_TIMEOUT_MS).toBeLessThan(2 ** 31 - 1);
  await f.client.send(topic, 'second');
  expect((await pending).code).toBe(ResponseCode.SUCCESS);
});
