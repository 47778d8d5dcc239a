/**
 * RebalanceLitePullImpl: what a LitePullConsumer in `subscribe` mode plugs into the push consumer's
 * RebalanceImpl. The same allocation and start offsets (computePullFromWhere); a queue taken away has
 * its consumed offset committed and persisted before it is forgotten, so the member that gets it next
 * starts after what this one handed out; a new queue starts pulling at once (no first-pull delay); and
 * every change is reported through the consumer's `assignmentChanged` event.
 */
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageQueue } from '../../../common/message.js';
import type { SubscriptionData } from '../../../filter/index.js';
import type { AllocateMessageQueueStrategy } from '../allocate-message-queue.js';
import type { MessageModel } from '../consumer-constants.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { OffsetStore } from '../offset-store.js';
import type { PullRequest } from '../pull-request.js';
import type { ConsumerRoutes } from '../consumer-routes.js';
import { RebalanceImpl } from '../rebalance-impl.js';

/** What a queue-assignment change reports. */
export interface AssignmentChangedEvent {
  topic: string;
  /** Queues of the topic this consumer gained. */
  added: MessageQueue[];
  /** Queues of the topic this consumer lost (their consumed offsets were committed first). */
  removed: MessageQueue[];
  /** Every queue of the topic this consumer holds now. */
  assigned: MessageQueue[];
}

/** The consumer as the rebalance sees it. */
export interface LiteRebalanceTarget {
  readonly consumerGroup: string;
  readonly messageModel: MessageModel;
  readonly strategy: AllocateMessageQueueStrategy;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly subscriptions: ReadonlyMap<string, SubscriptionData>;
  computePullFromWhere(mq: MessageQueue): Promise<number>;
  /** Starts consuming the queue of `request` (its offset already computed). */
  addQueue(request: PullRequest): void;
  /** Commits (under auto-commit) and persists the queue's offset, then forgets the queue. */
  removeQueue(mq: MessageQueue): Promise<void>;
  assignmentChanged(event: AssignmentChangedEvent): void;
  /** The start-up settle's member list for the first division of `topic` (ConsumerStartup.settledMembers). */
  settledMembers(topic: string): string[] | undefined;
}

export function createRebalanceLitePullImpl(
  target: LiteRebalanceTarget,
  routes: ConsumerRoutes,
  instance: MQClientInstance,
  offsetStore: OffsetStore,
): RebalanceImpl {
  return new RebalanceImpl(
    {
      consumerGroup: target.consumerGroup,
      messageModel: target.messageModel,
      clientId: instance.clientId,
      strategy: target.strategy,
      subscribedTopics: () => [...target.subscriptions.keys()],
      topicSubscribeInfo: (topic) => routes.routeOf(topic),
      findConsumerIdList: (topic) =>
        routes.members(topic, target.consumerGroup, instance, target.settledMembers(topic)),
      computePullFromWhere: (mq) => target.computePullFromWhere(mq),
      removeUnnecessaryMessageQueue: async (mq) => {
        await target.removeQueue(mq);
        return true;
      },
      removeDirtyOffset: (mq) => offsetStore.removeOffset(mq),
      // RocketMQ's lite consumer starts a queue's pull task as soon as the queue is assigned.
      dispatchPullRequest: (requests) => {
        for (const r of requests) target.addQueue(r);
      },
      messageQueueChanged: (topic, _mqAll, mqDivided, change) => {
        const sd = target.subscriptions.get(topic);
        if (sd) sd.subVersion = Math.max(target.clock.now(), sd.subVersion + 1);
        instance.sendHeartbeatToAllBrokers().catch(() => {});
        target.assignmentChanged({ topic, added: change.added, removed: change.removed, assigned: [...mqDivided] });
      },
    },
    target.clock,
    target.logger,
  );
}
