/**
 * Long polling over real HTTP (RocketMQ's PullRequestHoldService).
 */
import { decodeMessages } from '../../../src/common/codec/index.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;

beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

const held = (): number => f.broker.pullRequestHoldService.size;

type PullArgs = Parameters<BrokerFixture['client']['pull']>[0];

/**
 * A suspended pull (offset 1, 20 s suspend, a new group unless given) and whether it has settled yet.
 */
function heldPull(topic: string, extra: Partial<PullArgs> = {}, signal?: AbortSignal) {
  let settled = false;
  const pending = f.client
    .pull(
      { group: uniqueName('g'), topic, offset: 1, suspend: true, suspendTimeoutMillis: 20_000, ...extra },
      { signal },
    )
    .finally(() => {
      settled = true;
    });
  return { pending, settled: () => settled };
}

describe('long polling', () => {
  test('RocketMQ: a suspended pull wakes on arrival, at once', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'first');
    const { pending } = heldPull(topic);
    await waitFor(() => held() === 1);
    const sentAt = Date.now();
    expect((await f.client.send(topic, 'second')).code).toBe(ResponseCode.SUCCESS);
    const r = await pending;
    // Woken by the arrival: the periodic check (5 s) or the timeout (20 s) would take far longer. The
    // bound leaves room for a busy machine, where the send and the answer themselves can take a second.
    expect(Date.now() - sentAt).toBeLessThan(2500);
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(decodeMessages(r.body).map((m) => m.body?.toString())).toEqual(['second']);
    expect(held()).toBe(0);
  });

  test('a pull at offset 0 of an empty queue is held too (NO_MESSAGE_IN_QUEUE at 0 is PULL_NOT_FOUND)', async () => {
    const topic = uniqueName('T');
    await f.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 1, writeQueueNums: 1, perm: 6 });
    const { pending } = heldPull(topic, { offset: 0 });
    await waitFor(() => held() >= 1);
    await f.client.send(topic, 'x');
    const r = await pending;
    expect(r.code).toBe(ResponseCode.SUCCESS);
  });

  test('RocketMQ: a message whose tag does not match does not wake the pull; a matching one does', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'zero', { tags: 'TagA' });
    const { pending, settled } = heldPull(topic, { subscription: 'TagA' });
    await waitFor(() => held() === 1);
    await f.client.send(topic, 'other', { tags: 'TagB' });
    // The arrival was announced synchronously with the send; a round trip later the pull is still held.
    await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 });
    expect(settled()).toBe(false);
    expect(held()).toBe(1);
    await f.client.send(topic, 'match', { tags: 'TagA' });
    const r = await pending;
    expect(r.code).toBe(ResponseCode.SUCCESS);
    expect(decodeMessages(r.body).map((m) => m.body?.toString())).toEqual(['match']);
  });

  test('a SQL92 pull is woken only by a message whose properties match', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'zero');
    const { pending, settled } = heldPull(topic, { subscription: 'n > 5', expressionType: 'SQL92' });
    await waitFor(() => held() === 1);
    await f.client.send(topic, 'small', { properties: { n: '1' } });
    await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 });
    expect(settled()).toBe(false);
    await f.client.send(topic, 'big', { properties: { n: '9' } });
    const r = await pending;
    expect(decodeMessages(r.body).map((m) => m.body?.toString())).toEqual(['big']);
  });

  test('timed out: PULL_NOT_FOUND after the suspend timeout', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'only');
    const start = Date.now();
    const r = await f.client.pull({
      group: uniqueName('g'),
      topic,
      offset: 1,
      suspend: true,
      suspendTimeoutMillis: 300,
    });
    const took = Date.now() - start;
    expect(r.code).toBe(ResponseCode.PULL_NOT_FOUND);
    expect(r.remark).toBe('OFFSET_OVERFLOW_ONE');
    expect(took).toBeGreaterThanOrEqual(280);
    expect(took).toBeLessThan(3000);
  });

  test('timed out after only non-matching arrivals: the re-run answers PULL_RETRY_IMMEDIATELY past them', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'zero', { tags: 'TagA' });
    const { pending } = heldPull(topic, { subscription: 'TagA', suspendTimeoutMillis: 400 });
    await waitFor(() => held() === 1);
    await f.client.send(topic, 'b1', { tags: 'TagB' });
    await f.client.send(topic, 'b2', { tags: 'TagB' });
    const r = await pending;
    expect(r.code).toBe(ResponseCode.PULL_RETRY_IMMEDIATELY);
    expect(r.header.nextBeginOffset).toBe(3);
  });

  test('without the SUSPEND flag PULL_NOT_FOUND is answered at once', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'only');
    const r = await f.client.pull({
      group: uniqueName('g'),
      topic,
      offset: 1,
      suspend: false,
      suspendTimeoutMillis: 20_000,
    });
    expect(r.code).toBe(ResponseCode.PULL_NOT_FOUND);
    expect(held()).toBe(0);
  });

  test('a client that goes away: its held pull is dropped without error and the broker keeps serving', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'only');
    const ac = new AbortController();
    const { pending } = heldPull(topic, {}, ac.signal);
    await waitFor(() => held() === 1);
    ac.abort();
    await expect(pending).rejects.toThrow();
    await waitFor(() => held() === 0);
    expect((await f.client.send(topic, 'after')).code).toBe(ResponseCode.SUCCESS);
    const r = await f.client.pull({ group: uniqueName('g'), topic, offset: 1 });
    expect(decodeMessages(r.body).map((m) => m.body?.toString())).toEqual(['after']);
  });

  test('held pulls do not block other calls; many held pulls on one queue all wake', async () => {
    const topic = uniqueName('T');
    await f.client.send(topic, 'zero');
    const pulls = Array.from({ length: 5 }, () => heldPull(topic).pending);
    await waitFor(() => held() === 5);
    expect((await f.client.call('GET_MAX_OFFSET', { topic, queueId: 0 })).header.offset).toBe(1);
    await f.client.send(topic, 'one');
    const answers = await Promise.all(pulls);
    expect(answers.every((a) => a.code === ResponseCode.SUCCESS)).toBe(true);
  });

  test('commit-on-pull happens once, not again when the held pull wakes', async () => {
    const topic = uniqueName('T');
    const group = uniqueName('g');
    await f.client.send(topic, 'zero');
    const { pending } = heldPull(topic, { group, commitOffset: 1 });
    await waitFor(() => held() === 1);
    expect(f.broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(1);
    // Another client moves the offset meanwhile; the wake-up must not write the old value back.
    await f.client.call('UPDATE_CONSUMER_OFFSET', { consumerGroup: group, topic, queueId: 0, commitOffset: 2 });
    await f.client.send(topic, 'one');
    await pending;
    expect(f.broker.consumerOffsetManager.queryOffset(group, topic, 0)).toBe(2);
  });
});

