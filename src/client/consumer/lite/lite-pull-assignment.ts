/**
 * Which queues a LitePullConsumer pulls (RocketMQ: DefaultLitePullConsumerImpl's subscribe/assign side).
 * Two modes, mutually exclusive: `subscribe` — the group's queues are divided among its members by the
 * push consumer's RebalanceImpl (see rebalance-lite-pull-impl.ts), with the topic routes and the
 * heartbeat that go with it; `assign` — exactly the queues the caller names, checked against the
 * topic's route. Either way a queue held is a LiteQueue keyed by `messageQueueKey`, found again from
 * its pull request; a queue given up commits (under auto-commit) and persists its offset first.
 */
import { InvalidArgumentError, StateError } from '../../../common/errors.js';
import { compareMessageQueue, messageQueueKey, type MessageQueue } from '../../../common/message.js';
import { topicNameProblem } from '../../../common/names.js';
import { buildSubscriptionDataWithType, type SubscriptionData } from '../../../filter/index.js';
import { MessageSelector } from '../message-selector.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { OffsetStore } from '../offset-store.js';
import { ProcessQueue } from '../process-queue.js';
import { createPullRequest, type PullRequest } from '../pull-request.js';
import type { RebalanceImpl } from '../rebalance-impl.js';
import type { ConsumeRequestCache, LiteQueue } from './lite-pull-cache.js';
import { checkQueue, queueName, type LiteCore } from './lite-pull-core.js';
import { createRebalanceLitePullImpl, type AssignmentChangedEvent } from './rebalance-lite-pull-impl.js';

export type LiteMode = 'none' | 'subscribe' | 'assign';

/** The topic routes and extra heartbeats, shared with the push consumer. */
export type LiteRoutes = Parameters<typeof createRebalanceLitePullImpl>[1];

export class LiteAssignment {
  /** `subscribe` mode: topic → subscription. */
  readonly subscriptions = new Map<string, SubscriptionData>();
  /** `subscribe` mode: the readable queues of the subscribed topics, and the extra heartbeats. */
  readonly routes: LiteRoutes;
  /** `assign` mode: topic → subscription (`setSubExpressionForAssign`, default `*`). */
  readonly #assignSubscriptions = new Map<string, SubscriptionData>();
  #mode: LiteMode = 'none';
  /** `assign` mode: the queues asked for (applied at start, or at once when running). */
  #wanted: MessageQueue[] = [];
  /** The queues held now. */
  readonly queues = new Map<string, LiteQueue>();
  readonly #queueByRequest = new WeakMap<PullRequest, LiteQueue>();
  readonly #core: LiteCore;
  readonly #cache: ConsumeRequestCache;

  /** `routes` is made by the consumer over `subscriptions` (the routes of the subscribed topics). */
  constructor(
    core: LiteCore,
    cache: ConsumeRequestCache,
    routes: (subscriptions: ReadonlyMap<string, unknown>) => LiteRoutes,
  ) {
    this.#core = core;
    this.#cache = cache;
    this.routes = routes(this.subscriptions);
  }

  get mode(): LiteMode {
    return this.#mode;
  }

  /** The queues pulled now, sorted. */
  assignment(): MessageQueue[] {
    return [...this.queues.values()]
      .filter((q) => !q.pq.dropped)
      .map((q) => ({ ...q.mq }))
      .sort(compareMessageQueue);
  }

  subscribe(
    topic: string,
    selector: MessageSelector | string,
    onAssignmentChange: ((event: AssignmentChangedEvent) => void) | undefined,
  ): void {
    if (this.#mode === 'assign')
      throw new StateError('subscribe and assign are mutually exclusive: this consumer uses assign()');
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    this.#checkNotShutDown();
    const sel = MessageSelector.from(selector);
    const sd = buildSubscriptionDataWithType(topic, sel.expression, sel.expressionType);
    sd.subVersion = this.#core.options.clock.now();
    this.#mode = 'subscribe';
    this.subscriptions.set(topic, sd);
    if (onAssignmentChange)
      this.#core.events.on('assignmentChanged', (e) => {
        if (e.topic === topic) onAssignmentChange(e);
      });
    if (this.#core.isRunning()) this.routes.subscriptionChanged(topic);
  }

