/**
 * PullConsumer (RocketMQ's DefaultMQPullConsumer, modernised): the application chooses the
 * queue, the offset and the batch size of every pull and manages offsets itself.
 *
 * - `pull(...)`: sysFlag SUBSCRIPTION only (no suspend), RPC deadline consumerPullTimeoutMs (10 s).
 * - `pullBlockIfNotFound(...)`: adds SUSPEND; the broker holds the pull up to brokerSuspendMaxTimeMs
 *   (20 s) and the RPC deadline is consumerTimeoutMsWhenSuspend (30 s), so the broker answers first.
 * - Both send subVersion 0 for tag subscriptions and commitOffset 0 without the COMMIT flag, and run
 *   PullAPIWrapper.processPullResult (decode, exact-tag re-check, MIN/MAX_OFFSET).
 * - Every call takes an AbortSignal; `shutdown()` aborts pulls still held.
 * - Modernised: `updateConsumeOffset` writes to the broker at once (UPDATE_CONSUMER_OFFSET, awaited)
 *   instead of caching it for the 5 s persistence task, so `fetchConsumeOffset` reads it back at once.
 * - A broker restart makes calls in flight fail with a retriable TransportError; the next call
 *   reconnects.
 */
import { buildClientId } from '../../instance/client-options.js';
import { onAbort } from '../../../common/abort.js';
import { InvalidArgumentError } from '../../../common/errors.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import { decodeMessageId } from '../../../common/codec/index.js';
import { buildSubscriptionDataWithType, isTagType, type SubscriptionData } from '../../../filter/index.js';
import { buildPullSysFlag } from '../../../protocol/pull-sys-flag.js';
import { AbortError } from '../../../remoting/remoting-errors.js';
import type { BoundaryType } from '../../instance/mq-client-api.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import { ActiveConsumerLifecycle } from '../active-consumer-lifecycle.js';
import { MessageSelector } from '../message-selector.js';
import { PullAPIWrapper } from '../pull-api-wrapper.js';
import {
  resolvePullConsumerOptions,
  type PullConsumerOptions,
  type ResolvedPullConsumerOptions,
} from './pull-consumer-options.js';
import type { PullResult } from '../pull-result.js';
import { NameMapper } from '../../instance/namespace.js';

export interface PullOptions {
  /** Aborts the pull; it then rejects with an AbortError (code ERR_ABORTED). */
  signal?: AbortSignal | undefined;
  /** RPC deadline, ms. Default consumerPullTimeoutMs, or consumerTimeoutMsWhenSuspend for a held pull. */
  timeoutMs?: number | undefined;
}

function checkMessageQueue(mq: MessageQueue): void {
  if (mq === null || typeof mq !== 'object') throw new InvalidArgumentError('mq', 'mq is null');
  if (typeof mq.topic !== 'string' || mq.topic === '')
    throw new InvalidArgumentError('mq.topic', 'must be a topic name');
  if (typeof mq.brokerName !== 'string' || mq.brokerName === '')
    throw new InvalidArgumentError('mq.brokerName', 'must be a broker name');
  if (!Number.isInteger(mq.queueId) || mq.queueId < 0)
    throw new InvalidArgumentError('mq.queueId', 'must be an integer >= 0');
}

function checkOffset(offset: number, field = 'offset'): void {
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new InvalidArgumentError(field, `must be an integer >= 0, got ${String(offset)}`);
}

/**
 * The low-level consumer: you choose the queue, the offset and the batch size of every pull, and
 * commit offsets yourself (`updateConsumeOffset`). It takes no part in a group's rebalance. For
 * queues shared out among a group's members use `PushConsumer` or `LitePullConsumer`.
 */
export class PullConsumer {
  readonly options: ResolvedPullConsumerOptions;
  readonly #lifecycle: ActiveConsumerLifecycle<{ instance: MQClientInstance; wrapper: PullAPIWrapper }>;
  /** The namespace's name mapper: queues and groups below this class are the wire names. */
  readonly #names: NameMapper;
  /** The options with the consumer group as it travels. */
  readonly #wire: ResolvedPullConsumerOptions;

