/**
 * PushConsumer (RocketMQ's DefaultMQPushConsumer / DefaultMQPushConsumerImpl): how a message travels.
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
 *
 * This file holds the public API and the lifecycle; the parts live beside it: `pull-message.ts` (the
 * pull path and its callback), `rebalance-push-impl.ts`, `push-consumer-routes.ts` (routes and extra
 * heartbeats), `push-consumer-tasks.ts` (cleanExpiredMsg, stall watch), `push-consumer-shutdown.ts`,
 * and `push-consumer-run.ts` (what they share).
 */
import { InvalidArgumentError, StateError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import { compareMessageQueue, retryTopic, type MessageExt, type MessageQueue } from '../../../common/message.js';
import { topicNameProblem } from '../../../common/names.js';
import { buildSubscriptionDataWithType, type SubscriptionData } from '../../../filter/index.js';
import { instanceNameForClient } from '../../instance/client-options.js';
import {
  ConsumeMessageConcurrentlyService,
  type MessageListenerConcurrently,
} from './consume-message-concurrently-service.js';
import {
  ConsumeMessageOrderlyService,
  type MessageListenerOrderly,
  type OrderlyListenerOptions,
} from './consume-message-orderly-service.js';
import { MessageModel } from '../consumer-constants.js';
import { PullThresholds } from '../flow-control.js';
import { MessageSelector } from '../message-selector.js';
import { AddressedFailure, MQClientInstance } from '../../instance/mq-client-instance.js';
import type { ClientEventListen, ClientEventUnlisten } from '../../instance/event-methods.js';
import { PullAPIWrapper } from '../pull-api-wrapper.js';
import { pullMessage } from './pull-message.js';
import { PullMessageService } from '../pull-message-service.js';
import type { PullRequest } from '../pull-request.js';
import type {
  ConsumerLagEvent,
  QueueLag,
  PushConsumerEvents,
  PushConsumerListener,
  PushConsumerShutdownReport,
  PushConsumerState,
} from './push-consumer-events.js';
import {
  resolvePushConsumerOptions,
  type PushConsumerOptions,
  type ResolvedPushConsumerOptions,
} from './push-consumer-options.js';
import { PushConsumerRoutes } from '../consumer-routes.js';
import {
  createConsumerInner,
  createOffsetStore,
  type ConsumeMessageService,
  type PushConsumerHost,
  type PushConsumerRun,
} from './push-consumer-run.js';
import { QueueLocker } from './queue-locker.js';
import { releaseAfterFailedStart, shutdownRun } from './push-consumer-shutdown.js';
import { reachBrokers } from '../../instance/client-start.js';
import { createConsumerStartup, Deferred, type ConsumerStartup } from '../consumer-startup.js';
import { PushConsumerTasks } from './push-consumer-tasks.js';
import { createRebalancePushImpl } from './rebalance-push-impl.js';
import { SafeEventEmitter } from '../../instance/safe-emitter.js';
import { sendMessageBack } from './send-message-back.js';

export type {
  FlowControlEvent,
  PullErrorEvent,
  PushConsumerEvents,
  PushConsumerListener,
  PushConsumerShutdownReport,
  PushConsumerState,
  RebalanceEvent,
  StallEvent,
  BrokerConnectionEvent,
  BrokerDisconnectionEvent,
  UndecodableMessageEvent,
  ReadyEvent,
} from './push-consumer-events.js';

/** RocketMQ: a send-back with delay level -1 goes straight to the dead-letter queue. */
const DEAD_LETTER_DELAY_LEVEL = -1;

/**
 * A member of a consumer group that receives messages through a listener: `subscribe()` to topics,
 * `registerMessageListener()` (or `registerMessageListenerOrderly()`), `start()`. The group's queues
 * are shared out among its members and rebalanced when members come and go; offsets are committed to
 * the broker; a listener that throws gets its messages again later, through the group's retry topic,
 * and after `maxReconsumeTimes` they are parked in its dead-letter queue. `shutdown()` waits for
 * running listeners and commits offsets. Events (`lag`, `rebalance`, `connection`, ...) are listed in
 * `docs/events.md`.
 */
export class PushConsumer {
  readonly options: ResolvedPushConsumerOptions;
  readonly events: SafeEventEmitter<PushConsumerEvents>;
  /** As `events.on` (KafkaJS's `consumer.on`): the same events and payloads; returns the consumer. */
  readonly on: ClientEventListen<PushConsumerEvents, this> = (event, fn) => (this.events.on(event, fn), this);
  /** As `events.once`: the listener runs for the next such event only. */
  readonly once: ClientEventListen<PushConsumerEvents, this> = (event, fn) => (this.events.once(event, fn), this);
  /** As `events.off`: removes `fn`, or every listener of the event without it. */
  readonly off: ClientEventUnlisten<PushConsumerEvents, this> = (event, fn) => (this.events.off(event, fn), this);
  readonly #logger: Logger;
  readonly #subscriptions = new Map<string, SubscriptionData>();
  readonly #pullAbort = new AbortController();
  readonly #host: PushConsumerHost;
  readonly #routes: PushConsumerRoutes;
  readonly #tasks: PushConsumerTasks;
  #listener: MessageListenerConcurrently | undefined;
  #orderly: { listener: MessageListenerOrderly; keyConcurrency: number | undefined } | undefined;
  #state: PushConsumerState = 'CREATE_JUST';
  #paused = false;
  #run: PushConsumerRun | undefined;
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<PushConsumerShutdownReport> | undefined;
  readonly #ready = new Deferred<void>();

  constructor(options: PushConsumerOptions) {
    this.options = resolvePushConsumerOptions(options);
    this.#logger = this.options.logger;
    this.events = new SafeEventEmitter<PushConsumerEvents>((err, event) =>
      this.#logger.error({ err, event }, 'a PushConsumer event handler threw'),
    );
    this.#host = {
      options: this.options,
      logger: this.#logger,
      events: this.events,
      subscriptions: this.#subscriptions,
      pullSignal: this.#pullAbort.signal,
      topicPullSignal: (topic) => this.#topicPullAbort(topic).signal,
      thresholds: new PullThresholds(this.options),
      flowControlTimes: 0,
      run: () => this.#run,
      isRunning: () => this.#state === 'RUNNING',
      isPaused: () => this.#paused,
      isOrderly: () => this.#orderly !== undefined,
    };
    this.#routes = new PushConsumerRoutes(this.#host);
    this.#tasks = new PushConsumerTasks(this.#host, (msg, delayLevel, mq) =>
      this.#sendMessageBack(msg, delayLevel, mq),
    );
    this.options.signal?.addEventListener('abort', this.#onAbort, { once: true });
    this.#pullAbort.signal.addEventListener(
      'abort',
      () => {
        for (const c of this.#topicAborts.values()) c.abort(this.#pullAbort.signal.reason);
      },
      { once: true },
    );
  }

  readonly #onAbort = (): void => void this.shutdown();
  /** Per topic: aborts that topic's pulls (subscription change); all of them abort at shutdown. */
  readonly #topicAborts = new Map<string, AbortController>();
  /** The subscription changes made while running, each done once every broker accepted the heartbeat. */
  #subscriptionSync: Promise<void> = Promise.resolve();

  #topicPullAbort(topic: string): AbortController {
    let c = this.#topicAborts.get(topic);
    if (!c) {
      c = new AbortController();
      if (this.#pullAbort.signal.aborted) c.abort(this.#pullAbort.signal.reason);
      this.#topicAborts.set(topic, c);
    }
    return c;
  }

  /** The topic's held pulls come back now (and go out again with the current subscription). */
  #restartTopicPulls(topic: string): void {
    const c = this.#topicAborts.get(topic);
    this.#topicAborts.delete(topic);
    c?.abort(new StateError(`the subscription of ${topic} changed`));
  }
  readonly #startAbort = new AbortController();
  readonly #onBrokerConnected = (brokerAddr: string): void => void this.events.emit('connected', { brokerAddr });
  readonly #onBrokerDisconnected = (brokerAddr: string, error: unknown): void =>
    void this.events.emit('disconnected', { brokerAddr, error });

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

  /**
   * Resolves when the consumer is ready: started, its group's membership settled (see
   * `startSettleMs`), its queues held, and the first pull of each queue sent and held by the broker
   * (or answered). A message sent after that is delivered as soon as the broker stores it. Also
   * emitted as the `ready` event. Rejects when `start()` fails or `shutdown()` comes first. A consumer
   * starts once, so this is the same promise every time it is read.
   */
  get ready(): Promise<void> {
    return this.#ready.promise;
  }

  /** The queues this member consumes now (all topics, the retry topic included), sorted. */
  assignedQueues(): MessageQueue[] {
    return (this.#run?.rebalance.allocatedQueues() ?? []).sort(compareMessageQueue);
  }

  /**
   * This member's lag: for each queue it consumes (the retry topic included), the broker's max offset
   * (asked with GET_MAX_OFFSET), the offset consumed up to, and their difference; and the total. The
   * result is also emitted as a `lag` event. For the whole group, across members, use
   * `AdminClient.consumerProgress(group)`.
   */
  async lag(): Promise<ConsumerLagEvent> {
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') throw new StateError(`the PushConsumer is ${this.#state}, it has no lag`);
    const queues: QueueLag[] = [];
    for (const mq of this.assignedQueues()) {
      const found = await run.instance.findBrokerAddressForQueue(mq);
      const brokerOffset = await run.instance.api.getMaxOffset(found.brokerAddr, mq);
      const consumerOffset = Math.max(0, run.offsetStore.readOffsetFromMemory(mq));
      queues.push({ mq, brokerOffset, consumerOffset, lag: Math.max(0, brokerOffset - consumerOffset) });
    }
    const event: ConsumerLagEvent = {
      consumerGroup: this.options.consumerGroup,
      queues,
      total: queues.reduce((sum, q) => sum + q.lag, 0),
    };
    this.events.emit('lag', event);
    return event;
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
    // A newer version than the one it replaces, even within the same millisecond: the broker keeps the newest.
    sd.subVersion = Math.max(this.options.clock.now(), (this.#subscriptions.get(topic)?.subVersion ?? 0) + 1);
    this.#subscriptions.set(topic, sd);
    if (this.#state === 'RUNNING') this.#applySubscriptionChange(topic, true);
    return this;
  }

  /**
   * Stops consuming `topic` (its queues are dropped at the next rebalance, which is requested now). On a
   * running consumer the brokers are told at once; `subscriptionsApplied()` resolves when they know.
   */
  unsubscribe(topic: string): this {
    if (this.#subscriptions.delete(topic) && this.#state === 'RUNNING') this.#applySubscriptionChange(topic, false);
    return this;
  }

  /**
   * Resolves once every subscription change made on the running consumer (`subscribe`, `unsubscribe`)
   * has been accepted by the brokers (the heartbeat RocketMQ sends at once); rejects when a broker
   * could not be told (the regular heartbeat tells it later). Held pulls of a changed topic come back
   * at once and go out again with the new subscription from the same offset, so a message that only
   * the new selector matches is never skipped.
   */
  subscriptionsApplied(): Promise<void> {
    return this.#subscriptionSync;
  }

  #applySubscriptionChange(topic: string, added: boolean): void {
    const run = this.#run;
    if (!run) return;
    const previous = this.#subscriptionSync.catch(() => undefined);
    this.#subscriptionSync = (async () => {
      await previous;
      if (added) await this.#routes.refreshRoute(topic);
      try {
        await run.instance.heartbeatOrThrow(run.instance.masterBrokerAddrs());
      } catch (err) {
        throw err instanceof AddressedFailure ? err.error : err;
      } finally {
        // Held pulls filtered with the old subscription come back now and go out with the new one.
        this.#restartTopicPulls(topic);
        run.instance.rebalanceImmediately();
      }
    })();
    this.#subscriptionSync.catch((err: unknown) =>
      this.#logger.warn({ err, topic }, 'telling the brokers about a subscription change failed'),
    );
  }

  /**
   * The listener: `(messages, context)`. Returning or resolving with nothing means the messages were
   * consumed; a throw or a rejected promise means RECONSUME_LATER (retried later through
   * `%RETRY%<group>`); an explicit `ConsumeConcurrentlyStatus` is that status.
   */
  registerMessageListener(listener: PushConsumerListener): this {
    this.#checkListenerChange();
    if (typeof listener === 'function') this.#listener = listener;
    else if (listener && typeof listener.consumeMessage === 'function')
      this.#listener = (msgs, ctx) => listener.consumeMessage(msgs, ctx);
    else throw new InvalidArgumentError('listener', 'must be a function or an object with consumeMessage()');
    this.#orderly = undefined;
    return this;
  }

  /**
   * Orderly consumption (RocketMQ's MessageListenerOrderly): each queue's messages reach the listener
   * in the order they were stored, one batch at a time, and only on the member holding the queue's
   * broker lock. The listener resolves with nothing (SUCCESS) or `ConsumeOrderlyStatus`; a throw is
   * SUSPEND_CURRENT_QUEUE_A_MOMENT (the batch is retried after `suspendCurrentQueueTimeMillis`).
   *
   * With `{ keyConcurrency: N }` the order is per key instead: messages with the same sharding key
   * (`producer.send(msg, { shardingKey })`, else the message's KEYS) are delivered one at a time in
   * order, and up to N keys of one queue are consumed at once; a failing message holds back only its
   * key. Replaces a listener registered before.
   */
  registerMessageListenerOrderly(
    listener: MessageListenerOrderly | { consumeMessage: MessageListenerOrderly },
    options: OrderlyListenerOptions = {},
  ): this {
    this.#checkListenerChange();
    let fn: MessageListenerOrderly;
    if (typeof listener === 'function') fn = listener;
    else if (listener && typeof listener.consumeMessage === 'function')
      fn = (msgs, ctx) => listener.consumeMessage(msgs, ctx);
    else throw new InvalidArgumentError('listener', 'must be a function or an object with consumeMessage()');
    const k = options.keyConcurrency;
    if (k !== undefined && (!Number.isInteger(k) || k < 1 || k > 10_000))
      throw new InvalidArgumentError('keyConcurrency', 'must be an integer from 1 to 10000');
    this.#orderly = { listener: fn, keyConcurrency: k };
    this.#listener = undefined;
    return this;
  }

  #checkListenerChange(): void {
    if (this.#state !== 'CREATE_JUST')
      throw new StateError(`the listener can only be registered before start() (the PushConsumer is ${this.#state})`);
  }

  /** Stops pulling until `resume()` (RocketMQ's suspend); messages already pulled are still consumed. */
  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    this.#paused = false;
  }

  /**
   * Starts consuming. Resolves once the client has reached its broker(s): the routes of the subscribed
   * topics fetched, every subscription that is not a tag expression accepted by the brokers
   * (CHECK_CLIENT_CONFIG: a SQL92 subscription on a broker without property filtering fails here), and
   * the heartbeat accepted. An unreachable broker is tried again until `startTimeoutMs`, then the
   * promise rejects with a retriable `StartTimeoutError` naming the address and the cause. Idempotent
   * while starting or running; rejects after `shutdown()`.
   */
  start(): Promise<void> {
    if (this.#shutdownPromise)
      return Promise.reject(new StateError('the PushConsumer has been shut down, it can not be started again'));
    if (this.#startPromise) return this.#startPromise;
    if (this.#state !== 'CREATE_JUST')
      return Promise.reject(new StateError(`the PushConsumer is ${this.#state}, it can not be started`));
    this.#startPromise = this.#start();
    return this.#startPromise;
  }

  async #start(): Promise<void> {
    const o = this.options;
    if (!this.#listener && !this.#orderly)
      throw new InvalidArgumentError('listener', 'register a message listener before start()');
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
    const routes = this.#routes;
    try {
      const wrapper = new PullAPIWrapper(instance, o.consumerGroup);
      const offsetStore = createOffsetStore(
        o,
        instance,
        this.#logger,
        (e) => void this.events.emit('offsetPersisted', e),
      );
      await offsetStore.load();
      let consume: ConsumeMessageService;
      let orderly: PushConsumerRun['orderly'];
      if (this.#orderly) {
        const locker =
          o.messageModel === MessageModel.CLUSTERING
            ? new QueueLocker(instance, o.consumerGroup, this.#logger)
            : undefined;
        const service = new ConsumeMessageOrderlyService({
          consumerGroup: o.consumerGroup,
          messageModel: o.messageModel,
          consumeThreadMax: o.consumeThreadMax,
          consumeMessageBatchMaxSize: o.consumeMessageBatchMaxSize,
          suspendCurrentQueueTimeMillis: o.suspendCurrentQueueTimeMillis,
          maxReconsumeTimes: o.maxReconsumeTimesOrderly,
          listener: this.#orderly.listener,
          keyConcurrency: this.#orderly.keyConcurrency,
          lockMaxLiveTimeMs: o.rebalanceLockMaxLiveTimeMs,
          offsetStore,
          clock: o.clock,
          logger: this.#logger,
          lockOne: (mq) => locker?.lock(mq) ?? Promise.resolve(true),
          // RocketMQ (orderly): past maxReconsumeTimes a message goes to the dead-letter queue.
          sendToDeadLetterQueue: (msg, mq) => this.#sendMessageBack(msg, DEAD_LETTER_DELAY_LEVEL, mq),
          onSuspend: (e) => this.events.emit('suspend', e),
        });
        consume = service;
        orderly = { service, locker };
      } else {
        consume = new ConsumeMessageConcurrentlyService({
          consumerGroup: o.consumerGroup,
          messageModel: o.messageModel,
          consumeThreadMax: o.consumeThreadMax,
          consumeMessageBatchMaxSize: o.consumeMessageBatchMaxSize,
          listener: this.#listener as MessageListenerConcurrently,
          offsetStore,
          clock: o.clock,
          logger: this.#logger,
          sendMessageBack: (msg, delayLevel, mq) => this.#sendMessageBack(msg, delayLevel, mq),
          onConsumeFailure: (e) => this.events.emit('consumeFailure', e),
        });
      }
      const pulls = new PullMessageService((req) => this.#pullMessage(req), o.clock, this.#logger);
      const rebalance = createRebalancePushImpl(this.#host, routes, instance, offsetStore, pulls);
      this.#run = { instance, wrapper, offsetStore, consume, orderly, pulls, rebalance };
      instance.events.on('routeChanged', routes.onRouteChanged);
      instance.events.on('brokerConnected', this.#onBrokerConnected);
      instance.events.on('brokerDisconnected', this.#onBrokerDisconnected);
      instance.registerConsumer(
        o.consumerGroup,
        createConsumerInner(
          this.#host,
          routes,
          this.#orderly
            ? { orderly: true, fn: this.#orderly.listener }
            : { orderly: false, fn: this.#listener as MessageListenerConcurrently },
        ),
      );
      await instance.start();
      // Running only once the brokers know this member: routes fetched, subscriptions checked,
      // heartbeat accepted (or a StartTimeoutError after startTimeoutMs).
      await reachBrokers({
        instance,
        what: 'PushConsumer',
        group: o.consumerGroup,
        subscriptions: () => [...this.#subscriptions.values()],
        startTimeoutMs: o.startTimeoutMs,
        clock: o.clock,
        logger: this.#logger,
        signal: this.#startAbort.signal,
      });
      this.#state = 'RUNNING';
      this.#run.startup = this.#createStartup(instance);
      this.#tasks.start();
      instance.rebalanceImmediately();
    } catch (err) {
      this.#state = 'START_FAILED';
      this.#ready.reject(err);
      instance.events.off('routeChanged', routes.onRouteChanged);
      instance.events.off('brokerConnected', this.#onBrokerConnected);
      instance.events.off('brokerDisconnected', this.#onBrokerDisconnected);
      this.#tasks.stop();
      await releaseAfterFailedStart(instance, this.#run?.pulls, o.consumerGroup, this.#logger);
      this.#run = undefined;
      throw err;
    }
  }

  /** The settle and the `ready` signal of this start. */
  #createStartup(instance: MQClientInstance): ConsumerStartup {
    const o = this.options;
    return createConsumerStartup({
      instance,
      group: o.consumerGroup,
      settle: o.messageModel === MessageModel.CLUSTERING,
      quietMs: o.startSettleMs,
      maxMs: o.startSettleMaxMs,
      clock: o.clock,
      logger: this.#logger,
      ready: this.#ready,
      onReady: (e) => {
        this.#logger.info(e, 'PushConsumer ready');
        this.events.emit('ready', e);
      },
    });
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
    // A start still waiting for its brokers gives up now.
    this.#startAbort.abort();
    if (this.#startPromise) await this.#startPromise.catch(() => {});
    const notReady = new StateError('the PushConsumer was shut down before it was ready');
    this.#ready.reject(notReady);
    this.#run?.startup?.end(notReady);
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') {
      this.#state = 'SHUTDOWN';
      return { unfinishedListeners: 0, droppedConsumeRequests: 0, errors: [] };
    }
    const deadline = this.options.clock.now() + timeoutMs;
    this.#state = 'SHUTTING_DOWN';
    this.#tasks.stop();
    run.instance.events.off('brokerConnected', this.#onBrokerConnected);
    run.instance.events.off('brokerDisconnected', this.#onBrokerDisconnected);
    const report = await shutdownRun(run, {
      deadline,
      consumerGroup: this.options.consumerGroup,
      logger: this.#logger,
      pullAbort: this.#pullAbort,
      onRouteChanged: this.#routes.onRouteChanged,
    });
    this.#state = 'SHUTDOWN';
    if (report.unfinishedListeners > 0 || report.droppedConsumeRequests > 0)
      this.#logger.warn(report, 'PushConsumer shut down with unfinished work (it will be delivered again)');
    return report;
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

  /** RocketMQ: DefaultMQPushConsumerImpl.pullMessage (see pull-message.ts). */
  #pullMessage(req: PullRequest): Promise<void> {
    const run = this.#run;
    if (!run) return Promise.resolve();
    if (run.startup?.pending) run.startup.pullStarted(req.processQueue);
    return pullMessage(this.#host, run, req);
  }
}
