/**
 * The fetching side of a LitePullConsumer (RocketMQ: DefaultLitePullConsumerImpl's pull tasks and
 * consumeRequestCache): the PullMessageService whose pull tasks (lite-pull-message.ts) fill the
 * buffer, and the taking side — `poll` and the async iterators take one pull's messages at a time,
 * mark them consumed or give them back. Pausing a queue parks its pull request and holds its buffered
 * messages back until `resume`.
 */
import { InvalidArgumentError } from '../../../common/errors.js';
import { messageQueueKey, type MessageExt, type MessageQueue } from '../../../common/message.js';
import { AbortError } from '../../../remoting/remoting-errors.js';
import type { PullAPIWrapper } from '../pull-api-wrapper.js';
import { PullMessageService } from '../pull-message-service.js';
import { isLive, type ConsumeRequest, type ConsumeRequestCache, type LiteQueue } from './lite-pull-cache.js';
import type { LiteAssignment } from './lite-pull-assignment.js';
import type { LitePullSource } from './lite-pull-iterator.js';
import { litePullMessage, type LitePullHost } from './lite-pull-message.js';
import type { LiteOffsets } from './lite-pull-offsets.js';
import { checkQueue, type LiteCore } from './lite-pull-core.js';

export interface PollOptions {
  /** How long to wait for messages, ms. Default `pollTimeoutMs` (5000). */
  timeoutMs?: number | undefined;
  /** Aborting it ends the wait: `poll` then rejects with an AbortError (code ERR_ABORTED). */
  signal?: AbortSignal | undefined;
}

export class LiteFetcher {
  /** What the iterators take from. */
  readonly source: LitePullSource;
  readonly #paused = new Set<string>();
  /** Aborted at shutdown: the pulls the broker holds come back at once. */
  readonly #pullAbort = new AbortController();
  readonly #core: LiteCore;
  readonly #cache: ConsumeRequestCache;
  readonly #assignment: LiteAssignment;
  readonly #offsets: LiteOffsets;

  constructor(core: LiteCore, cache: ConsumeRequestCache, assignment: LiteAssignment, offsets: LiteOffsets) {
    this.#core = core;
    this.#cache = cache;
    this.#assignment = assignment;
    this.#offsets = offsets;
    this.source = {
      take: (signal) => this.#take(core.options.pollTimeoutMs, signal),
      isRunning: () => core.isRunning(),
      markConsumed: (r, from, to) => this.#markConsumed(r, from, to),
      giveBack: (r, from) => this.#giveBack(r, from),
    };
  }

  /** Messages pulled and waiting in the buffer (not yet handed out), all queues together. */
  get bufferedMessageCount(): number {
    return this.#cache.messageCount;
  }

  /** The service running the pull tasks of one start(). */
  createPullService(wrapper: PullAPIWrapper): PullMessageService {
    const core = this.#core;
    const o = core.options;
    const pulls: PullMessageService = new PullMessageService(
      (req) => {
        const startup = core.run()?.startup;
        if (startup?.pending) startup.pullStarted(req.processQueue);
        return litePullMessage(host, req);
      },
      o.clock,
      core.logger,
    );
    const host: LitePullHost = {
      options: o,
      logger: core.logger,
      cache: this.#cache,
      signal: this.#pullAbort.signal,
      wrapper,
      pulls,
      isRunning: () => core.isRunning(),
      isPaused: (q) => this.#paused.has(q.key),
      queueOf: (req) => this.#assignment.queueOf(req),
      subscriptionOf: (topic) => this.#assignment.subscriptionOf(topic),
      computePullFromWhere: (mq) => this.#offsets.computePullFromWhere(mq),
      onPullError: (e) => void core.events.emit('pullError', e),
      onFlowControl: (e) => void core.events.emit('flowControl', e),
    };
    return pulls;
  }

  async poll(opts: PollOptions): Promise<MessageExt[]> {
    const timeoutMs = opts.timeoutMs ?? this.#core.options.pollTimeoutMs;
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

  async #take(timeoutMs: number, signal: AbortSignal | undefined): Promise<ConsumeRequest | null> {
    const clock = this.#core.options.clock;
    if (this.#core.options.autoCommit) this.#offsets.maybeAutoCommit();
    const deadline = clock.now() + timeoutMs;
    const available = (q: LiteQueue): boolean => this.#paused.size === 0 || !this.#paused.has(q.key);
    // Let pending I/O run first: a loop that keeps finding buffered messages would otherwise run on
    // promise callbacks alone, and the answers of the pulls in flight (and so the next pulls) would wait
    // until the buffer ran dry. One turn per batch keeps a for-await drain on par with the push
    // consumer on the same backlog (bench/lite-pull.bench.mjs).
    await new Promise<void>((resolve) => setImmediate(resolve));
    for (;;) {
      if (!this.#core.isRunning() || signal?.aborted) return null;
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
    this.#core.telemetry.received(msgs);
    const offset = r.queue.pq.removeMessage(msgs, this.#core.options.clock.now());
    if (offset >= 0) r.queue.consumeOffset = offset;
    this.#core.run()?.trace?.pulled(msgs);
  }

  #giveBack(r: ConsumeRequest, from: number): void {
    if (!isLive(r) || from >= r.messages.length) return;
    this.#cache.unshift({
      queue: r.queue,
      request: r.request,
      messages: from === 0 ? r.messages : r.messages.slice(from),
    });
  }

  pause(queues: readonly MessageQueue[]): void {
    queues.forEach((mq, i) => checkQueue(mq, `queues[${i}]`));
    for (const mq of queues) this.#paused.add(messageQueueKey(mq));
  }

  resume(queues: readonly MessageQueue[]): void {
    queues.forEach((mq, i) => checkQueue(mq, `queues[${i}]`));
    for (const mq of queues) {
      const key = messageQueueKey(mq);
      this.#paused.delete(key);
      const q = this.#assignment.queues.get(key);
      const parked = q?.parked;
      if (q && parked) {
        q.parked = undefined;
        if (parked === q.request) this.#core.run()?.pulls.executePullRequestImmediately(parked);
      }
    }
    this.#cache.wakeAll();
  }

  isPaused(mq: MessageQueue): boolean {
    return this.#paused.has(messageQueueKey(mq));
  }

  /** A paused queue is not pulled on purpose: keep the rebalance from treating it as idle. */
  keepPausedQueuesAlive(): void {
    const now = this.#core.options.clock.now();
    for (const q of this.#assignment.queues.values()) if (this.#paused.has(q.key)) q.pq.lastPullTimestamp = now;
  }

  /** Shutdown: the pulls the broker holds are aborted and no pull task runs again. */
  async stop(reason: unknown, pulls: PullMessageService): Promise<void> {
    this.#pullAbort.abort(reason);
    await pulls.shutdown();
  }
}
