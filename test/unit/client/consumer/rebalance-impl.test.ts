import { AllocateMessageQueueAveragely } from '../../../../src/client/consumer/allocate-message-queue.js';
import { MessageModel } from '../../../../src/client/consumer/consumer-constants.js';
import { PULL_MAX_IDLE_TIME_MS } from '../../../../src/client/consumer/process-queue.js';
import type { PullRequest } from '../../../../src/client/consumer/pull-request.js';
import {
  FIRST_PULL_DELAY_MS,
  RebalanceImpl,
  type RebalanceHost,
} from '../../../../src/client/consumer/rebalance-impl.js';
import { silentLogger } from '../../../../src/common/logger.js';
import type { MessageQueue } from '../../../../src/common/message.js';
import { ManualClock } from '../../../support/manual-clock.js';
import { mqOf } from '../helpers.js';

function setup(opts: { cids: string[]; me: string; queues: MessageQueue[]; model?: MessageModel; topics?: string[] }) {
  const clock = new ManualClock();
  const log: string[] = [];
  const dispatched: { requests: PullRequest[]; delayMs: number }[] = [];
  const changes: { topic: string; added: MessageQueue[]; removed: MessageQueue[] }[] = [];
  const state = { ...opts, failOffsetFor: new Set<number>() };
  const host: RebalanceHost = {
    consumerGroup: 'g',
    messageModel: opts.model ?? MessageModel.CLUSTERING,
    clientId: opts.me,
    strategy: new AllocateMessageQueueAveragely(),
    subscribedTopics: () => state.topics ?? ['T'],
    topicSubscribeInfo: (t) => state.queues.filter((q) => q.topic === t),
    findConsumerIdList: async () => state.cids,
    computePullFromWhere: async (mq) => {
      if (state.failOffsetFor.has(mq.queueId)) throw new Error('offset read failed');
      return mq.queueId * 10;
    },
    removeUnnecessaryMessageQueue: async (mq) => {
      log.push(`persist+remove ${mq.queueId}`);
      return true;
    },
    removeDirtyOffset: (mq) => log.push(`dirty ${mq.queueId}`),
    dispatchPullRequest: (requests, delayMs) => dispatched.push({ requests, delayMs }),
    messageQueueChanged: (topic, _all, _div, change) => changes.push({ topic, ...change }),
  };
  const impl = new RebalanceImpl(host, clock, silentLogger);
  return { impl, clock, log, dispatched, changes, state };
}

const ids = (qs: readonly MessageQueue[]): number[] => qs.map((q) => q.queueId).sort((a, b) => a - b);
const eight = Array.from({ length: 8 }, (_, i) => mqOf(i));

