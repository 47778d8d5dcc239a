import { releaseOrderlyQueue } from '../../../../../src/client/consumer/push/rebalance-push-impl.js';
import { ProcessQueue } from '../../../../../src/client/consumer/process-queue.js';
import type { MQClientInstance } from '../../../../../src/client/instance/mq-client-instance.js';
import type { OffsetStore } from '../../../../../src/client/consumer/offset-store.js';
import type { PushConsumerHost, PushConsumerRun } from '../../../../../src/client/consumer/push/push-consumer-run.js';
import type { MessageQueue } from '../../../../../src/common/message.js';
import { silentLogger } from '../../../../../src/common/logger.js';

const LOCK_MAX_LIVE_MS = 30_000;

/**
 * An idle orderly queue being given up by rebalance (fakes): what is written, removed and unlocked.
 * `stored`: whether the broker takes the final offset; `lockAgeMs`: how long since the lock was confirmed;
 * `relocked`: whether the broker grants the lock again when asked.
 */
async function release(o: { stored: boolean; lockAgeMs: number; relocked?: boolean }) {
  const now = 5_000_000;
  const steps: string[] = [];
  const mq: MessageQueue = { topic: 'T', brokerName: 'b', queueId: 3 };
  const pq = new ProcessQueue(now);
  pq.locked = true;
  pq.lastLockTimestamp = now - o.lockAgeMs;
  pq.pullInFlight = { abort: new AbortController(), call: Promise.resolve().then(() => steps.push('pull settled')) };
  const host = {
    options: { clock: { now: () => now }, rebalanceLockMaxLiveTimeMs: LOCK_MAX_LIVE_MS },
    logger: silentLogger,
    isRunning: () => true,
  } as unknown as PushConsumerHost;
  const offsetStore = {
    flush: async () => (steps.push('flushed'), o.stored),
    removeOffset: () => steps.push('offset removed'),
  } as unknown as OffsetStore;
  const orderly = {
    service: { waitIdle: async () => true },
    locker: {
      lock: async (m: MessageQueue) => (steps.push(`lock ${m.queueId}`), o.relocked ?? false),
      unlockBatch: async (mqs: MessageQueue[]) => steps.push(`unlocked ${mqs.map((m) => m.queueId).join()}`),
    },
  } as unknown as NonNullable<PushConsumerRun['orderly']>;
  const removed = await releaseOrderlyQueue(host, {} as MQClientInstance, offsetStore, orderly, mq, pq);
  return { removed, steps };
}

describe('releaseOrderlyQueue (an orderly queue given up by rebalance)', () => {
  it('settles the pull, writes the offset, then forgets it and unlocks', async () => {
    expect(await release({ stored: true, lockAgeMs: 1000 })).toEqual({
      removed: true,
      steps: ['pull settled', 'flushed', 'offset removed', 'unlocked 3'],
    });
  });

  it('keeps the queue, its offset and its lock when the broker did not take the offset', async () => {
    // The next owner would read the older offset and consume again what this member consumed.
    expect(await release({ stored: false, lockAgeMs: 1000 })).toEqual({
      removed: false,
      steps: ['pull settled', 'flushed'],
    });
  });

  it('locks a queue again when its lock can no longer be counted on, then writes and unlocks', async () => {
    expect(await release({ stored: true, lockAgeMs: LOCK_MAX_LIVE_MS + 1, relocked: true })).toEqual({
      removed: true,
      steps: ['pull settled', 'lock 3', 'flushed', 'offset removed', 'unlocked 3'],
    });
  });

  it('gives the queue up without writing once another member holds it', async () => {
    // An older offset must not overwrite the other member's progress.
    expect(await release({ stored: true, lockAgeMs: LOCK_MAX_LIVE_MS + 1, relocked: false })).toEqual({
      removed: true,
      steps: ['pull settled', 'lock 3', 'offset removed'],
    });
  });
});
