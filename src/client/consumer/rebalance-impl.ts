/**
 * RebalanceImpl / RebalancePushImpl: decides which queues this client consumes and keeps
 * the process-queue table in step — a removed queue stops (dropped), has its offset persisted and is
 * forgotten; an added queue gets its start offset (computePullFromWhere) and a PullRequest.
 *
 * All I/O goes through the `RebalanceHost` the push consumer supplies, so the decisions are tested
 * without servers. Runs never overlap: a run asked for while one is going is done right after it.
 */
import type { Clock } from '../../common/clock.js';
import PQueue from 'p-queue';
import type { Logger } from '../../common/logger.js';
import type { MessageQueue } from '../../common/message.js';
import { compareJavaStrings, compareMessageQueue, messageQueueKey } from '../../common/message.js';
import type { AllocateMessageQueueStrategy } from './allocate-message-queue.js';
import { MessageModel } from './consumer-constants.js';
import { ProcessQueue } from './process-queue.js';
import { createPullRequest, type PullRequest } from './pull-request.js';

/** RocketMQ: RebalancePushImpl.dispatchPullRequest delays the first pull of a new queue by 500 ms. */
export const FIRST_PULL_DELAY_MS = 500;

/**
 * Start offsets computed at once by one rebalance (each is one or two calls to the queue's broker): a
 * member given a thousand queues reads them in a steady stream, not in one burst of a thousand calls.
 */
export const START_OFFSET_CONCURRENCY = 32;

export interface RebalanceHost {
  readonly consumerGroup: string;
  readonly messageModel: MessageModel;
  readonly clientId: string;
  readonly strategy: AllocateMessageQueueStrategy;
  /** Topics currently subscribed (the retry topic included in CLUSTERING). */
  subscribedTopics(): string[];
  /** The route's readable queues of `topic`, or undefined when unknown. */
  topicSubscribeInfo(topic: string): readonly MessageQueue[] | undefined;
  /** GET_CONSUMER_LIST_BY_GROUP for the topic's broker. */
  findConsumerIdList(topic: string): Promise<string[]>;
  /** Start offset of a new queue (computePullFromWhere); throws to skip the queue this round. */
  computePullFromWhere(mq: MessageQueue): Promise<number>;
  /** Persist then forget the offset of a removed queue (RocketMQ: removeUnnecessaryMessageQueue). */
  removeUnnecessaryMessageQueue(mq: MessageQueue, pq: ProcessQueue): Promise<boolean>;
  /** Forget any cached offset of a queue about to be added (RocketMQ: removeDirtyOffset). */
  removeDirtyOffset(mq: MessageQueue): void;
  /**
   * Orderly consumption (CLUSTERING): locks new queues on their brokers before they are added; resolves
   * with the keys (messageQueueKey) locked. A queue whose lock fails is not added this round (RocketMQ:
   * updateProcessQueueTableInRebalance with needLock). Absent for concurrent consumption.
   */
  lockBatch?(mqs: readonly MessageQueue[]): Promise<Set<string>>;
  /** Hand new pull requests to the PullMessageService after `delayMs`. */
  dispatchPullRequest(requests: PullRequest[], delayMs: number): void;
  /** RocketMQ: messageQueueChanged (subVersion, thresholds, heartbeat, user event). */
  messageQueueChanged(
    topic: string,
    mqAll: readonly MessageQueue[],
    mqDivided: readonly MessageQueue[],
    change: {
      added: MessageQueue[];
      removed: MessageQueue[];
    },
  ): void;
}

interface Entry {
  mq: MessageQueue;
  pq: ProcessQueue;
}

export class RebalanceImpl {
  /** mq key → queue and its ProcessQueue: the queues this client consumes. */
  readonly processQueueTable = new Map<string, Entry>();
  private running: Promise<boolean> | undefined;
  private again = false;
  private readonly startOffsets = new PQueue({ concurrency: START_OFFSET_CONCURRENCY });

