import {
  ConsumeRequestCache,
  type ConsumeRequest,
  type LiteQueue,
} from '../../../../../src/client/consumer/lite/lite-pull-cache.js';
import {
  LitePullBatchIterator,
  LitePullMessageIterator,
  type LitePullSource,
} from '../../../../../src/client/consumer/lite/lite-pull-iterator.js';
import { resolveLitePullConsumerOptions } from '../../../../../src/client/consumer/lite/lite-pull-consumer-options.js';
import { InvalidArgumentError } from '../../../../../src/common/errors.js';
import { ProcessQueue } from '../../../../../src/client/consumer/process-queue.js';
import { createPullRequest } from '../../../../../src/client/consumer/pull-request.js';
import { ManualClock } from '../../../../support/manual-clock.js';
import { msgAt } from '../../helpers.js';

function liteQueue(queueId = 0): LiteQueue {
  const mq = { topic: 'T', brokerName: 'b', queueId };
  const pq = new ProcessQueue(0);
  return {
    mq,
    key: `T@b@${queueId}`,
    pq,
    request: createPullRequest('g', mq, pq, 0),
    consumeOffset: -1,
    parked: undefined,
  };
}

function request(q: LiteQueue, offsets: number[]): ConsumeRequest {
  const messages = offsets.map((o) => msgAt(o));
  q.pq.putMessage(messages);
  return { queue: q, request: q.request, messages };
}

/** A source over a cache: markConsumed moves the queue's consume offset as the consumer does. */
function sourceOver(cache: ConsumeRequestCache, running = { value: true }): LitePullSource {
  return {
    take: async () => cache.take(() => true) ?? null,
    isRunning: () => running.value,
    markConsumed: (r, from, to) => {
      const off = r.queue.pq.removeMessage(r.messages.slice(from, to), 0);
      if (off >= 0) r.queue.consumeOffset = off;
    },
    giveBack: (r, from) => cache.unshift({ ...r, messages: r.messages.slice(from) }),
  };
}

