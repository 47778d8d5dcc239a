/**
 * LitePullConsumer (RocketMQ's DefaultLitePullConsumer): the application sets the pace. Background
 * pulls fill a bounded buffer; `poll()` (or `for await`) takes from it; offsets are committed from what
 * was handed out.
 *
 * Two modes, mutually exclusive: `subscribe(topic, selector)` — the group's queues are divided among
 * its members by the push consumer's rebalance (RebalanceImpl, the same allocation strategies), with
 * an `assignmentChanged` event; or `assign(queues)` — the caller picks queues, no group coordination.
 *
 * Offsets: `poll()` marks what it returns consumed at once (RocketMQ's rule); auto-commit (default,
 * every 5 s, checked on each poll and on the client's 5 s offset persistence) moves the committed
 * offsets to the consumed ones and the client persists them. With `autoCommit: false`, `commit()`
 * commits and persists on demand. The committed offset of a queue is never past a message that was
 * not handed out. See lite-pull-iterator.ts for the commit point of `for await`.
 */
import { InvalidArgumentError, RocketMQError, StateError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import { compareMessageQueue, messageQueueKey, type MessageExt, type MessageQueue } from '../../../common/message.js';
import { topicNameProblem } from '../../../common/names.js';
import { buildSubscriptionDataWithType, type SubscriptionData } from '../../../filter/index.js';
import { AbortError } from '../../../remoting/remoting-errors.js';
import { computePullFromWhere } from '../compute-pull-from-where.js';
import { MessageModel } from '../consumer-constants.js';
import { ConsumeRequestCache, isLive, type ConsumeRequest, type LiteQueue } from './lite-pull-cache.js';
import {
  resolveLitePullConsumerOptions,
  type LitePullConsumerOptions,
  type ResolvedLitePullConsumerOptions,
} from './lite-pull-consumer-options.js';
import { OffsetOutOfRangeError } from './lite-pull-errors.js';
import {
  LitePullBatchIterator,
  LitePullMessageIterator,
  type LitePullIterateOptions,
  type LitePullSource,
} from './lite-pull-iterator.js';
import {
  litePullMessage,
  type LiteFlowControlEvent,
  type LitePullErrorEvent,
  type LitePullHost,
} from './lite-pull-message.js';
import { MessageSelector } from '../message-selector.js';
import { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { MQConsumerInner } from '../../instance/mq-consumer-inner.js';
import { ReadOffsetType, type OffsetPersistedEvent, type OffsetStore } from '../offset-store.js';
import { ProcessQueue } from '../process-queue.js';
import { PullAPIWrapper } from '../pull-api-wrapper.js';
import { createConsumerStartup, Deferred, type ConsumerStartup, type ReadyEvent } from '../consumer-startup.js';
import { PullMessageService } from '../pull-message-service.js';
import { createPullRequest, type PullRequest } from '../pull-request.js';
import { createOffsetStore } from '../push/push-consumer-run.js';
import { PushConsumerRoutes } from '../consumer-routes.js';
import type { RebalanceImpl } from '../rebalance-impl.js';
import { createRebalanceLitePullImpl, type AssignmentChangedEvent } from './rebalance-lite-pull-impl.js';
import { SafeEventEmitter } from '../../instance/safe-emitter.js';
import type { ClientEventListen, ClientEventUnlisten } from '../../instance/event-methods.js';

export type { AssignmentChangedEvent } from './rebalance-lite-pull-impl.js';
export type { LiteFlowControlEvent, LitePullErrorEvent } from './lite-pull-message.js';
export type { LitePullIterateOptions } from './lite-pull-iterator.js';

export type LitePullConsumerState =
  'CREATE_JUST' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN' | 'START_FAILED';

export interface LitePullConsumerEvents {
  /** `subscribe` mode: the queues of a topic held by this member changed. */
  assignmentChanged: [event: AssignmentChangedEvent];
  pullError: [event: LitePullErrorEvent];
  flowControl: [event: LiteFlowControlEvent];
  offsetPersisted: [event: OffsetPersistedEvent];
  /** The consumer holds its queues and their first pulls are held by the broker (as `ready` resolves). */
  ready: [event: ReadyEvent];
}

export interface PollOptions {
  /** How long to wait for messages, ms. Default `pollTimeoutMs` (5000). */
  timeoutMs?: number | undefined;
  /** Aborting it ends the wait: `poll` then rejects with an AbortError (code ERR_ABORTED). */
  signal?: AbortSignal | undefined;
}

/** Offsets for `commit(offsets)`: a Map or pairs of queue and offset (the next offset to consume). */
export type CommitOffsets = Iterable<readonly [MessageQueue, number]>;

/** What one start() creates. */
interface Run {
  instance: MQClientInstance;
  wrapper: PullAPIWrapper;
  offsetStore: OffsetStore;
  pulls: PullMessageService;
  rebalance: RebalanceImpl;
  host: LitePullHost;
}

function checkOffset(offset: number, field = 'offset'): void {
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new InvalidArgumentError(field, `must be an integer >= 0, got ${String(offset)}`);
}

function checkQueue(mq: MessageQueue, field = 'mq'): void {
  if (mq === null || typeof mq !== 'object') throw new InvalidArgumentError(field, 'must be a MessageQueue');
  if (typeof mq.topic !== 'string' || mq.topic === '')
    throw new InvalidArgumentError(`${field}.topic`, 'must be a topic name');
  if (typeof mq.brokerName !== 'string' || mq.brokerName === '')
    throw new InvalidArgumentError(`${field}.brokerName`, 'must be a broker name');
  if (!Number.isInteger(mq.queueId) || mq.queueId < 0)
    throw new InvalidArgumentError(`${field}.queueId`, 'must be an integer >= 0');
}

const queueName = (mq: MessageQueue): string => `${mq.topic}/${mq.brokerName}/${mq.queueId}`;

/**
 * A consumer that lets the application set the pace: background pulls fill a bounded buffer and
 * `poll()` — or `for await (const message of consumer)` — takes from it. Either `subscribe()` (the
 * group's queues are shared out among its members) or `assign()` queues yourself; offsets are
 * committed automatically or by `commit()`, and `seek()`, `pause()` and `resume()` steer each queue.
 */
export class LitePullConsumer implements AsyncIterable<MessageExt> {
  readonly options: ResolvedLitePullConsumerOptions;
  readonly events: SafeEventEmitter<LitePullConsumerEvents>;
  /** As `events.on` (KafkaJS's `consumer.on`): the same events and payloads; returns the consumer. */
  readonly on: ClientEventListen<LitePullConsumerEvents, this> = (event, fn) => (this.events.on(event, fn), this);
  /** As `events.once`: the listener runs for the next such event only. */
  readonly once: ClientEventListen<LitePullConsumerEvents, this> = (event, fn) => (this.events.once(event, fn), this);
  /** As `events.off`: removes `fn`, or every listener of the event without it. */
  readonly off: ClientEventUnlisten<LitePullConsumerEvents, this> = (event, fn) => (this.events.off(event, fn), this);
  readonly #logger: Logger;
  /** `subscribe` mode: topic → subscription. */
  readonly #subscriptions = new Map<string, SubscriptionData>();
  /** `assign` mode: topic → subscription (`setSubExpressionForAssign`, default `*`). */
  readonly #assignSubscriptions = new Map<string, SubscriptionData>();
  #mode: 'none' | 'subscribe' | 'assign' = 'none';
  /** `assign` mode: the queues asked for (applied at start, or at once when running). */
  #assignedWanted: MessageQueue[] = [];
  readonly #queues = new Map<string, LiteQueue>();
  readonly #ready = new Deferred<void>();
  #startup: ConsumerStartup | undefined;
  readonly #queueByRequest = new WeakMap<PullRequest, LiteQueue>();
  readonly #paused = new Set<string>();
  readonly #cache = new ConsumeRequestCache();
  readonly #pullAbort = new AbortController();
  readonly #routes: PushConsumerRoutes;
  #state: LitePullConsumerState = 'CREATE_JUST';
  #run: Run | undefined;
  #lastAutoCommit: number;
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<void> | undefined;
  readonly #source: LitePullSource;

  constructor(options: LitePullConsumerOptions) {
    this.options = resolveLitePullConsumerOptions(options);
    this.#logger = this.options.logger;
    this.#lastAutoCommit = this.options.clock.now();
    this.events = new SafeEventEmitter<LitePullConsumerEvents>((err, event) =>
      this.#logger.error({ err, event }, 'a LitePullConsumer event handler threw'),
    );
    this.#routes = new PushConsumerRoutes({
      logger: this.#logger,
      options: this.options,
      subscriptions: this.#subscriptions,
      isRunning: () => this.#state === 'RUNNING',
      run: () => this.#run,
    });
    this.#source = {
      take: (signal) => this.#take(this.options.pollTimeoutMs, signal),
      isRunning: () => this.#state === 'RUNNING',
      markConsumed: (r, from, to) => this.#markConsumed(r, from, to),
      giveBack: (r, from) => this.#giveBack(r, from),
    };
    this.options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  readonly #onAbort = (): void => void this.shutdown();

  get consumerGroup(): string {
    return this.options.consumerGroup;
  }

  /**
   * Resolves when the consumer holds its queues (subscribe mode: after its first balanced rebalance;
   * assign mode: the assigned queues) and the first pull of each is held by the broker (or answered),
   * so a message sent after it is fetched as soon as the broker stores it. Also the `ready` event.
   * Rejects when `start()` fails or `shutdown()` comes first.
   */
  get ready(): Promise<void> {
    return this.#ready.promise;
  }

  get state(): LitePullConsumerState {
    return this.#state;
  }

  /** The client id (`ip@instanceName`) once started. */
  get clientId(): string | undefined {
    return this.#run?.instance.clientId;
  }

  /** Messages pulled and waiting in the buffer (not yet handed out), all queues together. */
  get bufferedMessageCount(): number {
    return this.#cache.messageCount;
  }

  /** The queues this consumer pulls now, sorted. */
  assignment(): MessageQueue[] {
    return [...this.#queues.values()]
      .filter((q) => !q.pq.dropped)
      .map((q) => ({ ...q.mq }))
      .sort(compareMessageQueue);
  }

  /**
   * `subscribe` mode: consume `topic` (a tag expression such as `'*'` or `'TagA || TagB'`, or a
   * MessageSelector) with the queues divided among the group's members. `onAssignmentChange`, when
   * given, hears this topic's `assignmentChanged` events. Throws a StateError after `assign`.
   */
  subscribe(
    topic: string,
    selector: MessageSelector | string = '*',
    onAssignmentChange?: (event: AssignmentChangedEvent) => void,
  ): this {
    if (this.#mode === 'assign')
      throw new StateError('subscribe and assign are mutually exclusive: this consumer uses assign()');
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    if (this.#state === 'SHUTDOWN' || this.#state === 'SHUTTING_DOWN')
      throw new StateError('the LitePullConsumer has been shut down');
    const sel = MessageSelector.from(selector);
    const sd = buildSubscriptionDataWithType(topic, sel.expression, sel.expressionType);
    sd.subVersion = this.options.clock.now();
    this.#mode = 'subscribe';
    this.#subscriptions.set(topic, sd);
    if (onAssignmentChange)
      this.events.on('assignmentChanged', (e) => {
        if (e.topic === topic) onAssignmentChange(e);
      });
    if (this.#state === 'RUNNING') this.#routes.subscriptionChanged(topic);
    return this;
  }

  /** `subscribe` mode: stop consuming `topic` (its queues are committed and dropped at the next rebalance, run now). */
  unsubscribe(topic: string): this {
    if (this.#subscriptions.delete(topic) && this.#state === 'RUNNING') this.#routes.subscriptionChanged();
    return this;
  }

  /** `assign` mode: the filter used for the assigned queues of `topic` (default `*`). Before start only. */
  setSubExpressionForAssign(topic: string, selector: MessageSelector | string): this {
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    if (this.#state !== 'CREATE_JUST')
      throw new StateError('setSubExpressionForAssign() is allowed only before start()');
    const sel = MessageSelector.from(selector);
    this.#assignSubscriptions.set(topic, buildSubscriptionDataWithType(topic, sel.expression, sel.expressionType));
    return this;
  }

  /**
   * `assign` mode: consume exactly `queues` (replacing an earlier assignment). Before start it records
   * them (checked at start); once running it checks them and resolves when applied. Rejects with
   * ERR_TOPIC_NOT_EXIST for a topic the broker does not know, an InvalidArgumentError for a queue the
   * topic does not have, and a StateError after `subscribe`.
   */
  async assign(queues: readonly MessageQueue[]): Promise<void> {
    if (this.#mode === 'subscribe')
      throw new StateError('subscribe and assign are mutually exclusive: this consumer uses subscribe()');
    if (!Array.isArray(queues)) throw new InvalidArgumentError('queues', 'must be an array of MessageQueue');
    queues.forEach((mq, i) => checkQueue(mq, `queues[${i}]`));
    if (this.#state === 'SHUTDOWN' || this.#state === 'SHUTTING_DOWN')
      throw new StateError('the LitePullConsumer has been shut down');
    this.#mode = 'assign';
    this.#assignedWanted = queues.map((mq) => ({ topic: mq.topic, brokerName: mq.brokerName, queueId: mq.queueId }));
    if (this.#state === 'RUNNING') await this.#applyAssignment(this.#assignedWanted);
  }

  /** The readable queues of `topic`, sorted; ERR_TOPIC_NOT_EXIST when the topic does not exist. */
  async fetchMessageQueues(topic: string): Promise<MessageQueue[]> {
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    return this.#running('fetchMessageQueues').instance.fetchSubscribeMessageQueues(topic);
  }

  /** Starts pulling. Resolves once registered and (in `assign` mode) the queues are checked. */
  start(): Promise<void> {
    if (this.#startPromise) return this.#startPromise;
    if (this.#state !== 'CREATE_JUST')
      return Promise.reject(new StateError(`the LitePullConsumer is ${this.#state}, it can not be started`));
    this.#startPromise = this.#start();
    return this.#startPromise;
  }

  async #start(): Promise<void> {
    const o = this.options;
    if (o.signal?.aborted) throw new StateError('the LitePullConsumer signal was aborted before start()');
    this.#state = 'STARTING';
    const instance = MQClientInstance.acquire(o);
    try {
      const wrapper = new PullAPIWrapper(instance, o.consumerGroup);
      const offsetStore = createOffsetStore(
        o,
        instance,
        this.#logger,
        (e) => void this.events.emit('offsetPersisted', e),
      );
      await offsetStore.load();
      const pulls = new PullMessageService(
        (req) => {
          if (this.#startup?.pending) this.#startup.pullStarted(req.processQueue);
          return litePullMessage(host, req);
        },
        o.clock,
        this.#logger,
      );
      const host: LitePullHost = {
        options: o,
        logger: this.#logger,
        cache: this.#cache,
        signal: this.#pullAbort.signal,
        wrapper,
        pulls,
        isRunning: () => this.#state === 'RUNNING',
        isPaused: (q) => this.#paused.has(q.key),
        queueOf: (req) => this.#queueByRequest.get(req),
        subscriptionOf: (topic) =>
          this.#mode === 'subscribe' ? this.#subscriptions.get(topic) : this.#assignSubscriptionOf(topic),
        computePullFromWhere: (mq) => this.#computePullFromWhere(mq),
        onPullError: (e) => void this.events.emit('pullError', e),
        onFlowControl: (e) => void this.events.emit('flowControl', e),
      };
      const rebalance = createRebalanceLitePullImpl(
        {
          consumerGroup: o.consumerGroup,
          messageModel: o.messageModel,
          strategy: o.allocateMessageQueueStrategy,
          clock: o.clock,
          logger: this.#logger,
          subscriptions: this.#subscriptions,
          computePullFromWhere: (mq) => this.#computePullFromWhere(mq),
          addQueue: (req) => this.#addQueue(req),
          removeQueue: (mq) => this.#removeQueue(mq),
          assignmentChanged: (e) => void this.events.emit('assignmentChanged', e),
        },
        this.#routes,
        instance,
        offsetStore,
      );
      this.#run = { instance, wrapper, offsetStore, pulls, rebalance, host };
      instance.events.on('routeChanged', this.#routes.onRouteChanged);
      instance.registerConsumer(o.consumerGroup, this.#consumerInner());
      await instance.start();
      this.#state = 'RUNNING';
      const startup = (settle: boolean): ConsumerStartup =>
        createConsumerStartup({
          instance,
          group: o.consumerGroup,
          settle,
          quietMs: o.startSettleMs,
          maxMs: o.startSettleMaxMs,
          clock: o.clock,
          logger: this.#logger,
          ready: this.#ready,
          onReady: (e) => void this.events.emit('ready', e),
        });
      if (this.#mode === 'subscribe') {
        await Promise.all([...this.#subscriptions.keys()].map((t) => this.#routes.refreshRoute(t)));
        await instance.sendHeartbeatToAllBrokers();
        // The brokers count this member now: it settles before its first division of the queues.
        this.#startup = startup(o.messageModel === MessageModel.CLUSTERING);
        instance.rebalanceImmediately();
      } else {
        this.#startup = startup(false);
        if (this.#mode === 'assign') await this.#applyAssignment(this.#assignedWanted);
        this.#startup.afterPass(true, this.#queues.values());
        if (this.#mode === 'assign') await instance.sendHeartbeatToAllBrokers();
      }
    } catch (err) {
      this.#state = 'START_FAILED';
      this.#ready.reject(err);
      this.#startup?.end(err);
      instance.events.off('routeChanged', this.#routes.onRouteChanged);
      await this.#run?.pulls.shutdown();
      for (const q of this.#queues.values()) q.pq.dropped = true;
      this.#queues.clear();
      this.#cache.clear();
      this.#run = undefined;
      await instance.unregisterConsumer(o.consumerGroup).catch(() => {});
      await instance.release().catch(() => {});
      throw err;
    }
  }

  #consumerInner(): MQConsumerInner {
    const o = this.options;
    return {
      groupName: () => o.consumerGroup,
      messageModel: () => o.messageModel,
      consumeType: () => 'CONSUME_ACTIVELY',
      consumeFromWhere: () => o.consumeFromWhere,
      subscriptions: () =>
        this.#mode === 'subscribe'
          ? [...this.#subscriptions.values()]
          : [...new Set(this.#assignedWanted.map((mq) => mq.topic))].map((t) => this.#assignSubscriptionOf(t)),
      doRebalance: async () => {
        const run = this.#run;
        if (!run || this.#state !== 'RUNNING' || this.#mode !== 'subscribe') return true;
        // A paused queue is not pulled on purpose: keep the rebalance from treating it as idle.
        const now = o.clock.now();
        for (const q of this.#queues.values()) if (this.#paused.has(q.key)) q.pq.lastPullTimestamp = now;
        // Members starting together divide the queues only once the membership is quiet.
        const startup = this.#startup;
        if (!startup) return true; // start() has not sent its heartbeat yet: it rebalances right after
        await startup.settled;
        if (this.#state !== 'RUNNING') return true;
        const balanced = await run.rebalance.doRebalance();
        startup.afterPass(balanced, run.rebalance.processQueueTable.values());
        return balanced;
      },
      persistConsumerOffset: async () => {
        const run = this.#run;
        if (!run || this.#state !== 'RUNNING') return;
        if (o.autoCommit) this.#maybeAutoCommit();
        await run.offsetStore.persistAll(this.#assignedQueues());
      },
      updateTopicSubscribeInfo: (topic, mqs) => this.#routes.updateTopicSubscribeInfo(topic, mqs),
      isSubscribeTopicNeedUpdate: (topic) =>
        this.#subscriptions.has(topic) || this.#assignedWanted.some((mq) => mq.topic === topic),
    };
  }

  #assignSubscriptionOf(topic: string): SubscriptionData {
    let sd = this.#assignSubscriptions.get(topic);
    if (!sd) this.#assignSubscriptions.set(topic, (sd = buildSubscriptionDataWithType(topic, '*', 'TAG')));
    return sd;
  }

  #assignedQueues(): MessageQueue[] {
    // A queue of a topic no longer subscribed is dropped by the rebalance without a removal call.
    for (const [key, q] of this.#queues) if (q.pq.dropped && this.#state === 'RUNNING') this.#queues.delete(key);
    return [...this.#queues.values()].map((q) => q.mq);
  }

  #running(what: string): Run {
    const run = this.#run;
    if (this.#state === 'RUNNING' && run) return run;
    if (this.#state === 'CREATE_JUST' || this.#state === 'STARTING')
      throw new StateError(`${what}() before start(): start the LitePullConsumer first`);
    throw new StateError(`${what}(): the LitePullConsumer is ${this.#state}`);
  }

  async #computePullFromWhere(mq: MessageQueue): Promise<number> {
    const run = this.#running('computePullFromWhere');
    const { instance, offsetStore } = run;
    return computePullFromWhere(mq, {
      consumeFromWhere: this.options.consumeFromWhere,
      consumeTimestamp: this.options.consumeTimestamp,
      readOffsetFromStore: (q) => offsetStore.readOffset(q, ReadOffsetType.READ_FROM_STORE),
      maxOffset: async (q) => instance.api.getMaxOffset((await instance.findBrokerAddressForQueue(q)).brokerAddr, q),
      searchOffset: async (q, ts) =>
        instance.api.searchOffset((await instance.findBrokerAddressForQueue(q)).brokerAddr, q, ts),
    });
  }

  /** Starts consuming the queue of `req` (rebalance) or a queue just assigned (offset -1: computed by the task). */
  #addQueue(req: PullRequest): void {
    const run = this.#run;
    if (!run) return;
    const mq = req.messageQueue;
    const key = messageQueueKey(mq);
    const q: LiteQueue = { mq, key, pq: req.processQueue, request: req, consumeOffset: -1, parked: undefined };
    this.#queues.set(key, q);
    this.#queueByRequest.set(req, q);
    run.pulls.executePullRequestImmediately(req);
  }

  /** Stops consuming `mq`: under auto-commit its consumed offset is committed; then persisted and forgotten. */
  async #removeQueue(mq: MessageQueue): Promise<void> {
    const run = this.#run;
    const key = messageQueueKey(mq);
    const q = this.#queues.get(key);
    if (!run || !q) return;
    q.pq.dropped = true;
    this.#queues.delete(key);
    this.#cache.removeQueue(q);
    if (this.options.autoCommit && q.consumeOffset >= 0) run.offsetStore.updateOffset(mq, q.consumeOffset, false);
    await run.offsetStore.persist(mq);
    run.offsetStore.removeOffset(mq);
  }

  async #applyAssignment(wanted: readonly MessageQueue[]): Promise<void> {
    const run = this.#running('assign');
    const topics = [...new Set(wanted.map((mq) => mq.topic))];
    const readable = new Map<string, Set<string>>();
    for (const topic of topics) {
      const mqs = await run.instance.fetchSubscribeMessageQueues(topic);
      readable.set(topic, new Set(mqs.map(messageQueueKey)));
    }
    for (const mq of wanted) {
      if (!readable.get(mq.topic)?.has(messageQueueKey(mq)))
        throw new InvalidArgumentError('queues', `${queueName(mq)} is not a readable queue of topic ${mq.topic}`);
    }
    if (this.#assignedWanted !== wanted) return; // a later assign() replaced this one
    const want = new Set(wanted.map(messageQueueKey));
    for (const q of [...this.#queues.values()]) if (!want.has(q.key)) await this.#removeQueue(q.mq);
    for (const mq of wanted) {
      const key = messageQueueKey(mq);
      if (this.#queues.has(key)) continue;
      run.offsetStore.removeOffset(mq);
      this.#addQueue(createPullRequest(this.options.consumerGroup, mq, new ProcessQueue(this.options.clock.now()), -1));
    }
  }

  // ---- poll and iteration ------------------------------------------------------------------------

  /**
   * The next messages (at most `pullBatchSize`, all of one queue, in offset order), or `[]` when none
   * arrived within `timeoutMs`. What it returns counts as consumed (auto-commit commits it). Rejects
   * with a StateError before `start()` or after `shutdown()`, with an AbortError when `signal` aborts.
   */
  async poll(opts: PollOptions = {}): Promise<MessageExt[]> {
    this.#running('poll');
    const timeoutMs = opts.timeoutMs ?? this.options.pollTimeoutMs;
    if (!Number.isFinite(timeoutMs) || timeoutMs < 0)
      throw new InvalidArgumentError('timeoutMs', 'must be a number of ms >= 0');
    const r = await this.#take(timeoutMs, opts.signal);
    if (opts.signal?.aborted) {
      if (r) this.#giveBack(r, 0);
      throw new AbortError('poll aborted', { cause: opts.signal.reason });
    }
    if (!r) return [];
    this.#markConsumed(r, 0, r.messages.length);
    return r.messages;
  }

  /** `for await (const message of consumer)`: see `messages()`. */
  [Symbol.asyncIterator](): AsyncIterableIterator<MessageExt> {
    return this.messages();
  }

  /**
   * The messages one by one, until `shutdown()`, a `break` or the aborted `signal`. A message counts as
   * consumed once the loop body that got it has finished (the loop asks for the next one): a `break`
   * or a throw in the body leaves that message unconsumed, first in line for the next poll or loop.
   */
  messages(opts: LitePullIterateOptions = {}): AsyncIterableIterator<MessageExt> {
    this.#running('messages');
    return new LitePullMessageIterator(this.#source, opts.signal);
  }

  /** As `messages()`, one pull's messages (up to `pullBatchSize`) per step; a batch is consumed as a whole. */
  batches(opts: LitePullIterateOptions = {}): AsyncIterableIterator<MessageExt[]> {
    this.#running('batches');
    return new LitePullBatchIterator(this.#source, opts.signal);
  }

  async #take(timeoutMs: number, signal: AbortSignal | undefined): Promise<ConsumeRequest | null> {
    const clock = this.options.clock;
    if (this.options.autoCommit) this.#maybeAutoCommit();
    const deadline = clock.now() + timeoutMs;
    const available = (q: LiteQueue): boolean => this.#paused.size === 0 || !this.#paused.has(q.key);
    // Let pending I/O run first: a loop that keeps finding buffered messages would otherwise run on
    // promise callbacks alone, and the answers of the pulls in flight (and so the next pulls) would wait
    // until the buffer ran dry. One turn per batch: a for-await drain went from ~83% to ~110% of the
    // push consumer's rate on the same backlog (bench/lite-pull.bench.mjs).
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (;;) {
      if (this.#state !== 'RUNNING' || signal?.aborted) return null;
      const r = this.#cache.take(available);
      if (r) return r;
      const left = deadline - clock.now();
      if (left <= 0) return null;
      await this.#cache.wait(left, clock, signal);
    }
  }

  #markConsumed(r: ConsumeRequest, from: number, to: number): void {
    if (!isLive(r) || from >= to) return;
    const msgs = from === 0 && to === r.messages.length ? r.messages : r.messages.slice(from, to);
    const offset = r.queue.pq.removeMessage(msgs, this.options.clock.now());
    if (offset >= 0) r.queue.consumeOffset = offset;
  }

  #giveBack(r: ConsumeRequest, from: number): void {
    if (!isLive(r) || from >= r.messages.length) return;
    this.#cache.unshift({
      queue: r.queue,
      request: r.request,
      messages: from === 0 ? r.messages : r.messages.slice(from),
    });
  }

  // ---- offsets -----------------------------------------------------------------------------------

  #maybeAutoCommit(): void {
    const now = this.options.clock.now();
    if (now - this.#lastAutoCommit < this.options.autoCommitIntervalMs) return;
    this.#lastAutoCommit = now;
    this.#commitAll();
  }

  /** RocketMQ: commitAll — every assigned queue's consumed offset into the offset store (memory). */
  #commitAll(): void {
    const store = this.#run?.offsetStore;
    if (!store) return;
    for (const q of this.#queues.values()) if (q.consumeOffset >= 0) store.updateOffset(q.mq, q.consumeOffset, false);
  }

  /**
   * Commits and persists, resolving once the broker (or the local offset file) has the offsets:
   * without arguments, what has been consumed on every assigned queue; with `offsets`, exactly those
   * (queue → the next offset to consume). Rejects when a write fails.
   */
  async commit(offsets?: CommitOffsets): Promise<void> {
    const run = this.#running('commit');
    let queues: MessageQueue[];
    if (offsets === undefined) {
      this.#commitAll();
      queues = this.#assignedQueues();
    } else {
      const list = [...offsets].map(([mq, offset], i) => {
        checkQueue(mq, `offsets[${i}]`);
        checkOffset(offset, `offsets[${i}]`);
        return [mq, offset] as const;
      });
      for (const [mq, offset] of list) run.offsetStore.updateOffset(mq, offset, false);
      queues = list.map(([mq]) => mq);
    }
    await this.#persistNow(run, queues);
  }

  async #persistNow(run: Run, queues: readonly MessageQueue[]): Promise<void> {
    if (this.options.messageModel === MessageModel.BROADCASTING) {
      await run.offsetStore.persistAll(this.#assignedQueues());
      return;
    }
    const { instance, offsetStore } = run;
    await Promise.all(
      queues.map(async (mq) => {
        const offset = offsetStore.readOffsetFromMemory(mq);
        if (offset < 0) return;
        const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
        await instance.api.updateConsumerOffset(brokerAddr, {
          consumerGroup: this.options.consumerGroup,
          topic: mq.topic,
          queueId: mq.queueId,
          commitOffset: offset,
          bname: mq.brokerName,
        });
        this.events.emit('offsetPersisted', { messageQueue: { ...mq }, offset });
      }),
    );
  }

  /**
   * The group's committed offset of `mq` (the next offset to consume): this consumer's latest commit,
   * else the broker's (or the local file's); -1 when there is none.
   */
  async committed(mq: MessageQueue): Promise<number> {
    checkQueue(mq);
    const run = this.#running('committed');
    const offset = await run.offsetStore.readOffset(mq, ReadOffsetType.MEMORY_FIRST_THEN_STORE);
    if (offset === -2)
      throw new RocketMQError('ERR_OFFSET_READ', `reading the committed offset of ${queueName(mq)} failed`, {
        retriable: true,
      });
    return offset;
  }

  // ---- seek, pause, resume ---------------------------------------------------------------------------

  /**
   * Moves `mq` to `offset`: its buffered messages are dropped and the next poll of the queue starts
   * there. The queue must be assigned; `offset` must be within the stored range [min, max], else an
   * OffsetOutOfRangeError (ERR_OFFSET_OUT_OF_RANGE).
   */
  async seek(mq: MessageQueue, offset: number): Promise<void> {
    checkQueue(mq);
    checkOffset(offset);
    const q = this.#assignedQueue(mq, 'seek');
    const [min, max] = await Promise.all([this.#minOffset(mq), this.#maxOffset(mq)]);
    if (offset < min || offset > max) throw new OffsetOutOfRangeError(mq, offset, min, max);
    this.#seekTo(this.#assignedQueue(mq, 'seek', q), offset);
  }

  /** Moves `mq` to its first stored message. */
  async seekToBegin(mq: MessageQueue): Promise<void> {
    checkQueue(mq);
    const q = this.#assignedQueue(mq, 'seekToBegin');
    const min = await this.#minOffset(mq);
    this.#seekTo(this.#assignedQueue(mq, 'seekToBegin', q), min);
  }

  /** Moves `mq` past its last stored message: only new messages come. */
  async seekToEnd(mq: MessageQueue): Promise<void> {
    checkQueue(mq);
    const q = this.#assignedQueue(mq, 'seekToEnd');
    const max = await this.#maxOffset(mq);
    this.#seekTo(this.#assignedQueue(mq, 'seekToEnd', q), max);
  }

  /** The offset of the first message of `mq` stored at or after `timestamp` (ms since the epoch). */
  async offsetForTimestamp(mq: MessageQueue, timestamp: number): Promise<number> {
    checkQueue(mq);
    if (!Number.isSafeInteger(timestamp))
      throw new InvalidArgumentError('timestamp', 'must be an integer (ms since the epoch)');
    const { instance } = this.#running('offsetForTimestamp');
    const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
    return instance.api.searchOffset(brokerAddr, mq, timestamp);
  }

  async #minOffset(mq: MessageQueue): Promise<number> {
    const { instance } = this.#running('seek');
    return instance.api.getMinOffset((await instance.findBrokerAddressForQueue(mq)).brokerAddr, mq);
  }

  async #maxOffset(mq: MessageQueue): Promise<number> {
    const { instance } = this.#running('seek');
    return instance.api.getMaxOffset((await instance.findBrokerAddressForQueue(mq)).brokerAddr, mq);
  }

  #assignedQueue(mq: MessageQueue, what: string, expected?: LiteQueue): LiteQueue {
    this.#running(what);
    const q = this.#queues.get(messageQueueKey(mq));
    if (!q || (expected && q !== expected))
      throw new StateError(
        `${what}: ${queueName(mq)} is not assigned to this consumer` +
          (this.#mode === 'subscribe' ? ' (it may be rebalancing)' : ''),
      );
    return q;
  }

  /** Drops the queue's buffer and in-flight pull, and pulls again from `offset`. */
  #seekTo(q: LiteQueue, offset: number): void {
    const run = this.#running('seek');
    this.#cache.removeQueue(q);
    q.pq.clear();
    const req = createPullRequest(this.options.consumerGroup, q.mq, q.pq, offset);
    q.request = req;
    q.parked = undefined;
    q.consumeOffset = offset;
    this.#queueByRequest.set(req, q);
    run.pulls.executePullRequestImmediately(req);
  }

  /** Stops pulling `queues` and holds back their buffered messages from `poll` until `resume`. */
  pause(queues: readonly MessageQueue[]): void {
    queues.forEach((mq, i) => checkQueue(mq, `queues[${i}]`));
    for (const mq of queues) this.#paused.add(messageQueueKey(mq));
  }

  /** Pulls `queues` again and releases their buffered messages. */
  resume(queues: readonly MessageQueue[]): void {
    queues.forEach((mq, i) => checkQueue(mq, `queues[${i}]`));
    for (const mq of queues) {
      const key = messageQueueKey(mq);
      this.#paused.delete(key);
      const q = this.#queues.get(key);
      const parked = q?.parked;
      if (q && parked) {
        q.parked = undefined;
        if (parked === q.request) this.#run?.pulls.executePullRequestImmediately(parked);
      }
    }
    this.#cache.wakeAll();
  }

  /** Whether `mq` is paused. */
  isPaused(mq: MessageQueue): boolean {
    return this.#paused.has(messageQueueKey(mq));
  }

  // ---- shutdown ----------------------------------------------------------------------------------

  /**
   * Stops pulling (held pulls are aborted), ends `poll` waits and `for await` loops, commits (under
   * auto-commit) what was consumed, persists the offsets, unregisters and releases the client.
   * Idempotent: every call returns the same promise.
   */
  shutdown(): Promise<void> {
    this.#shutdownPromise ??= this.#shutdown();
    return this.#shutdownPromise;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  async #shutdown(): Promise<void> {
    this.options.signal?.removeEventListener('abort', this.#onAbort);
    if (this.#startPromise) await this.#startPromise.catch(() => {});
    const notReady = new StateError('the LitePullConsumer was shut down before it was ready');
    this.#ready.reject(notReady);
    this.#startup?.end(notReady);
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') {
      this.#state = 'SHUTDOWN';
      return;
    }
    this.#state = 'SHUTTING_DOWN';
    this.#cache.wakeAll();
    const step = async (name: string, fn: () => Promise<unknown> | void): Promise<void> => {
      try {
        await fn();
      } catch (err) {
        this.#logger.warn({ err, step: name }, 'LitePullConsumer shutdown step failed');
      }
    };
    await step('stop pulling', async () => {
      this.#pullAbort.abort(new StateError('the LitePullConsumer is shutting down'));
      await run.pulls.shutdown();
    });
    await step('wait for rebalance', () => run.rebalance.idle());
    if (this.options.autoCommit) this.#commitAll();
    const queues = this.#assignedQueues();
    for (const q of this.#queues.values()) q.pq.dropped = true;
    this.#cache.clear();
    await step('persist offsets', () => this.#persistNow(run, queues));
    run.instance.events.off('routeChanged', this.#routes.onRouteChanged);
    await step('unregister', () => run.instance.unregisterConsumer(this.options.consumerGroup));
    await step('release client instance', () => run.instance.release());
    this.#state = 'SHUTDOWN';
  }
}