  constructor(options: PullConsumerOptions) {
    this.options = resolvePullConsumerOptions(options);
    const names = (this.#names = new NameMapper(this.options.namespace));
    const o = names.active ? { ...this.options, consumerGroup: names.wrap(this.options.consumerGroup) } : this.options;
    this.#wire = o;
    this.#lifecycle = new ActiveConsumerLifecycle({
      name: 'pull consumer',
      clientOptions: o,
      logger: o.logger,
      inner: {
        messageModel: () => o.messageModel,
        consumeType: () => 'CONSUME_ACTIVELY',
        subscriptions: () => [],
      },
      attach: (instance) => ({ instance, wrapper: new PullAPIWrapper(instance, o.consumerGroup) }),
      shutdownReason: () => new AbortError('the pull consumer is shutting down'),
    });
  }

  get consumerGroup(): string {
    return this.options.consumerGroup;
  }

  /** The client id (`ip@instanceName`). */
  get clientId(): string {
    return buildClientId(this.options);
  }

  /** Joins (or creates) the client instance and registers the consumer group. Idempotent. */
  start(): Promise<void> {
    return this.#names.guard(() => this.#lifecycle.start());
  }

  #running(): { instance: MQClientInstance; wrapper: PullAPIWrapper } {
    return this.#lifecycle.running();
  }

  /**
   * Pulls up to `maxNums` messages of `mq` from `offset` with `selector` (a MessageSelector, or a
   * string taken as a tag expression). Answers at once: FOUND, NO_NEW_MSG, NO_MATCHED_MSG or
   * OFFSET_ILLEGAL.
   */
  pull(
    mq: MessageQueue,
    selector: MessageSelector | string,
    offset: number,
    maxNums: number,
    opts: PullOptions = {},
  ): Promise<PullResult> {
    return this.#plain(() => this.#pullSyncImpl(this.#names.wrapQueue(mq), selector, offset, maxNums, false, opts));
  }

  /**
   * Like `pull`, but when nothing is there yet the broker holds the call (long polling) up to
   * brokerSuspendMaxTimeMs and answers as soon as a matching message arrives.
   */
  pullBlockIfNotFound(
    mq: MessageQueue,
    selector: MessageSelector | string,
    offset: number,
    maxNums: number,
    opts: PullOptions = {},
  ): Promise<PullResult> {
    return this.#plain(() => this.#pullSyncImpl(this.#names.wrapQueue(mq), selector, offset, maxNums, true, opts));
  }

  /** Runs a call with errors and the answer (queues, messages) in plain names. */
  async #plain<T>(fn: () => Promise<T>): Promise<T> {
    return this.#names.unwrapPayload(await this.#names.guard(fn));
  }

  async #pullSyncImpl(
    mq: MessageQueue,
    selector: MessageSelector | string,
    offset: number,
    maxNums: number,
    block: boolean,
    opts: PullOptions,
  ): Promise<PullResult> {
    const { wrapper } = this.#running();
    checkMessageQueue(mq);
    checkOffset(offset);
    if (!Number.isInteger(maxNums) || maxNums <= 0 || maxNums > 2147483647)
      throw new InvalidArgumentError('maxNums', `must be an integer > 0, got ${String(maxNums)}`);
    const sel = MessageSelector.from(selector);
    const sd = buildSubscriptionDataWithType(mq.topic, sel.expression, sel.expressionType);
    const o = this.#wire;
    const timeoutMs = opts.timeoutMs ?? (block ? o.consumerTimeoutMsWhenSuspend : o.consumerPullTimeoutMs);
    if (block && timeoutMs <= o.brokerSuspendMaxTimeMs)
      throw new InvalidArgumentError(
        'timeoutMs',
        `a held pull needs timeoutMs > brokerSuspendMaxTimeMs (${o.brokerSuspendMaxTimeMs})`,
      );
    if (opts.signal?.aborted)
      throw new AbortError('the pull was aborted before it was sent', { cause: opts.signal.reason });
    // Without a caller signal, our shutdown signal is the pull's signal as it is: an AbortController
    // and two listeners per pull are a measurable share of a 32-message pull's client CPU.
    if (!opts.signal)
      return this.#pullOnce(wrapper, mq, sd, offset, maxNums, block, timeoutMs, this.#lifecycle.shutdownSignal);
    // One signal for the caller's abort and our shutdown (listeners removed after the call, so a
    // long-lived caller signal does not collect one per pull).
    const controller = new AbortController();
    const callerSignal = opts.signal;
    const shutdownSignal = this.#lifecycle.shutdownSignal;
    const unlistenCaller = onAbort(callerSignal, () => controller.abort(callerSignal.reason));
    const unlistenShutdown = onAbort(shutdownSignal, () => controller.abort(shutdownSignal.reason));
    try {
      return await this.#pullOnce(wrapper, mq, sd, offset, maxNums, block, timeoutMs, controller.signal);
    } finally {
      unlistenCaller();
      unlistenShutdown();
    }
  }

  async #pullOnce(
    wrapper: PullAPIWrapper,
    mq: MessageQueue,
    sd: SubscriptionData,
    offset: number,
    maxNums: number,
    block: boolean,
    timeoutMs: number,
    signal: AbortSignal,
  ): Promise<PullResult> {
    const o = this.#wire;
    const raw = await wrapper.pullKernelImpl({
      mq,
      subExpression: sd.subString,
      expressionType: sd.expressionType,
      // RocketMQ: the pull consumers send subVersion 0 for tag subscriptions.
      subVersion: isTagType(sd.expressionType) ? 0 : sd.subVersion,
      offset,
      maxNums,
      sysFlag: buildPullSysFlag(false, block, true, false),
      commitOffset: 0,
      brokerSuspendMaxTimeMillis: block ? o.brokerSuspendMaxTimeMs : 0,
      timeoutMillis: timeoutMs,
      signal,
    });
    return wrapper.processPullResult(mq, raw, sd);
  }

  /** The readable queues of `topic`, sorted by topic, broker name and queue id (RocketMQ's order). */
  async fetchSubscribeMessageQueues(topic: string): Promise<MessageQueue[]> {
    const { instance } = this.#running();
    if (typeof topic !== 'string' || topic === '') throw new InvalidArgumentError('topic', 'must be a topic name');
    return this.#plain(() => instance.fetchSubscribeMessageQueues(this.#names.wrap(topic)));
  }

  async #master(plainMq: MessageQueue): Promise<{ instance: MQClientInstance; addr: string; mq: MessageQueue }> {
    const { instance } = this.#running();
    checkMessageQueue(plainMq);
    const mq = this.#names.wrapQueue(plainMq);
    const found = await instance.findBrokerAddressForQueue(mq);
    return { instance, addr: found.brokerAddr, mq };
  }

  /** The queue's smallest offset still stored (GET_MIN_OFFSET). */
  async minOffset(mq: MessageQueue): Promise<number> {
    return this.#plain(async () => {
      const m = await this.#master(mq);
      return m.instance.api.getMinOffset(m.addr, m.mq);
    });
  }

  /** One past the queue's last offset (GET_MAX_OFFSET). */
  async maxOffset(mq: MessageQueue): Promise<number> {
    return this.#plain(async () => {
      const m = await this.#master(mq);
      return m.instance.api.getMaxOffset(m.addr, m.mq);
    });
  }

  /**
   * The offset of the first message stored at or after `timestamp` (`LOWER`, default), or of the last
   * stored at or before it (`UPPER`) (SEARCH_OFFSET_BY_TIMESTAMP).
   */
  async searchOffset(mq: MessageQueue, timestamp: number, boundaryType: BoundaryType = 'LOWER'): Promise<number> {
    if (!Number.isSafeInteger(timestamp))
      throw new InvalidArgumentError('timestamp', 'must be an integer (ms since the epoch)');
    if (boundaryType !== 'LOWER' && boundaryType !== 'UPPER')
      throw new InvalidArgumentError('boundaryType', 'must be LOWER or UPPER');
    return this.#plain(async () => {
      const m = await this.#master(mq);
      return m.instance.api.searchOffset(m.addr, m.mq, timestamp, boundaryType);
    });
  }

  /** Commits `offset` as the group's consumed offset of `mq` on the broker (awaited). */
  async updateConsumeOffset(mq: MessageQueue, offset: number): Promise<void> {
    checkOffset(offset);
    await this.#plain(async () => {
      const { instance, addr, mq: wireMq } = await this.#master(mq);
      await instance.api.updateConsumerOffset(addr, {
        consumerGroup: this.#wire.consumerGroup,
        topic: wireMq.topic,
        queueId: wireMq.queueId,
        commitOffset: offset,
        bname: wireMq.brokerName,
      });
    });
  }

  /** The group's committed offset of `mq` (QUERY_CONSUMER_OFFSET), or -1 when the broker has none. */
  async fetchConsumeOffset(mq: MessageQueue): Promise<number> {
    return this.#plain(async () => {
      const { instance, addr, mq: wireMq } = await this.#master(mq);
      return instance.api.queryConsumerOffset(addr, {
        consumerGroup: this.#wire.consumerGroup,
        topic: wireMq.topic,
        queueId: wireMq.queueId,
        bname: wireMq.brokerName,
      });
    });
  }

  /**
   * The message with offset message id `offsetMsgId` (VIEW_MESSAGE_BY_ID). The id names the store host
   * and commit-log offset. With `namesrvAddr` the call goes to that host and port (the broker's remoting
   * address); over HTTP, to the known broker whose URL has that host and port, else to the first
   * endpoint (the bundled broker stores its HTTP address as its store host).
   */
  async viewMessage(offsetMsgId: string): Promise<MessageExt> {
    return this.#names.unwrapMessage(await this.#names.guard(() => this.#viewMessage(offsetMsgId)));
  }

  async #viewMessage(offsetMsgId: string): Promise<MessageExt> {
    const { instance } = this.#running();
    const { host, offset } = decodeMessageId(offsetMsgId);
    // RocketMQ: the store host of the id is the broker's remoting address.
    if (this.options.namesrvAddr.length > 0)
      return instance.api.viewMessage(
        host.ip.includes(':') ? `[${host.ip}]:${host.port}` : `${host.ip}:${host.port}`,
        offset,
      );
    const candidates = [...instance.allBrokerAddrs(), ...this.options.endpoints];
    const addr =
      candidates.find((a) => {
        const u = new URL(a);
        const port = u.port === '' ? (u.protocol === 'https:' ? 443 : 80) : Number(u.port);
        return (u.hostname === host.ip || u.hostname === `[${host.ip}]`) && port === host.port;
      }) ?? this.options.endpoints[0]!;
    return instance.api.viewMessage(addr, offset);
  }

  /**
   * Aborts pulls still held, unregisters the group from every broker and releases the client instance.
   * Idempotent: returns the same promise.
   */
  shutdown(): Promise<void> {
    return this.#lifecycle.shutdown();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
