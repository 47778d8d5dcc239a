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
 *
 * This file holds the public API; the parts live beside it: `lite-pull-assignment.ts` (subscribe,
 * assign, the queues held), `lite-pull-fetch.ts` (the pull tasks feeding the buffer, poll, pause),
 * `lite-pull-offsets.ts` (commit, committed offsets, seek), `lite-pull-lifecycle.ts` (start and
 * shutdown) `lite-pull-core.ts` (what they share) and `lite-pull-run.ts` (what start() builds from them).
 */
import type { TraceStats } from '../../trace/async-trace-dispatcher.js';
import { traceStatsOf } from '../../trace/trace-options.js';
import { ConsumerTelemetry } from '../../telemetry/index.js';
import { InvalidArgumentError, StateError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import { topicNameProblem } from '../../../common/names.js';
import { Deferred } from '../consumer-startup.js';
import type { MessageSelector } from '../message-selector.js';
import { MQClientInstance } from '../../instance/mq-client-instance.js';
import { SafeEventEmitter } from '../../instance/safe-emitter.js';
import type { ClientEventListen, ClientEventUnlisten } from '../../instance/event-methods.js';
import { createOffsetStore } from '../offset-store-factory.js';
import { ConsumerRoutes } from '../consumer-routes.js';
import { LiteAssignment } from './lite-pull-assignment.js';
import { ConsumeRequestCache } from './lite-pull-cache.js';
import {
  resolveLitePullConsumerOptions,
  type LitePullConsumerOptions,
  type ResolvedLitePullConsumerOptions,
} from './lite-pull-consumer-options.js';
import { LiteFetcher, type PollOptions } from './lite-pull-fetch.js';
import { LitePullBatchIterator, LitePullMessageIterator, type LitePullIterateOptions } from './lite-pull-iterator.js';
import { LiteOffsets, type CommitOffsets } from './lite-pull-offsets.js';
import { releaseAfterFailedStart, shutdownRun, startRun, type LiteLifecycleHost } from './lite-pull-lifecycle.js';
import type { AssignmentChangedEvent } from './rebalance-lite-pull-impl.js';
import { NameMapper, unwrapEvents } from '../../instance/namespace.js';
import type { LiteCore, LitePullConsumerEvents, LitePullConsumerState, LiteRun } from './lite-pull-core.js';

export type { AssignmentChangedEvent } from './rebalance-lite-pull-impl.js';
export type { LiteFlowControlEvent, LitePullErrorEvent } from './lite-pull-message.js';
export type { LitePullIterateOptions } from './lite-pull-iterator.js';
export type { PollOptions } from './lite-pull-fetch.js';
export type { CommitOffsets } from './lite-pull-offsets.js';

export type { LitePullConsumerEvents, LitePullConsumerState } from './lite-pull-core.js';

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
  readonly #ready = new Deferred<void>();
  readonly #startAbort = new AbortController();
  readonly #cache = new ConsumeRequestCache();
  readonly #core: LiteCore;
  /** Which queues are ours: subscriptions, assignment, the queues held. */
  readonly #assignment: LiteAssignment;
  /** The pull tasks feeding the buffer, and poll, pause and resume. */
  readonly #fetcher: LiteFetcher;
  /** Commits, committed offsets, seek. */
  readonly #offsets: LiteOffsets;
  /** What start() and shutdown() work on. */
  readonly #lifecycle: LiteLifecycleHost;
  #state: LitePullConsumerState = 'CREATE_JUST';
  #run: LiteRun | undefined;
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<void> | undefined;

  /** The namespace's name mapper: everything below this class sees only wire names. */
  readonly #names: NameMapper;
  /** The options with the consumer group as it travels. */
  readonly #wire: ResolvedLitePullConsumerOptions;

  constructor(options: LitePullConsumerOptions) {
    this.options = resolveLitePullConsumerOptions(options);
    this.#logger = this.options.logger;
    const names = (this.#names = new NameMapper(this.options.namespace));
    this.events = unwrapEvents(
      new SafeEventEmitter<LitePullConsumerEvents>((err, event) =>
        this.#logger.error({ err, event }, 'a LitePullConsumer event handler threw'),
      ),
      names,
    );
    const wire: ResolvedLitePullConsumerOptions = names.active
      ? {
          ...this.options,
          consumerGroup: names.wrap(this.options.consumerGroup),
          allocateMessageQueueStrategy: names.plainStrategy(this.options.allocateMessageQueueStrategy),
        }
      : this.options;
    this.#wire = wire;
    this.#core = {
      options: wire,
      logger: this.#logger,
      events: this.events,
      state: () => this.#state,
      isRunning: () => this.#state === 'RUNNING',
      run: () => this.#run,
      running: (what) => this.#running(what),
      telemetry: new ConsumerTelemetry(this.#logger, this.options.openTelemetry, this.options.consumerGroup),
    };
    this.#assignment = new LiteAssignment(
      this.#core,
      this.#cache,
      (subscriptions) =>
        new ConsumerRoutes({
          logger: this.#logger,
          options: wire,
          subscriptions,
          isRunning: () => this.#state === 'RUNNING',
          run: () => this.#run,
        }),
    );
    this.#offsets = new LiteOffsets(this.#core, this.#cache, this.#assignment);
    this.#fetcher = new LiteFetcher(this.#core, this.#cache, this.#assignment, this.#offsets);
    this.#lifecycle = {
      core: this.#core,
      parts: { assignment: this.#assignment, fetcher: this.#fetcher, offsets: this.#offsets },
      cache: this.#cache,
      ready: this.#ready,
      startSignal: this.#startAbort.signal,
      setState: (state) => (this.#state = state),
      setRun: (run) => (this.#run = run),
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
  /** What the message trace has sent and dropped; undefined unless `enableMsgTrace` is on and started. */
  traceStats(): TraceStats | undefined {
    return traceStatsOf(this.#run?.trace);
  }

  get clientId(): string | undefined {
    return this.#run?.instance.clientId;
  }

  /** Messages pulled and waiting in the buffer (not yet handed out), all queues together. */
  get bufferedMessageCount(): number {
    return this.#fetcher.bufferedMessageCount;
  }

  /** The queues this consumer pulls now, sorted. */
  assignment(): MessageQueue[] {
    return this.#assignment.assignment().map((mq) => this.#names.unwrapQueue(mq));
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
    const names = this.#names;
    const listener =
      names.active && typeof onAssignmentChange === 'function'
        ? (event: AssignmentChangedEvent) => onAssignmentChange(names.unwrapPayload(event))
        : onAssignmentChange;
    this.#assignment.subscribe(names.wrap(topic), selector, listener);
    return this;
  }

  /** `subscribe` mode: stop consuming `topic` (its queues are committed and dropped at the next rebalance, run now). */
  unsubscribe(topic: string): this {
    this.#assignment.unsubscribe(this.#names.wrap(topic));
    return this;
  }

  /** `assign` mode: the filter used for the assigned queues of `topic` (default `*`). Before start only. */
  setSubExpressionForAssign(topic: string, selector: MessageSelector | string): this {
    this.#assignment.setSubExpressionForAssign(this.#names.wrap(topic), selector);
    return this;
  }

  /**
   * `assign` mode: consume exactly `queues` (replacing an earlier assignment). Before start it records
   * them (checked at start); once running it checks them and resolves when applied. Rejects with
   * ERR_TOPIC_NOT_EXIST for a topic the broker does not know, an InvalidArgumentError for a queue the
   * topic does not have, and a StateError after `subscribe`.
   */
  async assign(queues: readonly MessageQueue[]): Promise<void> {
    await this.#names.guard(() => this.#assignment.assign(this.#names.wrapQueues(queues)));
  }

  /** The readable queues of `topic`, sorted; ERR_TOPIC_NOT_EXIST when the topic does not exist. */
  async fetchMessageQueues(topic: string): Promise<MessageQueue[]> {
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    const names = this.#names;
    const run = this.#running('fetchMessageQueues');
    const queues = await names.guard(() => run.instance.fetchSubscribeMessageQueues(names.wrap(topic)));
    return queues.map((mq) => names.unwrapQueue(mq));
  }

  /**
   * Starts pulling. Resolves once the client has reached its broker(s) — the routes of the subscribed
   * (or assigned) topics fetched, every subscription that is not a tag expression accepted, the
   * heartbeat accepted — and, in `assign` mode, the queues are checked. An unreachable broker is tried
   * again until `startTimeoutMs`, then the promise rejects with a retriable `StartTimeoutError`
   * naming the address and the cause. Idempotent while starting or running; rejects after `shutdown()`.
   */
  start(): Promise<void> {
    if (this.#startPromise) return this.#startPromise;
    if (this.#state !== 'CREATE_JUST')
      return Promise.reject(new StateError(`the LitePullConsumer is ${this.#state}, it can not be started`));
    this.#startPromise = this.#names.guard(() => this.#start());
    return this.#startPromise;
  }

  async #start(): Promise<void> {
    const o = this.#wire;
    if (o.signal?.aborted) throw new StateError('the LitePullConsumer signal was aborted before start()');
    this.#state = 'STARTING';
    const instance = MQClientInstance.acquire(o);
    try {
      const offsetStore = createOffsetStore(
        o,
        instance,
        this.#logger,
        (e) => void this.events.emit('offsetPersisted', e),
      );
      await offsetStore.load();
      await this.#core.telemetry.start(instance.clientId);
      this.#core.telemetry.observeQueues(() => this.#assignment.queues.values());
      await startRun(this.#lifecycle, instance, offsetStore);
    } catch (err) {
      this.#core.telemetry.stop();
      await releaseAfterFailedStart(this.#lifecycle, instance, err);
      throw err;
    }
  }

  #running(what: string): LiteRun {
    const run = this.#run;
    if (this.#state === 'RUNNING' && run) return run;
    if (this.#state === 'CREATE_JUST' || this.#state === 'STARTING')
      throw new StateError(`${what}() before start(): start the LitePullConsumer first`);
    throw new StateError(`${what}(): the LitePullConsumer is ${this.#state}`);
  }

  // ---- poll and iteration ------------------------------------------------------------------------

  /**
   * The next messages (at most `pullBatchSize`, all of one queue, in offset order), or `[]` when none
   * arrived within `timeoutMs`. What it returns counts as consumed (auto-commit commits it). Rejects
   * with a StateError before `start()` or after `shutdown()`, with an AbortError when `signal` aborts.
   */
  async poll(opts: PollOptions = {}): Promise<MessageExt[]> {
    this.#running('poll');
    const msgs = await this.#fetcher.poll(opts);
    return this.#names.active ? msgs.map((m) => this.#names.unwrapMessage(m)) : msgs;
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
    const it = new LitePullMessageIterator(this.#fetcher.source, opts.signal);
    return this.#names.mapIterator(it, (m) => this.#names.unwrapMessage(m));
  }

  /** As `messages()`, one pull's messages (up to `pullBatchSize`) per step; a batch is consumed as a whole. */
  batches(opts: LitePullIterateOptions = {}): AsyncIterableIterator<MessageExt[]> {
    this.#running('batches');
    const it = new LitePullBatchIterator(this.#fetcher.source, opts.signal);
    return this.#names.mapIterator(it, (msgs) => msgs.map((m) => this.#names.unwrapMessage(m)));
  }

  // ---- offsets -----------------------------------------------------------------------------------

  /**
   * Commits and persists, resolving once the broker (or the local offset file) has the offsets:
   * without arguments, what has been consumed on every assigned queue; with `offsets`, exactly those
   * (queue → the next offset to consume). Rejects when a write fails.
   */
  async commit(offsets?: CommitOffsets): Promise<void> {
    const names = this.#names;
    const wire =
      names.active && offsets !== undefined && offsets !== null && typeof offsets[Symbol.iterator] === 'function'
        ? [...offsets].map((e) => (Array.isArray(e) ? ([names.wrapQueue(e[0]), e[1]] as const) : e))
        : offsets;
    await names.guard(() => this.#offsets.commit(wire));
  }

  /**
   * The group's committed offset of `mq` (the next offset to consume): this consumer's latest commit,
   * else the broker's (or the local file's); -1 when there is none.
   */
  async committed(mq: MessageQueue): Promise<number> {
    return this.#names.guard(() => this.#offsets.committed(this.#names.wrapQueue(mq)));
  }

  // ---- seek, pause, resume ---------------------------------------------------------------------------

  /**
   * Moves `mq` to `offset`: its buffered messages are dropped and the next poll of the queue starts
   * there. The queue must be assigned; `offset` must be within the stored range [min, max], else an
   * OffsetOutOfRangeError (ERR_OFFSET_OUT_OF_RANGE).
   */
  async seek(mq: MessageQueue, offset: number): Promise<void> {
    await this.#names.guard(() => this.#offsets.seek(this.#names.wrapQueue(mq), offset));
  }

  /** Moves `mq` to its first stored message. */
  async seekToBegin(mq: MessageQueue): Promise<void> {
    await this.#names.guard(() => this.#offsets.seekToBegin(this.#names.wrapQueue(mq)));
  }

  /** Moves `mq` past its last stored message: only new messages come. */
  async seekToEnd(mq: MessageQueue): Promise<void> {
    await this.#names.guard(() => this.#offsets.seekToEnd(this.#names.wrapQueue(mq)));
  }

  /** The offset of the first message of `mq` stored at or after `timestamp` (ms since the epoch). */
  async offsetForTimestamp(mq: MessageQueue, timestamp: number): Promise<number> {
    return this.#names.guard(() => this.#offsets.offsetForTimestamp(this.#names.wrapQueue(mq), timestamp));
  }

  /** Stops pulling `queues` and holds back their buffered messages from `poll` until `resume`. */
  pause(queues: readonly MessageQueue[]): void {
    this.#fetcher.pause(this.#names.wrapQueues(queues));
  }

  /** Pulls `queues` again and releases their buffered messages. */
  resume(queues: readonly MessageQueue[]): void {
    this.#fetcher.resume(this.#names.wrapQueues(queues));
  }

  /** Whether `mq` is paused. */
  isPaused(mq: MessageQueue): boolean {
    return this.#fetcher.isPaused(this.#names.wrapQueue(mq));
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
    // A start still waiting for its brokers gives up now.
    this.#startAbort.abort();
    if (this.#startPromise) await this.#startPromise.catch(() => {});
    const notReady = new StateError('the LitePullConsumer was shut down before it was ready');
    this.#ready.reject(notReady);
    this.#run?.startup?.end(notReady);
    const run = this.#run;
    if (!run || this.#state !== 'RUNNING') {
      this.#state = 'SHUTDOWN';
      return;
    }
    await shutdownRun(this.#lifecycle, run);
    this.#core.telemetry.stop();
  }
}