  unsubscribe(topic: string): void {
    if (this.subscriptions.delete(topic) && this.#core.isRunning()) this.routes.subscriptionChanged();
  }

  setSubExpressionForAssign(topic: string, selector: MessageSelector | string): void {
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    if (this.#core.state() !== 'CREATE_JUST')
      throw new StateError('setSubExpressionForAssign() is allowed only before start()');
    const sel = MessageSelector.from(selector);
    this.#assignSubscriptions.set(topic, buildSubscriptionDataWithType(topic, sel.expression, sel.expressionType));
  }

  async assign(queues: readonly MessageQueue[]): Promise<void> {
    if (this.#mode === 'subscribe')
      throw new StateError('subscribe and assign are mutually exclusive: this consumer uses subscribe()');
    if (!Array.isArray(queues)) throw new InvalidArgumentError('queues', 'must be an array of MessageQueue');
    queues.forEach((mq, i) => checkQueue(mq, `queues[${i}]`));
    this.#checkNotShutDown();
    this.#mode = 'assign';
    this.#wanted = queues.map((mq) => ({ topic: mq.topic, brokerName: mq.brokerName, queueId: mq.queueId }));
    if (this.#core.isRunning()) await this.#apply(this.#wanted);
  }

  /** At start, `assign` mode: takes the queues asked for before start. */
  applyAssigned(): Promise<void> {
    return this.#apply(this.#wanted);
  }

  #checkNotShutDown(): void {
    const state = this.#core.state();
    if (state === 'SHUTDOWN' || state === 'SHUTTING_DOWN')
      throw new StateError('the LitePullConsumer has been shut down');
  }

  /** The subscription the pulls of `topic` use. */
  subscriptionOf(topic: string): SubscriptionData | undefined {
    return this.#mode === 'subscribe' ? this.subscriptions.get(topic) : this.#assignSubscriptionOf(topic);
  }

  /** What the heartbeat announces: the subscriptions, or in `assign` mode one per assigned topic. */
  heartbeatSubscriptions(): SubscriptionData[] {
    return this.#mode === 'subscribe'
      ? [...this.subscriptions.values()]
      : [...new Set(this.#wanted.map((mq) => mq.topic))].map((t) => this.#assignSubscriptionOf(t));
  }

  /** Whether the route of `topic` concerns this consumer. */
  wantsRoute(topic: string): boolean {
    return this.subscriptions.has(topic) || this.#wanted.some((mq) => mq.topic === topic);
  }

  #assignSubscriptionOf(topic: string): SubscriptionData {
    let sd = this.#assignSubscriptions.get(topic);
    if (!sd) this.#assignSubscriptions.set(topic, (sd = buildSubscriptionDataWithType(topic, '*', 'TAG')));
    return sd;
  }

  /** The queues held, dropped ones forgotten. */
  assignedQueues(): MessageQueue[] {
    // A queue of a topic no longer subscribed is dropped by the rebalance without a removal call.
    for (const [key, q] of this.queues) if (q.pq.dropped && this.#core.isRunning()) this.queues.delete(key);
    return [...this.queues.values()].map((q) => q.mq);
  }

  queueOf(request: PullRequest): LiteQueue | undefined {
    return this.#queueByRequest.get(request);
  }

  /**
   * The held queue `mq` for `what()`; a StateError when it is not held, or no longer the one `expected`
   * (it was given up and taken again while `what` waited).
   */
  heldQueue(mq: MessageQueue, what: string, expected?: LiteQueue): LiteQueue {
    this.#core.running(what);
    const q = this.queues.get(messageQueueKey(mq));
    if (!q || (expected && q !== expected))
      throw new StateError(
        `${what}: ${queueName(mq)} is not assigned to this consumer` +
          (this.#mode === 'subscribe' ? ' (it may be rebalancing)' : ''),
      );
    return q;
  }

  /** `q` pulls with `request` from now on (a seek); results of its earlier request are dropped. */
  replaceRequest(q: LiteQueue, request: PullRequest): void {
    q.request = request;
    q.parked = undefined;
    this.#queueByRequest.set(request, q);
  }

  /** Every queue stops counting: results still in flight are dropped. `forget` also empties the table. */
  dropAll(forget: boolean): void {
    for (const q of this.queues.values()) q.pq.dropped = true;
    if (forget) this.queues.clear();
  }

  /** `subscribe` mode: the push consumer's RebalanceImpl, adding and removing queues here. */
  createRebalance(
    instance: MQClientInstance,
    offsetStore: OffsetStore,
    computePullFromWhere: (mq: MessageQueue) => Promise<number>,
  ): RebalanceImpl {
    const o = this.#core.options;
    return createRebalanceLitePullImpl(
      {
        consumerGroup: o.consumerGroup,
        messageModel: o.messageModel,
        strategy: o.allocateMessageQueueStrategy,
        clock: o.clock,
        logger: this.#core.logger,
        subscriptions: this.subscriptions,
        computePullFromWhere,
        addQueue: (req) => this.#addQueue(req),
        removeQueue: (mq) => this.#removeQueue(mq),
        assignmentChanged: (e) => void this.#core.events.emit('assignmentChanged', e),
        settledMembers: (topic) => this.#core.run()?.startup?.settledMembers(topic),
      },
      this.routes,
      instance,
      offsetStore,
    );
  }

  /** Starts consuming the queue of `req` (rebalance) or a queue just assigned (offset -1: computed by the task). */
  #addQueue(req: PullRequest): void {
    const run = this.#core.run();
    if (!run) return;
    const mq = req.messageQueue;
    const key = messageQueueKey(mq);
    const q: LiteQueue = { mq, key, pq: req.processQueue, request: req, consumeOffset: -1, parked: undefined };
    this.queues.set(key, q);
    this.#queueByRequest.set(req, q);
    run.pulls.executePullRequestImmediately(req);
  }

  /** Stops consuming `mq`: under auto-commit its consumed offset is committed; then persisted and forgotten. */
  async #removeQueue(mq: MessageQueue): Promise<void> {
    const run = this.#core.run();
    const key = messageQueueKey(mq);
    const q = this.queues.get(key);
    if (!run || !q) return;
    q.pq.dropped = true;
    this.queues.delete(key);
    this.#cache.removeQueue(q);
    if (this.#core.options.autoCommit && q.consumeOffset >= 0) run.offsetStore.updateOffset(mq, q.consumeOffset, false);
    // The next owner starts from this offset: written (not only sent) before the queue is forgotten.
    if (!(await run.offsetStore.flush(mq)))
      this.#core.logger.warn({ mq }, 'the offset of a queue given up was not written');
    run.offsetStore.removeOffset(mq);
  }

  async #apply(wanted: readonly MessageQueue[]): Promise<void> {
    const run = this.#core.running('assign');
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
    if (this.#wanted !== wanted) return; // a later assign() replaced this one
    const want = new Set(wanted.map(messageQueueKey));
    for (const q of [...this.queues.values()]) if (!want.has(q.key)) await this.#removeQueue(q.mq);
    const o = this.#core.options;
    for (const mq of wanted) {
      if (this.queues.has(messageQueueKey(mq))) continue;
      run.offsetStore.removeOffset(mq);
      this.#addQueue(createPullRequest(o.consumerGroup, mq, new ProcessQueue(o.clock.now()), -1));
    }
  }
}
