/**
 * RebalancePushImpl: what the push consumer plugs into RebalanceImpl — where a new queue
 * starts (computePullFromWhere), what happens to the offset of a removed queue, how pull requests are
 * dispatched, and messageQueueChanged (a new subVersion, the per-queue thresholds, a heartbeat and the
 * `rebalance` event).
 */
import type { MessageQueue } from '../../../common/message.js';
import { computePullFromWhere } from '../compute-pull-from-where.js';
import type { ConsumeFromWhere } from '../consumer-constants.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import { ReadOffsetType, type OffsetStore } from '../offset-store.js';
import type { PullMessageService } from '../pull-message-service.js';
import type { ConsumerRoutes } from '../consumer-routes.js';
import type { PushConsumerHost, PushConsumerRun } from './push-consumer-run.js';
import type { ProcessQueue } from '../process-queue.js';
import { MessageModel } from '../consumer-constants.js';
import { RebalanceImpl } from '../rebalance-impl.js';
import { waitAtMost } from './consume-core.js';

export function createRebalancePushImpl(
  host: PushConsumerHost,
  routes: ConsumerRoutes,
  instance: MQClientInstance,
  offsetStore: OffsetStore,
  pulls: PullMessageService,
): RebalanceImpl {
  const o = host.options;
  return new RebalanceImpl(
    {
      consumerGroup: o.consumerGroup,
      messageModel: o.messageModel,
      clientId: instance.clientId,
      strategy: o.allocateMessageQueueStrategy,
      subscribedTopics: () => [...host.subscriptions.keys()],
      topicSubscribeInfo: (topic) => routes.routeOf(topic),
      findConsumerIdList: (topic) =>
        routes.members(topic, o.consumerGroup, instance, host.run()?.startup?.settledMembers(topic)),
      computePullFromWhere: (mq) =>
        computePullFromWhere(mq, {
          consumeFromWhere: o.consumeFromWhere as ConsumeFromWhere,
          consumeTimestamp: o.consumeTimestamp,
          readOffsetFromStore: (q) => offsetStore.readOffset(q, ReadOffsetType.READ_FROM_STORE),
          maxOffset: async (q) =>
            instance.api.getMaxOffset((await instance.findBrokerAddressForQueue(q)).brokerAddr, q),
          searchOffset: async (q, ts) =>
            instance.api.searchOffset((await instance.findBrokerAddressForQueue(q)).brokerAddr, q, ts),
        }),
      removeUnnecessaryMessageQueue: async (mq, pq) => {
        const orderly = host.run()?.orderly;
        if (orderly?.locker) return releaseOrderlyQueue(host, instance, offsetStore, orderly, mq, pq);
        await handOverConcurrentQueue(host, offsetStore, mq, pq);
        return true;
      },
      ...(host.isOrderly() && o.messageModel === MessageModel.CLUSTERING
        ? { lockBatch: (mqs: readonly MessageQueue[]) => host.run()?.orderly?.locker?.lockBatch(mqs) ?? noLocks() }
        : {}),
      removeDirtyOffset: (mq) => offsetStore.removeOffset(mq),
      dispatchPullRequest: (requests, delayMs) => {
        const delay = host.run()?.startup?.firstPullDelay(delayMs) ?? delayMs;
        for (const r of requests) pulls.executePullRequestLater(r, delay);
      },
      messageQueueChanged: (topic, _mqAll, mqDivided, change) => messageQueueChanged(host, topic, mqDivided, change),
    },
    o.clock,
    host.logger,
  );
}

/** The longest a dropped concurrent queue waits for its running listener calls before it is handed over. */
export const CONCURRENT_HANDOVER_WAIT_MS = 1000;

/**
 * RocketMQ: RebalancePushImpl.removeUnnecessaryMessageQueue for concurrent consumption — the offset is
 * written, then forgotten. Before that, the listener calls still running for the queue are given up
 * to CONCURRENT_HANDOVER_WAIT_MS to end and its pull on the way is settled, so the offset written
 * covers what was consumed and an older offset carried by that pull cannot land after it: the next
 * owner, which starts from it, reads none of those messages again (RocketMQ writes at once, and what
 * was still being consumed comes twice). Messages pulled and not yet consumed are not consumed here.
 */
