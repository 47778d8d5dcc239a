/**
 * PushConsumer (RocketMQ's DefaultMQPushConsumer / DefaultMQPushConsumerImpl): the walk of seed 004.
 *
 * start() → MQClientInstance (routes, heartbeat, RebalanceService, membership watch, 5 s offset
 * persistence) → RebalanceImpl allocates queues (AllocateMessageQueueAveragely by default) and queues a
 * PullRequest per new queue → PullMessageService drains them into `pullMessage` (flow control, then
 * PullAPIWrapper with the commit-offset flag) → the PullCallback puts found messages into the
 * ProcessQueue and hands them to ConsumeMessageConcurrentlyService → the listener → offsets to the
 * RemoteBrokerOffsetStore (CLUSTERING) or LocalFileOffsetStore (BROADCASTING) → the next PullRequest.
 *
 * shutdown(): stop pulling (held pulls aborted), wait for running listeners up to the deadline,
 * persist offsets, unregister, release the instance, and report what did not finish. A kill at any
 * point re-delivers; it never skips, because the committed offset is always the smallest one in flight.
 */
import type { TimerHandle } from '../common/clock.js';
import { InvalidArgumentError, RocketMQError, StateError } from '../common/errors.js';
import type { Logger } from '../common/logger.js';
import { compareMessageQueue, retryTopic, type MessageExt, type MessageQueue } from '../common/message.js';
import { topicNameProblem } from '../common/names.js';
import { buildSubscriptionDataWithType, type SubscriptionData } from '../filter/index.js';
import { buildPullSysFlag } from '../protocol/pull-sys-flag.js';
import { ResponseCode } from '../protocol/response-code.js';
import { instanceNameForClient } from './client-options.js';
import { computePullFromWhere } from './compute-pull-from-where.js';
import {
  ConsumeMessageConcurrentlyService,
  type ConsumeFailureEvent,
  type MessageListenerConcurrently,
} from './consume-message-concurrently-service.js';
import { ConsumeFromWhere, MessageModel } from './consumer-constants.js';
import {
  decidePull,
  perQueueThreshold,
  PULL_TIME_DELAY_MS_WHEN_BROKER_FLOW_CONTROL,
  type FlowControlReason,
} from './flow-control.js';
import { LocalFileOffsetStore } from './local-file-offset-store.js';
import { MessageSelector } from './message-selector.js';
import { MQClientInstance } from './mq-client-instance.js';
import type { MQConsumerInner } from './mq-consumer-inner.js';
import { ReadOffsetType, type OffsetStore } from './offset-store.js';
import type { ProcessQueue } from './process-queue.js';
import { PullAPIWrapper } from './pull-api-wrapper.js';
import { PullMessageService } from './pull-message-service.js';
import type { PullRequest } from './pull-request.js';
import { PullStatus, type PullResult } from './pull-result.js';
import {
  resolvePushConsumerOptions,
  type PushConsumerOptions,
  type ResolvedPushConsumerOptions,
} from './push-consumer-options.js';
import { RebalanceImpl } from './rebalance-impl.js';
import { RemoteBrokerOffsetStore, type OffsetPersistedEvent } from './remote-broker-offset-store.js';
import { SafeEventEmitter } from './safe-emitter.js';
import { sendMessageBack } from './send-message-back.js';

/** RocketMQ: after OFFSET_ILLEGAL the queue is re-created from the broker's offset 10 s later. */
export const OFFSET_ILLEGAL_REPAIR_DELAY_MS = 10_000;
/** RocketMQ: QUERY_CONSUMER_OFFSET from the store uses a 5 s timeout. */
const OFFSET_QUERY_TIMEOUT_MS = 5000;
/** A topic without a route asks for one at most this often. */
const ROUTE_RETRY_MS = 1000;

export interface RebalanceEvent {
  topic: string;
  /** Queues this member started consuming. */
  added: MessageQueue[];
  /** Queues this member stopped consuming. */
  removed: MessageQueue[];
  /** Every queue of the topic this member now holds. */
  assigned: MessageQueue[];
}