  constructor(
    private readonly host: RebalanceHost,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /**
   * RocketMQ: doRebalance — rebalance every subscribed topic; resolves to true when every topic is
   * balanced (the allocation equals the working queues). Overlapping calls share one follow-up run.
   */
  doRebalance(): Promise<boolean> {
    if (this.running) {
      this.again = true;
      return this.running;
    }
    const run = async (): Promise<boolean> => {
      let balanced = true;
      do {
        this.again = false;
        balanced = await this.rebalanceOnce();
      } while (this.again);
      return balanced;
    };
    this.running = run().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async rebalanceOnce(): Promise<boolean> {
    let balanced = true;
    const topics = this.host.subscribedTopics();
    for (const topic of topics) {
      try {
        if (!(await this.rebalanceByTopic(topic))) balanced = false;
      } catch (err) {
        balanced = false;
        this.logger.warn({ err, topic }, 'rebalance of topic failed');
      }
    }
    this.truncateMessageQueueNotMyTopic(new Set(topics));
    return balanced;
  }

  /** RocketMQ: rebalanceByTopic. */
  async rebalanceByTopic(topic: string): Promise<boolean> {
    const mqSet = this.host.topicSubscribeInfo(topic);
    if (this.host.messageModel === MessageModel.BROADCASTING) {
      if (!mqSet) {
        this.logger.warn({ topic }, 'doRebalance: no route for topic');
        return false;
      }
      const changed = await this.updateProcessQueueTableInRebalance(topic, mqSet);
      if (changed.added.length || changed.removed.length) {
        this.host.messageQueueChanged(topic, mqSet, mqSet, changed);
      }
      return this.isBalanced(topic, mqSet);
    }
    const cidAll = await this.host.findConsumerIdList(topic);
    if (!mqSet) {
      if (!topic.startsWith('%RETRY%')) this.logger.warn({ topic }, 'doRebalance: no route for topic');
      return false;
    }
    if (cidAll.length === 0) {
      this.logger.warn({ topic, group: this.host.consumerGroup }, 'doRebalance: no consumer id for the group');
      return false;
    }
    // RocketMQ: both lists sorted so every member computes the same split.
    const mqAll = [...mqSet].sort(compareMessageQueue);
    const cids = [...cidAll].sort(compareJavaStrings);
    let allocated: MessageQueue[];
    try {
      allocated = this.host.strategy.allocate(this.host.consumerGroup, this.host.clientId, mqAll, cids);
    } catch (err) {
      this.logger.error({ err, strategy: this.host.strategy.getName() }, 'allocate message queue failed');
      return false;
    }
    // Dedupe (a custom strategy may repeat a queue).
    const seen = new Set<string>();
    const allocateResultSet = allocated.filter((mq) => {
      const k = messageQueueKey(mq);
      if (seen.has(k)) return false;
      seen.add(k);
      return true;
    });
    const changed = await this.updateProcessQueueTableInRebalance(topic, allocateResultSet);
    if (changed.added.length || changed.removed.length) {
      this.logger.info(
        {
          group: this.host.consumerGroup,
          topic,
          clientId: this.host.clientId,
          mqAllSize: mqAll.length,
          cidAllSize: cids.length,
          allocated: allocateResultSet.length,
        },
        'rebalance result changed',
      );
      this.host.messageQueueChanged(topic, mqAll, allocateResultSet, changed);
    }
    // Not among the members (the broker has not seen our heartbeat yet): try again soon.
    if (!cids.includes(this.host.clientId)) return false;
    return this.isBalanced(topic, allocateResultSet);
  }

  /** RocketMQ: the topic is balanced when the allocation equals the set of non-dropped working queues. */
  private isBalanced(topic: string, allocated: readonly MessageQueue[]): boolean {
    const want = new Set(allocated.map(messageQueueKey));
    let have = 0;
    for (const [k, e] of this.processQueueTable) {
      if (e.mq.topic !== topic || e.pq.dropped) continue;
      if (!want.has(k)) return false;
      have++;
    }
    return have === want.size;
  }

  /** RocketMQ: updateProcessQueueTableInRebalance (push, concurrently: no locking). */
  async updateProcessQueueTableInRebalance(
    topic: string,
    mqSet: readonly MessageQueue[],
  ): Promise<{ added: MessageQueue[]; removed: MessageQueue[] }> {
    const wanted = new Map(mqSet.map((mq) => [messageQueueKey(mq), mq] as const));
    const now = this.clock.now();
    const removed: MessageQueue[] = [];
    const added: MessageQueue[] = [];
    const toRemove: [string, Entry][] = [];
    for (const [key, e] of this.processQueueTable) {
      if (e.mq.topic !== topic) continue;
      if (!wanted.has(key)) {
        e.pq.dropped = true;
        toRemove.push([key, e]);
      } else if (e.pq.isPullExpired(now)) {
        // RocketMQ: a passive (push) queue not pulled for 120 s is dropped and re-created.
        e.pq.dropped = true;
        toRemove.push([key, e]);
        this.logger.warn({ mq: e.mq }, 'pull expired: queue dropped and re-created');
      }
    }
    // Removed queues persist their offsets concurrently: dropping 100 queues is not 100 round trips in series.
    const removals = await Promise.all(
      toRemove.map(async ([, e]) => {
        try {
          return await this.host.removeUnnecessaryMessageQueue(e.mq, e.pq);
        } catch (err) {
          this.logger.warn({ err, mq: e.mq }, 'removing a queue failed');
          return false;
        }
      }),
    );
    toRemove.forEach(([key, e], i) => {
      if (removals[i] && this.processQueueTable.get(key) === e) {
        this.processQueueTable.delete(key);
        removed.push(e.mq);
      }
    });
    const requests: PullRequest[] = [];
    let fresh = [...wanted].filter(([key]) => !this.processQueueTable.has(key));
    let lockedAt: number | undefined;
    if (this.host.lockBatch && fresh.length > 0) {
      // RocketMQ: an orderly queue is added only once its broker lock is held; the offset is read after.
      const locked = await this.host.lockBatch(fresh.map(([, mq]) => mq));
      lockedAt = this.clock.now();
      const skipped = fresh.filter(([key]) => !locked.has(key));
      if (skipped.length)
        this.logger.info({ queues: skipped.map(([, mq]) => mq) }, 'queues locked by another member: not added yet');
      fresh = fresh.filter(([key]) => locked.has(key));
    }
    // The start offsets are read concurrently (RocketMQ reads them one by one), at most
    // START_OFFSET_CONCURRENCY at a time; results keep mqSet order.
    const offsets = await Promise.all(
      fresh.map(([, mq]) =>
        this.startOffsets.add(async () => {
          this.host.removeDirtyOffset(mq);
          try {
            return await this.host.computePullFromWhere(mq);
          } catch (err) {
            this.logger.warn({ err, mq }, 'computing the start offset failed; the queue is retried next rebalance');
            return -1;
          }
        }),
      ),
    );
    fresh.forEach(([key, mq], i) => {
      const nextOffset = offsets[i] ?? -1;
      if (nextOffset < 0 || this.processQueueTable.has(key)) return;
      const pq = new ProcessQueue(this.clock.now());
      if (lockedAt !== undefined) {
        pq.locked = true;
        pq.lastLockTimestamp = lockedAt;
      }
      this.processQueueTable.set(key, { mq, pq });
      requests.push(createPullRequest(this.host.consumerGroup, mq, pq, nextOffset));
      added.push(mq);
      this.logger.info({ mq, nextOffset }, 'queue added');
    });
    if (requests.length) this.host.dispatchPullRequest(requests, FIRST_PULL_DELAY_MS);
    return { added, removed };
  }

  /** RocketMQ: truncateMessageQueueNotMyTopic — queues of topics no longer subscribed are dropped. */
  private truncateMessageQueueNotMyTopic(topics: Set<string>): void {
    for (const [key, e] of this.processQueueTable) {
      if (topics.has(e.mq.topic)) continue;
      e.pq.dropped = true;
      this.processQueueTable.delete(key);
      this.logger.info({ mq: e.mq }, 'queue of an unsubscribed topic dropped');
    }
  }

  /** RocketMQ: removeProcessQueue — drop one queue (used after OFFSET_ILLEGAL). */
  async removeProcessQueue(mq: MessageQueue): Promise<void> {
    const key = messageQueueKey(mq);
    const e = this.processQueueTable.get(key);
    if (!e) return;
    this.processQueueTable.delete(key);
    e.pq.dropped = true;
    await this.host.removeUnnecessaryMessageQueue(mq, e.pq);
  }

  /** Every queue this client consumes (RocketMQ: processQueueTable.keySet()). */
  allocatedQueues(): MessageQueue[] {
    return [...this.processQueueTable.values()].map((e) => e.mq);
  }

  /** Drops every queue (shutdown). */
  dropAll(): void {
    for (const e of this.processQueueTable.values()) e.pq.dropped = true;
  }

  /** Resolves when no rebalance is running. */
  async idle(): Promise<void> {
    while (this.running) await this.running.catch(() => {});
  }
}
