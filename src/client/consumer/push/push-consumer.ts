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
 * This file holds the public API; the parts live beside it: `push-consumer-lifecycle.ts` (start and
 * shutdown), `push-consumer-subscriptions.ts` (the subscription table, subscription changes while
 * running, listener checks), `push-consumer-wiring.ts` (what start() puts together: offset store,
 * consume service, pull service, rebalance), `pull-message.ts` (the pull path and its callback),
 * `rebalance-push-impl.ts`, `../consumer-routes.ts` (routes and extra heartbeats),
 * `push-consumer-tasks.ts` (cleanExpiredMsg, stall watch), `push-consumer-shutdown.ts`, and
 * `push-consumer-run.ts` (what they share). With `consumeMode: 'POP'`, `push-consumer-pop.ts` takes the
 * place of the lifecycle and the pull path (its pop loops and POP consume service beside it).
 */
import { ConsumerTelemetry } from '../../telemetry/index.js';
import { StateError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import { compareMessageQueue, type MessageQueue } from '../../../common/message.js';
import type { MessageListenerOrderly, OrderlyListenerOptions } from './consume-message-orderly-service.js';
import type { MessageListenerConcurrently } from './consume-message-concurrently-service.js';
import { PullThresholds } from '../flow-control.js';
import type { MessageSelector } from '../message-selector.js';
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
import { ConsumerRoutes } from '../consumer-routes.js';
import type { PushConsumerHost } from './push-consumer-run.js';
import {
  PushConsumerSubscriptions,
  concurrentlyListener,
  orderlyListener,
  type ListenerRegistration,
} from './push-consumer-subscriptions.js';
import { PushConsumerLifecycle } from './push-consumer-lifecycle.js';
import { PushConsumerPop, orderlyRefused } from './push-consumer-pop.js';
import type { TraceStats } from '../../trace/async-trace-dispatcher.js';
import { traceStatsOf } from '../../trace/trace-options.js';
import { SafeEventEmitter } from '../../instance/safe-emitter.js';
import type { ClientEventListen, ClientEventUnlisten } from '../../instance/event-methods.js';
import { NameMapper, unwrapEvents } from '../../instance/namespace.js';

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
  readonly #pullAbort = new AbortController();
  readonly #subscriptions = new PushConsumerSubscriptions(this.#pullAbort.signal);
  readonly #host: PushConsumerHost;
  readonly #routes: ConsumerRoutes;
  readonly #life: PushConsumerLifecycle;
  /** consumeMode 'POP' (push-consumer-pop.ts) takes the place of the pull lifecycle. */
  readonly #pop: PushConsumerPop | undefined;
  #listener: ListenerRegistration | undefined;
  #paused = false;
  /** The namespace's name mapper: everything below this class sees only wire names. */
  readonly #names: NameMapper;
  /** The shutdown report with plain names, made once per lifecycle shutdown promise. */
  #plainShutdown:
    { inner: Promise<PushConsumerShutdownReport>; plain: Promise<PushConsumerShutdownReport> } | undefined;

  constructor(options: PushConsumerOptions) {
    this.options = resolvePushConsumerOptions(options);
    this.#logger = this.options.logger;
    const names = (this.#names = new NameMapper(this.options.namespace));
    this.events = unwrapEvents(
      new SafeEventEmitter<PushConsumerEvents>((err, event) =>
        this.#logger.error({ err, event }, 'a PushConsumer event handler threw'),
      ),
      names,
    );
    const wire: ResolvedPushConsumerOptions = names.active
      ? {
          ...this.options,
          consumerGroup: names.wrap(this.options.consumerGroup),
          allocateMessageQueueStrategy: names.plainStrategy(this.options.allocateMessageQueueStrategy),
        }
      : this.options;
    this.#host = {
      options: wire,
      logger: this.#logger,
      events: this.events,
      subscriptions: this.#subscriptions.table,
      pullSignal: this.#pullAbort.signal,
      topicPullSignal: (topic) => this.#subscriptions.topicPullSignal(topic),
      thresholds: new PullThresholds(this.options),
      flowControlTimes: 0,
      run: () => this.#life.run,
      isRunning: () => this.state === 'RUNNING',
      isPaused: () => this.#paused,
      isOrderly: () => this.#listener?.orderly === true,
      telemetry: new ConsumerTelemetry(this.#logger, this.options.openTelemetry, this.options.consumerGroup),
    };
    this.#routes = new ConsumerRoutes(this.#host);
    this.#life = new PushConsumerLifecycle(this.#host, this.#routes, this.#pullAbort);
    this.#pop = this.options.consumeMode === 'POP' ? new PushConsumerPop(this.#host) : undefined;
  }

  get consumerGroup(): string {
    return this.options.consumerGroup;
  }

  /** The client id (`ip@instanceName`) once started. */
  get clientId(): string | undefined {
    return this.#pop ? this.#pop.clientId : this.#life.run?.instance.clientId;
  }

  /** What the message trace has sent and dropped; undefined unless `enableMsgTrace` is on and started. */
  traceStats(): TraceStats | undefined {
    return traceStatsOf(this.#life.run?.trace);
  }

  get state(): PushConsumerState {
    return (this.#pop ?? this.#life).state;
  }

  /**
   * Resolves when the consumer is ready: started, its group's membership settled (see
   * `startSettleMs`), its queues held, and the first pull of each queue sent and held by the broker
   * (or answered). A message sent after that is delivered as soon as the broker stores it. Also
   * emitted as the `ready` event. Rejects when `start()` fails or `shutdown()` comes first. A consumer
   * starts once, so this is the same promise every time it is read.
   */
  get ready(): Promise<void> {
    return (this.#pop ?? this.#life).ready.promise;
  }

  /**
   * The queues this member consumes now (all topics, the retry topic included), sorted. In POP mode:
   * what it pops, queue id -1 standing for every queue of the topic on that broker.
   */
  assignedQueues(): MessageQueue[] {
    const queues = this.#pop ? this.#pop.assignedQueues() : (this.#life.run?.rebalance.allocatedQueues() ?? []);
    return queues.map((mq) => this.#names.unwrapQueue(mq)).sort(compareMessageQueue);
  }

  /**
   * This member's lag: for each queue it consumes (the retry topic included), the broker's max offset
   * (asked with GET_MAX_OFFSET), the offset consumed up to, and their difference; and the total. The
   * result is also emitted as a `lag` event. For the whole group, across members, use
   * `AdminClient.consumerProgress(group)`.
   */
  async lag(): Promise<ConsumerLagEvent> {
    const run = this.#life.run;
    const state = this.state;
    if (this.#pop) throw new StateError('in POP mode the broker keeps the progress: the PushConsumer has no lag');
    if (!run || state !== 'RUNNING') throw new StateError(`the PushConsumer is ${state}, it has no lag`);
    const queues: QueueLag[] = [];
    for (const mq of (run.rebalance.allocatedQueues() ?? []).sort(compareMessageQueue)) {
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
    return this.#names.unwrapPayload(event);
  }

  /**
   * Subscribes `topic` with a tag expression (`'*'`, `'TagA || TagB'`) or a MessageSelector
   * (byTag / bySql). Replaces an earlier subscription of the topic. Allowed before and after start.
   */
  subscribe(plainTopic: string, selector: MessageSelector | string = '*'): this {
    const topic = this.#names.wrap(plainTopic);
    this.#subscriptions.subscribe(topic, selector, this.options.clock);
    if (this.state === 'RUNNING') this.#applySubscriptionChange(topic, true);
    return this;
  }

  /**
   * Stops consuming `topic` (its queues are dropped at the next rebalance, which is requested now). On a
   * running consumer the brokers are told at once; `subscriptionsApplied()` resolves when they know.
   */
  unsubscribe(plainTopic: string): this {
    const topic = this.#names.wrap(plainTopic);
    if (this.#subscriptions.table.delete(topic) && this.state === 'RUNNING')
      this.#applySubscriptionChange(topic, false);
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
    return this.#subscriptions.applied();
  }

  #applySubscriptionChange(topic: string, added: boolean): void {
    if (this.#pop) void this.#pop.refresh().catch(() => undefined);
    const run = this.#life.run;
    if (!run) return;
    this.#subscriptions.applyChange(run, this.#routes, topic, added, this.#logger);
  }

  /**
   * The listener: `(messages, context)`. Returning or resolving with nothing means the messages were
   * consumed; a throw or a rejected promise means RECONSUME_LATER (retried later through
   * `%RETRY%<group>`); an explicit `ConsumeConcurrentlyStatus` is that status.
   */
  registerMessageListener(listener: PushConsumerListener): this {
    this.#checkListenerChange();
    this.#listener = this.#plainListener(concurrentlyListener(listener));
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
    if (this.#pop) throw orderlyRefused();
    this.#listener = this.#plainListener(orderlyListener(listener, options));
    return this;
  }

  /** The listener sees copies of the messages with plain topics, and the plain queue in its context. */
  #plainListener(reg: ListenerRegistration): ListenerRegistration {
    const names = this.#names;
    if (!names.active) return reg;
    const plain = <M extends { topic: string }>(msgs: M[]): M[] => msgs.map((m) => names.unwrapMessage(m));
    if (reg.orderly) {
      const fn = reg.fn;
      const orderly: MessageListenerOrderly = (msgs, ctx) => fn(plain(msgs), names.unwrapContext(ctx));
      return { ...reg, fn: orderly };
    }
    const fn = reg.fn;
    const concurrently: MessageListenerConcurrently = (msgs, ctx) => fn(plain(msgs), names.unwrapContext(ctx));
    return { ...reg, fn: concurrently };
  }

  #checkListenerChange(): void {
    const state = this.state;
    if (state !== 'CREATE_JUST')
      throw new StateError(`the listener can only be registered before start() (the PushConsumer is ${state})`);
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
    return this.#names.guard(() =>
      this.#pop
        ? this.#pop.start(this.#listener, this.#subscriptions.table)
        : this.#life.start(this.#listener, this.#subscriptions.table),
    );
  }

  /**
   * Stops consuming: pulls stop (held ones are aborted), running listeners get until `timeoutMs`
   * (default `shutdownTimeoutMs`) to finish, offsets are persisted, the client unregisters and the
   * instance is released. Idempotent: every call returns the same promise.
   */
  shutdown(opts: { timeoutMs?: number } = {}): Promise<PushConsumerShutdownReport> {
    const inner = (this.#pop ?? this.#life).shutdown(opts.timeoutMs ?? this.options.shutdownTimeoutMs);
    if (!this.#names.active) return inner;
    // The same promise every time, as the lifecycle's own.
    if (this.#plainShutdown?.inner !== inner)
      this.#plainShutdown = { inner, plain: inner.then((report) => this.#names.unwrapPayload(report)) };
    return this.#plainShutdown.plain;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