export interface PullErrorEvent {
  messageQueue: MessageQueue;
  error: unknown;
  /** When the queue is pulled again, ms. */
  retryInMs: number;
}

export interface FlowControlEvent {
  messageQueue: MessageQueue;
  reason: FlowControlReason;
  msgCount: number;
  /** Body bytes held by the queue. */
  msgSize: number;
  maxSpan: number;
  delayMs: number;
}

export interface StallEvent {
  messageQueue: MessageQueue;
  /** `noConsumeProgress`: messages held and none finished for `idleMs`; `noPull`: no pull for `idleMs`. */
  reason: 'noConsumeProgress' | 'noPull';
  msgCount: number;
  idleMs: number;
}

/** Typed events (eventemitter3). A handler that throws is logged; it never reaches the consumer. */
export interface PushConsumerEvents {
  rebalance: [event: RebalanceEvent];
  pullError: [event: PullErrorEvent];
  consumeFailure: [event: ConsumeFailureEvent];
  offsetPersisted: [event: OffsetPersistedEvent];
  flowControl: [event: FlowControlEvent];
  stall: [event: StallEvent];
}

/** What `shutdown()` could not finish. */
export interface PushConsumerShutdownReport {
  /** Listener calls still running at the deadline: their messages are not committed and will be re-delivered. */
  unfinishedListeners: number;
  /** Consume requests queued but not started; their messages will be re-delivered. */
  droppedConsumeRequests: number;
  /** Shutdown steps that failed (every step runs even when one fails). */
  errors: { step: string; error: unknown }[];
}

/** A listener function, or an object with RocketMQ's `consumeMessage` method. */
export type PushConsumerListener = MessageListenerConcurrently | { consumeMessage: MessageListenerConcurrently };

/** The lifecycle state of a PushConsumer. */
export type PushConsumerState = 'CREATE_JUST' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN' | 'START_FAILED';

interface Running {
  instance: MQClientInstance;
  wrapper: PullAPIWrapper;
  offsetStore: OffsetStore;
  consume: ConsumeMessageConcurrentlyService;
  pulls: PullMessageService;
  rebalance: RebalanceImpl;
}

export class PushConsumer {
  readonly options: ResolvedPushConsumerOptions;
  readonly events: SafeEventEmitter<PushConsumerEvents>;
  readonly #logger: Logger;
  readonly #subscriptions = new Map<string, SubscriptionData>();
  readonly #topicSubscribeInfo = new Map<string, MessageQueue[]>();
  readonly #routeAskedAt = new Map<string, number>();
  readonly #pullAbort = new AbortController();
  readonly #timers: TimerHandle[] = [];
  readonly #stallSince = new WeakMap<ProcessQueue, number>();
  readonly #stalled = new WeakSet<ProcessQueue>();
  #listener: MessageListenerConcurrently | undefined;
  #state: PushConsumerState = 'CREATE_JUST';
  #paused = false;
  #run: Running | undefined;
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<PushConsumerShutdownReport> | undefined;
  #pullThresholdForQueue: number;
  #pullThresholdSizeForQueueMiB: number;
  #flowControlTimes = 0;
  #lastExtraHeartbeat = -Infinity;