describe('RebalanceImpl (RocketMQ: rebalanceByTopic + updateProcessQueueTableInRebalance)', () => {
  it('sorts queues and client ids before allocating, so members agree', async () => {
    const shuffled = [eight[5], eight[1], eight[7], eight[0], eight[3], eight[2], eight[6], eight[4]] as MessageQueue[];
    const a = setup({ cids: ['c', 'a', 'b'], me: 'a', queues: shuffled });
    const b = setup({ cids: ['b', 'c', 'a'], me: 'b', queues: eight });
    const c = setup({ cids: ['a', 'b', 'c'], me: 'c', queues: shuffled });
    for (const s of [a, b, c]) await expect(s.impl.doRebalance()).resolves.toBe(true);
    expect(ids(a.impl.allocatedQueues())).toEqual([0, 1, 2]);
    expect(ids(b.impl.allocatedQueues())).toEqual([3, 4, 5]);
    expect(ids(c.impl.allocatedQueues())).toEqual([6, 7]);
  });

  it('an added queue gets its start offset and a PullRequest dispatched after 500 ms', async () => {
    const s = setup({ cids: ['a'], me: 'a', queues: eight.slice(0, 2) });
    await s.impl.doRebalance();
    expect(s.dispatched).toHaveLength(1);
    expect(s.dispatched[0]?.delayMs).toBe(FIRST_PULL_DELAY_MS);
    expect(s.dispatched[0]?.requests.map((r) => [r.messageQueue.queueId, r.nextOffset])).toEqual([
      [0, 0],
      [1, 10],
    ]);
    expect(s.log).toEqual(['dirty 0', 'dirty 1']);
    expect(s.changes).toEqual([{ topic: 'T', added: eight.slice(0, 2), removed: [] }]);
  });

  it('a removed queue is dropped, its offset persisted, and it leaves the table', async () => {
    const s = setup({ cids: ['a'], me: 'a', queues: eight.slice(0, 4) });
    await s.impl.doRebalance();
    const pqs = [...s.impl.processQueueTable.values()].map((e) => e.pq);
    s.state.cids = ['a', 'b'];
    await s.impl.doRebalance();
    expect(ids(s.impl.allocatedQueues())).toEqual([0, 1]);
    expect(pqs.map((p) => p.dropped)).toEqual([false, false, true, true]);
    expect(s.log.filter((l) => l.startsWith('persist'))).toEqual(['persist+remove 2', 'persist+remove 3']);
    expect(s.changes[1]).toEqual({ topic: 'T', added: [], removed: [eight[2], eight[3]] });
  });

  it('a queue whose start offset cannot be read is skipped and the topic is unbalanced', async () => {
    const s = setup({ cids: ['a'], me: 'a', queues: eight.slice(0, 3) });
    s.state.failOffsetFor.add(1);
    await expect(s.impl.doRebalance()).resolves.toBe(false);
    expect(ids(s.impl.allocatedQueues())).toEqual([0, 2]);
    s.state.failOffsetFor.clear();
    await expect(s.impl.doRebalance()).resolves.toBe(true);
    expect(ids(s.impl.allocatedQueues())).toEqual([0, 1, 2]);
  });

  it('RocketMQ: a queue not pulled for 120 s is dropped and re-created', async () => {
    const s = setup({ cids: ['a'], me: 'a', queues: eight.slice(0, 1) });
    await s.impl.doRebalance();
    const before = [...s.impl.processQueueTable.values()][0]?.pq;
    s.clock.advance(PULL_MAX_IDLE_TIME_MS + 1);
    await s.impl.doRebalance();
    const after = [...s.impl.processQueueTable.values()][0]?.pq;
    expect(before?.dropped).toBe(true);
    expect(after).not.toBe(before);
    expect(after?.dropped).toBe(false);
  });

  it('an unknown client id gets nothing (and counts as unbalanced, to retry soon); no consumer ids means unbalanced', async () => {
    const s = setup({ cids: ['x'], me: 'a', queues: eight });
    await expect(s.impl.doRebalance()).resolves.toBe(false);
    expect(s.impl.allocatedQueues()).toEqual([]);
    s.state.cids = [];
    await expect(s.impl.doRebalance()).resolves.toBe(false);
  });

  it('BROADCASTING takes every queue without asking for the consumer list', async () => {
    const s = setup({ cids: [], me: 'a', queues: eight, model: MessageModel.BROADCASTING });
    await expect(s.impl.doRebalance()).resolves.toBe(true);
    expect(ids(s.impl.allocatedQueues())).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });

  it('queues of a topic no longer subscribed are dropped', async () => {
    const s = setup({ cids: ['a'], me: 'a', queues: [mqOf(0, 'T'), mqOf(0, 'U')], topics: ['T', 'U'] });
    await s.impl.doRebalance();
    expect(s.impl.allocatedQueues()).toHaveLength(2);
    s.state.topics = ['T'];
    await s.impl.doRebalance();
    expect(s.impl.allocatedQueues()).toEqual([mqOf(0, 'T')]);
  });

  it('overlapping calls never run two rebalances at once', async () => {
    const s = setup({ cids: ['a'], me: 'a', queues: eight });
    const p1 = s.impl.doRebalance();
    const p2 = s.impl.doRebalance();
    await Promise.all([p1, p2]);
    expect(s.dispatched).toHaveLength(1);
    expect(s.impl.allocatedQueues()).toHaveLength(8);
  });
});
