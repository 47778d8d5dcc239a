import { shutdownRun } from '../../../../../src/client/consumer/push/push-consumer-shutdown.js';
import type { PushConsumerRun } from '../../../../../src/client/consumer/push/push-consumer-run.js';
import type { MessageQueue } from '../../../../../src/common/message.js';
import { silentLogger } from '../../../../../src/common/logger.js';

/**
 * An orderly run with two queues whose listener calls are still running when shutdown stops waiting
 * for them (`unfinished`). The call on `late` ends while the offsets are being written, as a call that
 * outlasts the shutdown deadline by a little does; `stuck` keeps running.
 */
function orderlyRun(opts: { idle?: number[]; unstored?: number[]; flushThrows?: boolean } = {}) {
  const mq = (queueId: number): MessageQueue => ({ topic: 'T', brokerName: 'b', queueId });
  const done = mq(0);
  const late = mq(1);
  const stuck = mq(2);
  const consuming = new Set([late.queueId, stuck.queueId].filter((q) => !opts.idle?.includes(q)));
  const steps: string[] = [];
  const entry = (m: MessageQueue) => ({ mq: m, pq: { queueId: m.queueId, settlePull: async () => undefined } });
  const table = new Map([done, late, stuck].map((m) => [`${m.queueId}`, entry(m)]));
  const run = {
    pulls: { shutdown: async () => steps.push('pulls stopped') },
    consume: { shutdown: async () => ({ unfinished: 2, droppedRequests: 0 }) },
    rebalance: { idle: async () => undefined, processQueueTable: table, dropAll: () => steps.push('dropped') },
    offsetStore: {
      flushAll: async (mqs: MessageQueue[]) => {
        steps.push(`flushed ${mqs.map((m) => m.queueId).join(',')}`);
        consuming.delete(late.queueId); // the late call ends now: its offset moves after this write
        if (opts.flushThrows) throw new Error('offset file not writable');
        return mqs.filter((m) => opts.unstored?.includes(m.queueId));
      },
    },
    orderly: {
      service: { isConsuming: (pq: { queueId: number }) => consuming.has(pq.queueId) },
      locker: {
        unlockBatch: async (mqs: MessageQueue[]) => steps.push(`unlocked ${mqs.map((m) => m.queueId).join(',')}`),
      },
    },
    instance: {
      events: { off: () => undefined },
      unregisterConsumer: async () => steps.push('unregistered'),
      release: async () => steps.push('released'),
    },
  };
  return { run: run as unknown as PushConsumerRun, steps };
}

const shutdown = (run: PushConsumerRun) =>
  shutdownRun(run, {
    deadline: 0,
    consumerGroup: 'g',
    logger: silentLogger,
    pullAbort: new AbortController(),
    onRouteChanged: () => undefined,
  });

test('orderly shutdown: only queues idle before the offsets are written are unlocked, after the write', async () => {
  const { run, steps } = orderlyRun();
  const report = await shutdown(run);
  // Queue 1's call ended during the write, so its persisted offset is behind what it consumed: it keeps
  // its lock (to expire on the broker) rather than being handed over as if it were done.
  expect(steps).toEqual(['pulls stopped', 'dropped', 'flushed 0,1,2', 'unlocked 0', 'unregistered', 'released']);
  expect(report).toMatchObject({ unfinishedListeners: 2, errors: [] });
});

test('orderly shutdown: a queue whose offset the store did not take keeps its lock', async () => {
  // Every queue is idle; the broker did not take queue 2's offset (a timed-out write).
  const { run, steps } = orderlyRun({ idle: [1, 2], unstored: [2] });
  await shutdown(run);
  expect(steps).toEqual(['pulls stopped', 'dropped', 'flushed 0,1,2', 'unlocked 0,1', 'unregistered', 'released']);
});

test('orderly shutdown: when the offsets could not be written at all, no queue is unlocked', async () => {
  const { run, steps } = orderlyRun({ idle: [1, 2], flushThrows: true });
  const report = await shutdown(run);
  expect(steps).toEqual(['pulls stopped', 'dropped', 'flushed 0,1,2', 'unlocked ', 'unregistered', 'released']);
  expect(report.errors).toMatchObject([{ step: 'persist offsets' }]);
});