describe('short polling and shutdown', () => {
  test('with long polling disabled a pull is held for shortPollingTimeMills, not its suspend timeout', async () => {
    const g = await startBroker({ longPollingEnable: false, shortPollingTimeMills: 300 });
    try {
      const topic = uniqueName('T');
      await g.client.send(topic, 'zero');
      const start = Date.now();
      const r = await g.client.pull({
        group: uniqueName('g'),
        topic,
        offset: 1,
        suspend: true,
        suspendTimeoutMillis: 20_000,
      });
      expect(r.code).toBe(ResponseCode.PULL_NOT_FOUND);
      expect(Date.now() - start).toBeGreaterThanOrEqual(250);
      expect(Date.now() - start).toBeLessThan(5000);
    } finally {
      await g.close();
    }
  });

  test('shutdown answers every held pull', async () => {
    const g = await startBroker();
    const topic = uniqueName('T');
    await g.client.send(topic, 'zero');
    const pending = g.client.pull({
      group: uniqueName('g'),
      topic,
      offset: 1,
      suspend: true,
      suspendTimeoutMillis: 60_000,
    });
    await waitFor(() => g.broker.pullRequestHoldService.size === 1);
    const closing = g.close();
    const r = await pending;
    expect(r.code).toBe(ResponseCode.PULL_NOT_FOUND);
    await closing;
  });
});