async function handOverConcurrentQueue(
  host: PushConsumerHost,
  offsetStore: OffsetStore,
  mq: MessageQueue,
  pq: ProcessQueue,
): Promise<void> {
  pq.handingOver = true;
  try {
    if (!(await waitAtMost(pq.whenListenersIdle(), CONCURRENT_HANDOVER_WAIT_MS, host.options.clock)))
      host.logger.info({ mq }, 'a dropped queue is still consuming: handed over, its running batches may come again');
  } finally {
    pq.handingOver = false;
  }
  await pq.settlePull();
  if (!(await offsetStore.flush(mq))) host.logger.warn({ mq }, 'the offset of a queue handed over was not written');
  offsetStore.removeOffset(mq);
}

/**
 * RocketMQ: RebalancePushImpl.removeUnnecessaryMessageQueue waits this long (tryLock of the queue's
 * consume lock) for a dropped orderly queue's running batch before it gives up unlocking it this round.
 */
export const ORDERLY_RELEASE_WAIT_MS = 1000;

const noLocks = (): Promise<Set<string>> => Promise.resolve(new Set());

/**
 * RocketMQ: RebalancePushImpl.removeUnnecessaryMessageQueue for orderly CLUSTERING — a dropped queue
 * is given up only when its running batch has ended: then its pull on the way (if any) is aborted and
 * awaited, its offset persisted and only then its broker lock released, so the next owner starts where
 * this one stopped and never overlaps it. When the batch is still running after ORDERLY_RELEASE_WAIT_MS
 * the queue stays (dropped) and a rebalance is asked for as soon as the batch ends.
 *
 * RocketMQ writes that offset oneway and unlocks regardless. Here the lock is released only once the
 * broker has the offset: when the write fails, the queue stays (dropped, still locked, its offset kept)
 * and the next rebalance writes it again. A queue whose lock this client can no longer count on (not
 * renewed for `rebalanceLockMaxLiveTimeMs`, as after a long last batch) is locked again first; when
 * another member holds it by then, it is given up without writing: an older offset must not overwrite
 * that member's progress.
 */
export async function releaseOrderlyQueue(
  host: PushConsumerHost,
  instance: MQClientInstance,
  offsetStore: OffsetStore,
  orderly: NonNullable<PushConsumerRun['orderly']>,
  mq: MessageQueue,
  pq: ProcessQueue,
): Promise<boolean> {
  if (!(await orderly.service.waitIdle(pq, ORDERLY_RELEASE_WAIT_MS))) {
    host.logger.info({ mq }, 'a dropped orderly queue is still consuming: released once its batch ends');
    void orderly.service.whenIdle(pq).then(() => {
      if (host.isRunning()) instance.rebalanceImmediately();
    });
    return false;
  }
  // A pull still on its way carries an older offset to commit: it must not land after the final one.
  await pq.settlePull();
  const locker = orderly.locker;
  const stale = pq.isLockExpired(host.options.clock.now(), host.options.rebalanceLockMaxLiveTimeMs);
  if (stale && !(await locker?.lock(mq))) {
    host.logger.warn({ mq }, 'a dropped orderly queue is held by another member now: given up, its offset not written');
    offsetStore.removeOffset(mq);
    return true;
  }
  // The next owner reads the offset once it holds the lock: the broker must have it before the unlock.
  if (!(await offsetStore.flush(mq))) {
    host.logger.warn(
      { mq },
      'a dropped orderly queue keeps its lock: its offset was not written (next rebalance retries)',
    );
    return false;
  }
  offsetStore.removeOffset(mq);
  await locker?.unlockBatch([mq]);
  return true;
}

/** RocketMQ: RebalancePushImpl.messageQueueChanged. */
function messageQueueChanged(
  host: PushConsumerHost,
  topic: string,
  mqDivided: readonly MessageQueue[],
  change: { added: MessageQueue[]; removed: MessageQueue[] },
): void {
  const run = host.run();
  const sd = host.subscriptions.get(topic);
  // A new subVersion: the broker refuses older versions once it has the heartbeat that carries it.
  if (sd) sd.subVersion = Math.max(host.options.clock.now(), sd.subVersion + 1);
  host.thresholds.update(run?.rebalance.processQueueTable.size ?? 0);
  run?.instance.sendHeartbeatToAllBrokers().catch(() => {});
  host.events.emit('rebalance', { topic, added: change.added, removed: change.removed, assigned: [...mqDivided] });
}