  constructor(options: PushConsumerOptions) {
    this.options = resolvePushConsumerOptions(options);
    this.#logger = this.options.logger;
    this.#pullThresholdForQueue = this.options.pullThresholdForQueue;
    this.#pullThresholdSizeForQueueMiB = this.options.pullThresholdSizeForQueueMiB;
    this.events = new SafeEventEmitter<PushConsumerEvents>((err, event) =>
      this.#logger.error({ err, event }, 'a PushConsumer event handler threw'),
    );
    this.options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  readonly #onAbort = (): void => void this.shutdown();

  get consumerGroup(): string {
    return this.options.consumerGroup;
  }

  /** The client id (`ip@instanceName`) once started. */
  get clientId(): string | undefined {
    return this.#run?.instance.clientId;
  }

  get state(): PushConsumerState {
    return this.#state;
  }

  /** The queues this member consumes now (all topics, the retry topic included), sorted. */
  assignedQueues(): MessageQueue[] {
    return (this.#run?.rebalance.allocatedQueues() ?? []).sort(compareMessageQueue);
  }

  /**
   * Subscribes `topic` with a tag expression (`'*'`, `'TagA || TagB'`) or a MessageSelector
   * (byTag / bySql). Replaces an earlier subscription of the topic. Allowed before and after start.
   */
  subscribe(topic: string, selector: MessageSelector | string = '*'): this {
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    const sel = MessageSelector.from(selector);
    const sd = buildSubscriptionDataWithType(topic, sel.expression, sel.expressionType);
    sd.subVersion = this.options.clock.now();
    this.#subscriptions.set(topic, sd);
    if (this.#state === 'RUNNING') this.#subscriptionChanged(topic);
    return this;
  }

  /** Stops consuming `topic` (its queues are dropped at the next rebalance, which is requested now). */
  unsubscribe(topic: string): this {
    if (this.#subscriptions.delete(topic) && this.#state === 'RUNNING') this.#subscriptionChanged();
    return this;
  }

  /** The listener: `(messages, context)` → CONSUME_SUCCESS or RECONSUME_LATER (a throw counts as the latter). */
  registerMessageListener(listener: PushConsumerListener): this {
    if (typeof listener === 'function') this.#listener = listener;
    else if (listener && typeof listener.consumeMessage === 'function')
      this.#listener = (msgs, ctx) => listener.consumeMessage(msgs, ctx);
    else throw new InvalidArgumentError('listener', 'must be a function or an object with consumeMessage()');
    return this;
  }

  /** Stops pulling until `resume()` (RocketMQ's suspend); messages already pulled are still consumed. */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
  }

  /** Starts consuming. Resolves once registered with the broker; idempotent while starting or running. */
  start(): Promise<void> {
    if (this.#startPromise) return this.#startPromise;
    if (this.#state !== 'CREATE_JUST')
      return Promise.reject(new StateError(`the PushConsumer is ${this.#state}, it can not be started`));
    this.#startPromise = this.#start();
    return this.#startPromise;
  }

  async #start(): Promise<void> {
    const o = this.options;
    if (!this.#listener) throw new InvalidArgumentError('listener', 'register a message listener before start()');
    if (this.#subscriptions.size === 0)
      throw new InvalidArgumentError('subscription', 'subscribe at least one topic before start()');
    if (o.signal?.aborted) throw new StateError('the PushConsumer signal was aborted before start()');
    this.#state = 'STARTING';
    if (o.messageModel === MessageModel.CLUSTERING) {
      // RocketMQ: the retry topic is subscribed with '*' (copySubscription).
      const rt = retryTopic(o.consumerGroup);
      if (!this.#subscriptions.has(rt)) this.#subscriptions.set(rt, buildSubscriptionDataWithType(rt, '*', 'TAG'));
    }
    const instanceName =
      o.messageModel === MessageModel.CLUSTERING ? instanceNameForClient(o.instanceName) : o.instanceName;
    const instance = MQClientInstance.acquire({ ...o, instanceName });
    try {
      const wrapper = new PullAPIWrapper(instance, o.consumerGroup);
      const offsetStore = this.#createOffsetStore(instance);
      await offsetStore.load();
      const consume = new ConsumeMessageConcurrentlyService({
        consumerGroup: o.consumerGroup,
        messageModel: o.messageModel,
        consumeThreadMax: o.consumeThreadMax,
        consumeMessageBatchMaxSize: o.consumeMessageBatchMaxSize,
        listener: this.#listener,
        offsetStore,
        clock: o.clock,
        logger: this.#logger,
        sendMessageBack: (msg, delayLevel, mq) => this.#sendMessageBack(msg, delayLevel, mq),
        onConsumeFailure: (e) => this.events.emit('consumeFailure', e),
      });
      const pulls = new PullMessageService((req) => this.#pullMessage(req), o.clock, this.#logger);
      const rebalance = this.#createRebalance(instance, offsetStore, pulls);
      this.#run = { instance, wrapper, offsetStore, consume, pulls, rebalance };
      instance.events.on('routeChanged', this.#onRouteChanged);
      instance.registerConsumer(o.consumerGroup, this.#inner());
      await instance.start();
      this.#state = 'RUNNING';
      await Promise.all([...this.#subscriptions.keys()].map((t) => this.#refreshRoute(t)));
      await instance.sendHeartbeatToAllBrokers();
      // The heartbeat creates the retry topic on the broker: fetch the routes still missing.
      await Promise.all(
        [...this.#subscriptions.keys()].filter((t) => !this.#routeOf(t)).map((t) => this.#refreshRoute(t)),
      );
      this.#startTimers();
      instance.rebalanceImmediately();
    } catch (err) {
      this.#state = 'START_FAILED';
      await this.#releaseAfterFailedStart(instance);
      throw err;
    }
  }

  /** A route appeared or changed: a topic of ours may have new brokers, so heartbeat and rebalance now. */
  readonly #onRouteChanged = (topic: string): void => {
    if (!this.#subscriptions.has(topic) || this.#state !== 'RUNNING') return;
    this.#heartbeatSoon(true);
  };

  /** Sends a heartbeat (at most once a second), then wakes the rebalance. */
  #heartbeatSoon(force = false): void {
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') return;
    const now = this.options.clock.now();
    if (!force && now - this.#lastExtraHeartbeat < ROUTE_RETRY_MS) return;
    this.#lastExtraHeartbeat = now;
    void run.instance
      .sendHeartbeatToAllBrokers()
      .catch(() => {})
      .then(() => run.instance.rebalanceImmediately());
  }

  async #releaseAfterFailedStart(instance: MQClientInstance): Promise<void> {
    instance.events.off('routeChanged', this.#onRouteChanged);
    for (const t of this.#timers.splice(0)) this.options.clock.clearInterval(t);
    try {
      await this.#run?.pulls.shutdown();
      await instance.unregisterConsumer(this.options.consumerGroup);
    } catch (err) {
      this.#logger.warn({ err }, 'cleanup after a failed start failed');
    }
    await instance.release().catch(() => {});
    this.#run = undefined;
  }

  /**
   * Stops consuming: pulls stop (held ones are aborted), running listeners get until `timeoutMs`
   * (default `shutdownTimeoutMs`) to finish, offsets are persisted, the client unregisters and the
   * instance is released. Idempotent: every call returns the same promise.
   */
  shutdown(opts: { timeoutMs?: number } = {}): Promise<PushConsumerShutdownReport> {
    this.#shutdownPromise ??= this.#shutdown(opts.timeoutMs ?? this.options.shutdownTimeoutMs);
    return this.#shutdownPromise;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  async #shutdown(timeoutMs: number): Promise<PushConsumerShutdownReport> {
    this.options.signal?.removeEventListener('abort', this.#onAbort);
    const report: PushConsumerShutdownReport = { unfinishedListeners: 0, droppedConsumeRequests: 0, errors: [] };
    if (this.#startPromise) await this.#startPromise.catch(() => {});
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') {
      this.#state = 'SHUTDOWN';
      return report;
    }
    const { clock } = this.options;
    const deadline = clock.now() + timeoutMs;
    this.#state = 'SHUTTING_DOWN';
    const step = async (name: string, fn: () => Promise<unknown> | void): Promise<void> => {
      try {
        await fn();
      } catch (error) {
        report.errors.push({ step: name, error });
        this.#logger.warn({ err: error, step: name }, 'PushConsumer shutdown step failed');
      }
    };
    for (const t of this.#timers.splice(0)) clock.clearInterval(t);
    await step('stop pulling', async () => {
      this.#pullAbort.abort(new StateError('the PushConsumer is shutting down'));
      await run.pulls.shutdown();
    });
    await step('wait for listeners', async () => {
      const r = await run.consume.shutdown(deadline);
      report.unfinishedListeners = r.unfinished;
      report.droppedConsumeRequests = r.droppedRequests;
    });
    await step('wait for rebalance', () => run.rebalance.idle());
    const queues = run.rebalance.allocatedQueues();
    // From here on, late listener results no longer move offsets.
    run.rebalance.dropAll();
    await step('persist offsets', () => run.offsetStore.persistAll(queues));
    run.instance.events.off('routeChanged', this.#onRouteChanged);
    await step('unregister', () => run.instance.unregisterConsumer(this.options.consumerGroup));
    await step('release client instance', () => run.instance.release());
    this.#state = 'SHUTDOWN';
    if (report.unfinishedListeners > 0 || report.droppedConsumeRequests > 0)
      this.#logger.warn(report, 'PushConsumer shut down with unfinished work (it will be delivered again)');
    return report;
  }

  // ---- wiring ------------------------------------------------------------------------------------

  #createOffsetStore(instance: MQClientInstance): OffsetStore {
    const o = this.options;
    const onPersisted = (e: OffsetPersistedEvent): void => void this.events.emit('offsetPersisted', e);
    if (o.messageModel === MessageModel.BROADCASTING) {
      return new LocalFileOffsetStore(o.offsetStoreDir, instance.clientId, o.consumerGroup, this.#logger, onPersisted);
    }
    const group = o.consumerGroup;
    return new RemoteBrokerOffsetStore(
      {
        queryConsumerOffset: async (mq) => {
          const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
          return instance.api.queryConsumerOffset(
            brokerAddr,
            { consumerGroup: group, topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName },
            { timeoutMs: OFFSET_QUERY_TIMEOUT_MS },
          );
        },
        updateConsumerOffset: async (mq, offset) => {
          const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
          await instance.api.updateConsumerOffset(brokerAddr, {
            consumerGroup: group,
            topic: mq.topic,
            queueId: mq.queueId,
            commitOffset: offset,
            bname: mq.brokerName,
          });
        },
      },
      this.#logger,
      onPersisted,
    );
  }

  #createRebalance(instance: MQClientInstance, offsetStore: OffsetStore, pulls: PullMessageService): RebalanceImpl {
    const o = this.options;
    return new RebalanceImpl(
      {
        consumerGroup: o.consumerGroup,
        messageModel: o.messageModel,
        clientId: instance.clientId,
        strategy: o.allocateMessageQueueStrategy,
        subscribedTopics: () => [...this.#subscriptions.keys()],
        topicSubscribeInfo: (topic) => this.#routeOf(topic),
        findConsumerIdList: async (topic) => {
          const ids = await instance.findConsumerIdList(topic, o.consumerGroup);
          // The broker does not know this member yet (first route just found, broker restarted): heartbeat now.
          if (!ids.includes(instance.clientId)) this.#heartbeatSoon();
          return ids;
        },
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
        removeUnnecessaryMessageQueue: async (mq) => {
          // RocketMQ (push, concurrently): persist the offset, then forget it.
          await offsetStore.persist(mq);
          offsetStore.removeOffset(mq);
          return true;
        },
        removeDirtyOffset: (mq) => offsetStore.removeOffset(mq),
        dispatchPullRequest: (requests, delayMs) => {
          for (const r of requests) pulls.executePullRequestLater(r, delayMs);
        },
        messageQueueChanged: (topic, _mqAll, mqDivided, change) => this.#messageQueueChanged(topic, mqDivided, change),
      },
      o.clock,
      this.#logger,
    );
  }

  /** The MQConsumerInner the client instance drives. */
  #inner(): MQConsumerInner {
    return {
      groupName: () => this.options.consumerGroup,
      messageModel: () => this.options.messageModel,
      consumeType: () => 'CONSUME_PASSIVELY',
      consumeFromWhere: () => this.options.consumeFromWhere,
      subscriptions: () => [...this.#subscriptions.values()],
      doRebalance: async () => {
        const run = this.#run;
        if (!run || this.#state !== 'RUNNING') return true;
        return run.rebalance.doRebalance();
      },
      persistConsumerOffset: async () => {
        const run = this.#run;
        if (!run || this.#state !== 'RUNNING') return;
        await run.offsetStore.persistAll(run.rebalance.allocatedQueues());
      },
      updateTopicSubscribeInfo: (topic, mqs) => {
        if (this.#subscriptions.has(topic)) this.#topicSubscribeInfo.set(topic, mqs);
      },
      isSubscribeTopicNeedUpdate: (topic) => this.#subscriptions.has(topic),
    };
  }

  /** The route's readable queues of `topic`; asks for the route (at most once a second) when unknown. */
  #routeOf(topic: string): MessageQueue[] | undefined {
    const mine = this.#topicSubscribeInfo.get(topic);
    if (mine && mine.length > 0) return mine;
    const shared = this.#run?.instance.getTopicSubscribeInfo(topic) ?? [];
    if (shared.length > 0) return shared;
    const now = this.options.clock.now();
    if (now - (this.#routeAskedAt.get(topic) ?? -Infinity) >= ROUTE_RETRY_MS) {
      this.#routeAskedAt.set(topic, now);
      void this.#refreshRoute(topic);
    }
    return undefined;
  }

  async #refreshRoute(topic: string): Promise<void> {
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') return;
    try {
      await run.instance.updateTopicRouteInfo(topic);
    } catch (err) {
      this.#logger.warn({ err, topic }, 'route update failed');
    }
  }

  #subscriptionChanged(topic?: string): void {
    const run = this.#run;
    if (!run) return;
    void (async () => {
      if (topic !== undefined) await this.#refreshRoute(topic);
      await run.instance.sendHeartbeatToAllBrokers().catch(() => {});
      run.instance.rebalanceImmediately();
    })();
  }

  /** RocketMQ: RebalancePushImpl.messageQueueChanged. */
  #messageQueueChanged(
    topic: string,
    mqDivided: readonly MessageQueue[],
    change: { added: MessageQueue[]; removed: MessageQueue[] },
  ): void {
    const run = this.#run;
    const sd = this.#subscriptions.get(topic);
    // A new subVersion: the broker refuses older versions once it has the heartbeat that carries it.
    if (sd) sd.subVersion = Math.max(this.options.clock.now(), sd.subVersion + 1);
    const count = run?.rebalance.processQueueTable.size ?? 0;
    const q = perQueueThreshold(this.options.pullThresholdForTopic, count);
    if (q !== undefined) this.#pullThresholdForQueue = q;
    const s = perQueueThreshold(this.options.pullThresholdSizeForTopicMiB, count);
    if (s !== undefined) this.#pullThresholdSizeForQueueMiB = s;
    run?.instance.sendHeartbeatToAllBrokers().catch(() => {});
    this.events.emit('rebalance', { topic, added: change.added, removed: change.removed, assigned: [...mqDivided] });
  }

  #startTimers(): void {
    const { clock } = this.options;
    const consumeTimeoutMs = this.options.consumeTimeoutMinutes * 60_000;
    // RocketMQ: cleanExpiredMsg every consumeTimeout minutes, first after the same delay.
    this.#timers.push(clock.setInterval(() => void this.#cleanExpiredMsg(consumeTimeoutMs), consumeTimeoutMs));
    const stall = this.options.stallTimeoutMs;
    if (stall > 0)
      this.#timers.push(clock.setInterval(() => this.#checkStalls(stall), Math.max(1000, Math.floor(stall / 4))));
  }

  async #cleanExpiredMsg(consumeTimeoutMs: number): Promise<void> {
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') return;
    const { clock } = this.options;
    for (const { mq, pq } of [...run.rebalance.processQueueTable.values()]) {
      try {
        const removed = await pq.cleanExpiredMsg(consumeTimeoutMs, clock.now, async (msg) => {
          if (!(await this.#sendMessageBack(msg, 3, mq))) throw new RocketMQError('ERR_SEND_BACK', 'send back failed');
        });
        if (removed.length)
          this.#logger.warn({ mq, count: removed.length }, 'messages past consumeTimeout sent back for retry');
      } catch (err) {
        this.#logger.warn({ err, mq }, 'cleanExpiredMsg failed');
      }
    }
  }

  #checkStalls(stallTimeoutMs: number): void {
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING' || this.#paused) return;
    const now = this.options.clock.now();
    for (const { mq, pq } of run.rebalance.processQueueTable.values()) {
      if (pq.dropped) continue;
      let reason: StallEvent['reason'] | undefined;
      let idleMs = 0;
      if (pq.msgCount > 0) {
        let since = this.#stallSince.get(pq);
        if (since === undefined) this.#stallSince.set(pq, (since = now));
        idleMs = now - Math.max(since, pq.lastConsumeTimestamp);
        if (idleMs > stallTimeoutMs) reason = 'noConsumeProgress';
      } else {
        this.#stallSince.delete(pq);
        idleMs = now - pq.lastPullTimestamp;
        if (idleMs > stallTimeoutMs) reason = 'noPull';
      }
      if (!reason) {
        this.#stalled.delete(pq);
        continue;
      }
      if (this.#stalled.has(pq)) continue;
      this.#stalled.add(pq);
      this.#logger.warn({ mq, reason, idleMs, msgCount: pq.msgCount }, 'queue stalled');
      this.events.emit('stall', { messageQueue: mq, reason, msgCount: pq.msgCount, idleMs });
    }
  }

  async #sendMessageBack(msg: MessageExt, delayLevel: number, mq: MessageQueue): Promise<boolean> {
    const run = this.#run;
    if (!run) return false;
    try {
      await sendMessageBack(
        run.instance,
        this.options.consumerGroup,
        msg,
        delayLevel,
        mq,
        this.options.maxReconsumeTimes,
        this.#logger,
      );
      return true;
    } catch (err) {
      this.#logger.warn({ err, msgId: msg.msgId }, 'send back failed; the message is consumed again locally');
      return false;
    }
  }

  // ---- the pull path -----------------------------------------------------------------------------

  /** RocketMQ: DefaultMQPushConsumerImpl.pullMessage — the checks, then one pull and its callback. */
  async #pullMessage(req: PullRequest): Promise<void> {
    const run = this.#run;
    if (!run) return;
    const pq = req.processQueue;
    const mq = req.messageQueue;
    const o = this.options;
    if (pq.dropped) return;
    pq.lastPullTimestamp = o.clock.now();
    const sd = this.#subscriptions.get(mq.topic);
    const decision = decidePull({
      dropped: pq.dropped,
      running: this.#state === 'RUNNING',
      paused: this.#paused,
      msgCount: pq.msgCount,
      msgSize: pq.msgSize,
      maxSpan: pq.getMaxSpan(),
      hasSubscription: sd !== undefined,
      pullThresholdForQueue: this.#pullThresholdForQueue,
      pullThresholdSizeForQueueMiB: this.#pullThresholdSizeForQueueMiB,
      consumeConcurrentlyMaxSpan: o.consumeConcurrentlyMaxSpan,
      pullTimeDelayMillsWhenException: o.pullTimeDelayMsWhenException,
    });
    if (decision.action === 'drop') return;
    if (decision.action === 'later') {
      if (
        decision.reason === 'cachedMessageCount' ||
        decision.reason === 'cachedMessageSize' ||
        decision.reason === 'consumeSpan'
      ) {
        // RocketMQ logs one in 1000 flow-control events; the event follows the same rhythm.
        if (this.#flowControlTimes++ % 1000 === 0) {
          this.events.emit('flowControl', {
            messageQueue: mq,
            reason: decision.reason,
            msgCount: pq.msgCount,
            msgSize: pq.msgSize,
            maxSpan: pq.getMaxSpan(),
            delayMs: decision.delayMs,
          });
        }
      }
      run.pulls.executePullRequestLater(req, decision.delayMs);
      return;
    }
    if (!sd) return; // decidePull checked it; narrows the type
    const clustering = o.messageModel === MessageModel.CLUSTERING;
    const commitOffsetValue = clustering ? run.offsetStore.readOffsetFromMemory(mq) : 0;
    const postSub = o.postSubscriptionWhenPull && !sd.classFilterMode;
    const sysFlag = buildPullSysFlag(clustering && commitOffsetValue > 0, true, postSub, sd.classFilterMode);
    let result: PullResult;
    try {
      const raw = await run.wrapper.pullKernelImpl({
        mq,
        subExpression: sd.subString,
        expressionType: sd.expressionType,
        subVersion: sd.subVersion,
        offset: req.nextOffset,
        maxNums: o.pullBatchSize,
        sysFlag,
        commitOffset: Math.max(commitOffsetValue, 0),
        brokerSuspendMaxTimeMillis: o.brokerSuspendMaxTimeMs,
        timeoutMillis: o.consumerTimeoutMsWhenSuspend,
        signal: this.#pullAbort.signal,
      });
      result = run.wrapper.processPullResult(mq, raw, sd);
    } catch (err) {
      if (this.#pullAbort.signal.aborted || run.pulls.isStopped) return;
      const retryInMs =
        err instanceof RocketMQError && err.responseCode === ResponseCode.FLOW_CONTROL
          ? PULL_TIME_DELAY_MS_WHEN_BROKER_FLOW_CONTROL
          : o.pullTimeDelayMsWhenException;
      if (!mq.topic.startsWith('%RETRY%')) this.#logger.warn({ err, mq }, 'pull failed');
      this.events.emit('pullError', { messageQueue: mq, error: err, retryInMs });
      run.pulls.executePullRequestLater(req, retryInMs);
      return;
    }
    this.#onPullResult(run, req, result);
  }

  /** RocketMQ: the PullCallback's onSuccess, per status. */
  #onPullResult(run: Running, req: PullRequest, result: PullResult): void {
    const pq = req.processQueue;
    const mq = req.messageQueue;
    switch (result.pullStatus) {
      case PullStatus.FOUND: {
        const prevRequestOffset = req.nextOffset;
        req.nextOffset = result.nextBeginOffset;
        const list = result.msgFoundList;
        const first = list[0];
        if (result.nextBeginOffset < prevRequestOffset || (first && first.queueOffset < prevRequestOffset))
          this.#logger.warn(
            { mq, prevRequestOffset, nextBeginOffset: result.nextBeginOffset },
            '[BUG] pull result offset went backwards',
          );
        if (!first) {
          // Everything was filtered out on the client (tag re-check): pull again at once.
          run.pulls.executePullRequestImmediately(req);
          return;
        }
        pq.putMessage(list);
        run.consume.submitConsumeRequest(list, pq, mq);
        if (this.options.pullIntervalMs > 0) run.pulls.executePullRequestLater(req, this.options.pullIntervalMs);
        else run.pulls.executePullRequestImmediately(req);
        return;
      }
      case PullStatus.NO_NEW_MSG:
      case PullStatus.NO_MATCHED_MSG:
        req.nextOffset = result.nextBeginOffset;
        // RocketMQ: correctTagsOffset — with nothing in flight the committed offset may move past the gap.
        if (pq.msgCount === 0) run.offsetStore.updateOffset(mq, req.nextOffset, true);
        run.pulls.executePullRequestImmediately(req);
        return;
      case PullStatus.OFFSET_ILLEGAL: {
        this.#logger.warn(
          { mq, offset: req.nextOffset, nextBeginOffset: result.nextBeginOffset },
          'pull offset illegal',
        );
        req.nextOffset = result.nextBeginOffset;
        pq.dropped = true;
        run.pulls.executeTaskLater(() => {
          void (async () => {
            try {
              run.offsetStore.updateAndFreezeOffset(mq, req.nextOffset);
              await run.offsetStore.persist(mq);
              await run.rebalance.removeProcessQueue(mq);
              run.instance.rebalanceImmediately();
            } catch (err) {
              this.#logger.warn({ err, mq }, 'repairing an illegal offset failed');
            }
          })();
        }, OFFSET_ILLEGAL_REPAIR_DELAY_MS);
        return;
      }
    }
  }
}