describe('ConsumeRequestCache', () => {
  it('hands requests out in arrival order, skips paused queues, drops stale ones', () => {
    const cache = new ConsumeRequestCache();
    const a = liteQueue(0);
    const b = liteQueue(1);
    cache.push(request(a, [0, 1]));
    cache.push(request(b, [0]));
    cache.push(request(a, [2]));
    expect(cache.messageCount).toBe(4);
    expect(cache.take((q) => q !== a)?.messages.map((m) => m.queueOffset)).toEqual([0]);
    // A seek replaces the queue's request: what was buffered before it is stale.
    a.request = createPullRequest('g', a.mq, a.pq, 10);
    expect(cache.take(() => true)).toBeUndefined();
    expect(cache.messageCount).toBe(0);
  });

  it('wait resolves on push, on timeout and on abort', async () => {
    const clock = new ManualClock();
    const cache = new ConsumeRequestCache();
    const woke = cache.wait(10_000, clock);
    cache.push(request(liteQueue(), [0]));
    await woke;
    const timedOut = cache.wait(100, clock);
    clock.advance(100);
    await timedOut;
    const ac = new AbortController();
    const aborted = cache.wait(10_000, clock, ac.signal);
    ac.abort();
    await aborted;
    // Every wait cleared its timer.
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('LitePullMessageIterator: the commit point', () => {
  it('marks a batch consumed once its last body finished', async () => {
    const cache = new ConsumeRequestCache();
    const q = liteQueue();
    cache.push(request(q, [0, 1, 2]));
    cache.push(request(q, [3, 4]));
    const it = new LitePullMessageIterator(sourceOver(cache), undefined);
    const seen: number[] = [];
    for (let i = 0; i < 4; i++) seen.push(((await it.next()).value as { queueOffset: number }).queueOffset);
    expect(seen).toEqual([0, 1, 2, 3]);
    // The first batch is done (its last body finished when message 3 was asked for).
    expect(q.consumeOffset).toBe(3);
  });

  it('break (return) leaves the message being processed and the rest of its batch for the next reader', async () => {
    const cache = new ConsumeRequestCache();
    const q = liteQueue();
    cache.push(request(q, [0, 1, 2, 3]));
    const it = new LitePullMessageIterator(sourceOver(cache), undefined);
    await it.next(); // 0
    await it.next(); // 1: the body of 0 finished
    await it.return(); // break while processing 1
    expect(q.consumeOffset).toBe(1);
    expect(cache.take(() => true)?.messages.map((m) => m.queueOffset)).toEqual([1, 2, 3]);
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it('an aborted signal ends the loop after the body that just finished', async () => {
    const cache = new ConsumeRequestCache();
    const q = liteQueue();
    cache.push(request(q, [0, 1, 2]));
    const ac = new AbortController();
    const it = new LitePullMessageIterator(sourceOver(cache), ac.signal);
    await it.next(); // 0
    ac.abort();
    expect((await it.next()).done).toBe(true); // the body of 0 finished
    expect(q.consumeOffset).toBe(1);
    expect(cache.take(() => true)?.messages.map((m) => m.queueOffset)).toEqual([1, 2]);
  });

  it('ends when the consumer stops running', async () => {
    const cache = new ConsumeRequestCache();
    const running = { value: true };
    const it = new LitePullMessageIterator(sourceOver(cache, running), undefined);
    running.value = false;
    expect((await it.next()).done).toBe(true);
  });
});

describe('LitePullBatchIterator', () => {
  it('a batch is consumed whole when the next is asked for, and not at all on break', async () => {
    const cache = new ConsumeRequestCache();
    const q = liteQueue();
    cache.push(request(q, [0, 1]));
    cache.push(request(q, [2, 3]));
    const it = new LitePullBatchIterator(sourceOver(cache), undefined);
    expect((await it.next()).value?.map((m) => m.queueOffset)).toEqual([0, 1]);
    expect(q.consumeOffset).toBe(-1);
    expect((await it.next()).value?.map((m) => m.queueOffset)).toEqual([2, 3]);
    expect(q.consumeOffset).toBe(2);
    await it.return();
    expect(q.consumeOffset).toBe(2);
    expect(cache.take(() => true)?.messages.map((m) => m.queueOffset)).toEqual([2, 3]);
  });
});

describe('LitePullConsumer options', () => {
  it("RocketMQ's defaults: pullBatchSize 10, autoCommit every 5 s, pullThresholdForAll 10000", () => {
    const o = resolveLitePullConsumerOptions({ endpoints: 'http://127.0.0.1:1', consumerGroup: 'g' });
    expect(o).toMatchObject({
      pullBatchSize: 10,
      autoCommit: true,
      autoCommitIntervalMs: 5000,
      pullThresholdForAll: 10_000,
      pullThresholdForQueue: 1000,
      pullThresholdSizeForQueueMiB: 100,
      consumeMaxSpan: 2000,
      pollTimeoutMs: 5000,
      brokerSuspendMaxTimeMs: 20_000,
      consumerTimeoutMsWhenSuspend: 30_000,
      consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
    });
  });

  it.each([
    [{ autoCommitIntervalMs: 999 }, 'autoCommitIntervalMs'],
    [{ pullBatchSize: 0 }, 'pullBatchSize'],
    [{ consumerGroup: 'DEFAULT_CONSUMER' }, 'consumerGroup'],
    [{ brokerSuspendMaxTimeMs: 40_000 }, 'consumerTimeoutMsWhenSuspend'],
  ])('%j is refused naming %s', (bad, field) => {
    let err: unknown;
    try {
      resolveLitePullConsumerOptions({ endpoints: 'http://127.0.0.1:1', consumerGroup: 'g', ...bad });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe(field);
  });
});
