/**
 * SimpleConsumer (RocketMQ 5's SimpleConsumer, over the brokers' POP): the application asks for
 * messages (`receive`), each comes with a receipt handle and stays invisible to the rest of the group for
 * the duration asked; `ack` removes it for good, `changeInvisibleDuration` keeps it hidden longer (or
 * shorter: a retry sooner), and one not acknowledged in time is delivered again with its
 * reconsumeTimes + 1, until the group's retryMaxTimes sends it to the DLQ.
 *
 * No queues are shared out: every member pops every queue of its topics (queue id -1) and the broker
 * hands each message to one of them. The consumer registers its group with heartbeats as CONSUME_POP.
 */
import { ConsumerTelemetry } from '../../telemetry/index.js';
import { InvalidArgumentError, StateError } from '../../../common/errors.js';
import type { MessageExt } from '../../../common/message.js';
import { parseExtraInfo } from '../../../protocol/index.js';
import { buildSubscriptionDataWithType } from '../../../filter/index.js';
import { buildClientId } from '../../instance/client-options.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { TraceStats } from '../../trace/async-trace-dispatcher.js';
import { ConsumeOutcomes, type MsgTrace } from '../../trace/trace-hooks.js';
import { startMsgTrace, traceStatsOf } from '../../trace/trace-options.js';

/** What a start attaches: the instance, its POP API and the message trace (when on). */
interface Attached {
  instance: MQClientInstance;
  pop: PopAPIWrapper;
  trace: MsgTrace | undefined;
}
import { ActiveConsumerLifecycle } from '../active-consumer-lifecycle.js';
import { MessageSelector } from '../message-selector.js';
import { NameMapper } from '../../instance/namespace.js';
import { PopAPIWrapper, type PoppedMessage } from '../pop-api-wrapper.js';
import {
  MAX_INVISIBLE_DURATION_MS,
  MAX_RECEIVE_MESSAGE_NUM,
  resolveSimpleConsumerOptions,
  type ResolvedSimpleConsumerOptions,
  type SimpleConsumerOptions,
} from './simple-consumer-options.js';

/** A received message: the stored message, its receipt handle and how many times it was delivered. */
export interface ReceivedMessage extends MessageExt {
  /** Acknowledges this delivery (replaced by `changeInvisibleDuration`). */
  receiptHandle: string;
  /** 1 for the first delivery (RocketMQ 5's deliveryAttempt: reconsumeTimes + 1). */
  deliveryAttempt: number;
}

/** The extra time a receive's RPC waits beyond the broker's hold. */
const RECEIVE_RPC_MARGIN_MS = 5000;
/** ConsumeInitMode.MAX: a new group starts at the queues' ends (RocketMQ's client default). */
const INIT_MODE_MAX = 1;

function checkDuration(field: string, v: number): void {
  if (!Number.isInteger(v) || v <= 0 || v > MAX_INVISIBLE_DURATION_MS)
    throw new InvalidArgumentError(
      field,
      `must be an integer between 1 and ${MAX_INVISIBLE_DURATION_MS} ms, got ${String(v)}`,
    );
}

function checkReceived(message: ReceivedMessage): void {
  if (message === null || typeof message !== 'object' || typeof message.receiptHandle !== 'string')
    throw new InvalidArgumentError('message', 'must be a message returned by receive()');
}

export class SimpleConsumer {
  readonly options: ResolvedSimpleConsumerOptions;
  readonly #subscriptions = new Map<string, MessageSelector>();
  readonly #lifecycle: ActiveConsumerLifecycle<Attached>;
  /** Round robin over (topic, broker) so every queue gets popped. */
  #next = 0;
  /** The namespace's name mapper: the subscriptions are kept plain, the wire gets `ns%Topic`. */
  readonly #names: NameMapper;
  /** The options with the consumer group as it travels. */
  readonly #wire: ResolvedSimpleConsumerOptions;
  /** OpenTelemetry: a receive span per message received, and the consume metrics. */
  readonly #telemetry: ConsumerTelemetry;

  constructor(options: SimpleConsumerOptions) {
    this.options = resolveSimpleConsumerOptions(options);
    for (const [topic, selector] of this.options.subscriptions) this.#subscriptions.set(topic, selector);
    const names = (this.#names = new NameMapper(this.options.namespace));
    const o = names.active ? { ...this.options, consumerGroup: names.wrap(this.options.consumerGroup) } : this.options;
    this.#wire = o;
    this.#telemetry = new ConsumerTelemetry(o.logger, o.openTelemetry, this.options.consumerGroup);
    this.#lifecycle = new ActiveConsumerLifecycle({
      name: 'simple consumer',
      clientOptions: o,
      logger: o.logger,
      inner: {
        messageModel: () => 'CLUSTERING',
        consumeType: () => 'CONSUME_POP',
        subscriptions: () =>
          [...this.#subscriptions].map(([topic, s]) =>
            buildSubscriptionDataWithType(names.wrap(topic), s.expression, s.expressionType),
          ),
      },
      attach: (instance) => ({
        instance,
        pop: new PopAPIWrapper(instance.api),
        trace: startMsgTrace(instance, o, o.consumerGroup, 'CONSUME'),
      }),
      detach: (a) => a.trace?.dispatcher.close(),
      shutdownReason: () => new StateError('the simple consumer is shutting down'),
    });
  }

  get consumerGroup(): string {
    return this.options.consumerGroup;
  }

  get clientId(): string {
    return buildClientId(this.options);
  }

  /** The subscribed topics and their selectors. */
  get subscriptions(): ReadonlyMap<string, MessageSelector> {
    return this.#subscriptions;
  }

  /** Subscribes to `topic` with `selector` (a MessageSelector, or a string taken as a tag expression; default all). */
  subscribe(topic: string, selector: MessageSelector | string = '*'): this {
    if (this.#lifecycle.state === 'SHUTDOWN') throw new StateError('the simple consumer has been shut down');
    if (typeof topic !== 'string' || topic === '') throw new InvalidArgumentError('topic', 'must be a topic name');
    this.#subscriptions.set(topic, MessageSelector.from(selector));
    if (this.#lifecycle.state === 'RUNNING')
      void this.#lifecycle.instance?.sendHeartbeatToAllBrokers().catch(() => undefined);
    return this;
  }

  /** Stops receiving `topic`. */
  unsubscribe(topic: string): this {
    this.#subscriptions.delete(topic);
    return this;
  }

  /** Joins (or creates) the client instance and registers the group. Idempotent. */
  start(): Promise<void> {
    return this.#names.guard(() =>
      this.#lifecycle.start().then(() => this.#telemetry.start(this.#lifecycle.instance?.clientId ?? this.clientId)),
    );
  }

  /** What the message trace has sent and dropped; undefined unless `enableMsgTrace` is on and started. */
  traceStats(): TraceStats | undefined {
    return this.#lifecycle.state === 'RUNNING' ? traceStatsOf(this.#running().trace) : undefined;
  }

  #running(): Attached {
    return this.#lifecycle.running();
  }

  /**
   * Receives up to `maxMessageNum` (1..32) messages of the subscribed topics, invisible to the rest of the
   * group for `invisibleDurationMs`. When none is there, the broker holds the call up to awaitDurationMs;
   * an empty array then means nothing arrived.
   */
  async receive(
    maxMessageNum: number,
    invisibleDurationMs: number,
    opts: { signal?: AbortSignal } = {},
  ): Promise<ReceivedMessage[]> {
    const names = this.#names;
    const found = await names.guard(() => this.#receive(maxMessageNum, invisibleDurationMs, opts));
    return found.map((m) => names.unwrapMessage(m));
  }

  async #receive(
    maxMessageNum: number,
    invisibleDurationMs: number,
    opts: { signal?: AbortSignal },
  ): Promise<ReceivedMessage[]> {
    if (!Number.isInteger(maxMessageNum) || maxMessageNum <= 0 || maxMessageNum > MAX_RECEIVE_MESSAGE_NUM)
      throw new InvalidArgumentError(
        'maxMessageNum',
        `must be an integer between 1 and ${MAX_RECEIVE_MESSAGE_NUM}, got ${String(maxMessageNum)}`,
      );
    checkDuration('invisibleDurationMs', invisibleDurationMs);
    const { instance, pop, trace } = this.#running();
    if (this.#subscriptions.size === 0)
      throw new StateError('the simple consumer has no subscription: call subscribe() first');
    const targets: Array<{ topic: string; brokerName: string; selector: MessageSelector }> = [];
    for (const [plainTopic, selector] of this.#subscriptions) {
      const topic = this.#names.wrap(plainTopic);
      const mqs = await instance.fetchSubscribeMessageQueues(topic);
      for (const brokerName of new Set(mqs.map((mq) => mq.brokerName))) targets.push({ topic, brokerName, selector });
    }
    if (targets.length === 0) return [];
    const target = targets[this.#next++ % targets.length]!;
    const found = await instance.findBrokerAddressForQueue({
      topic: target.topic,
      brokerName: target.brokerName,
      queueId: 0,
    });
    const signal = opts.signal
      ? AbortSignal.any([opts.signal, this.#lifecycle.shutdownSignal])
      : this.#lifecycle.shutdownSignal;
    const o = this.#wire;
    const res = await pop.pop(
      found.brokerAddr,
      target.brokerName,
      {
        consumerGroup: o.consumerGroup,
        topic: target.topic,
        queueId: -1,
        maxMsgNums: maxMessageNum,
        invisibleTimeMs: invisibleDurationMs,
        pollTimeMs: o.awaitDurationMs,
        expressionType: target.selector.expressionType,
        expression: target.selector.expression,
        initMode: INIT_MODE_MAX,
      },
      { timeoutMs: o.awaitDurationMs + Math.max(o.requestTimeoutMs, RECEIVE_RPC_MARGIN_MS), signal },
    );
    const out: ReceivedMessage[] = [];
    for (const p of res.found) {
      if (p.message.reconsumeTimes > o.maxReconsumeTimes) {
        await this.#toDeadLetter(instance, pop, found.brokerAddr, target.brokerName, p);
        continue;
      }
      out.push(
        Object.assign(p.message, { receiptHandle: p.receiptHandle, deliveryAttempt: p.message.reconsumeTimes + 1 }),
      );
    }
    trace?.received(out);
    this.#telemetry.received(out);
    return out;
  }

  /**
   * Moves a message past maxReconsumeTimes to %DLQ%<group> (CONSUMER_SEND_MSG_BACK with delay level -1,
   * which RocketMQ's broker sends straight to the DLQ) and acknowledges it, as RocketMQ 5's proxy does for
   * a message past its max attempts. When either step fails the message is left alone: it comes back
   * after its invisible time and is tried again, so it is never lost.
   */
  async #toDeadLetter(
    instance: MQClientInstance,
    pop: PopAPIWrapper,
    addr: string,
    brokerName: string,
    p: PoppedMessage,
  ): Promise<void> {
    const o = this.#wire;
    try {
      await instance.api.consumerSendMessageBack(addr, brokerName, p.message, o.consumerGroup, -1, o.maxReconsumeTimes);
      await pop.ack(addr, o.consumerGroup, p.message.topic, p.handle, p.receiptHandle, {});
    } catch (e) {
      o.logger.warn(
        { err: e, group: o.consumerGroup, msgId: p.message.msgId },
        'moving a message to the DLQ failed: it comes back after its invisible time',
      );
    }
  }

  async #brokerOf(message: ReceivedMessage): Promise<{
    pop: PopAPIWrapper;
    addr: string;
    handle: ReturnType<typeof parseExtraInfo> & object;
    trace: MsgTrace | undefined;
  }> {
    checkReceived(message);
    const { instance, pop, trace } = this.#running();
    const handle = parseExtraInfo(message.receiptHandle);
    if (typeof handle === 'string') throw new InvalidArgumentError('message.receiptHandle', handle);
    const found = await instance.findBrokerAddressForQueue({
      topic: this.#names.wrap(message.topic),
      brokerName: handle.brokerName,
      queueId: handle.queueId,
    });
    return { pop, addr: found.brokerAddr, handle, trace };
  }

  /** Acknowledges `message`: it is never delivered again. Rejects when its receipt handle is no longer valid. */
  async ack(message: ReceivedMessage): Promise<void> {
    const names = this.#names;
    await names.guard(async () => {
      const { pop, addr, handle, trace } = await this.#brokerOf(message);
      const topic = names.wrap(message.topic);
      await pop.ack(addr, this.#wire.consumerGroup, topic, handle, message.receiptHandle, {});
      trace?.settled(message, ConsumeOutcomes.SUCCESS);
    });
  }

  /**
   * Keeps `message` invisible for `invisibleDurationMs` from now; its receipt handle is replaced (the old
   * one is no longer valid). Resolves with the message.
   */
  async changeInvisibleDuration(message: ReceivedMessage, invisibleDurationMs: number): Promise<ReceivedMessage> {
    checkDuration('invisibleDurationMs', invisibleDurationMs);
    const names = this.#names;
    message.receiptHandle = await names.guard(async () => {
      const { pop, addr, handle, trace } = await this.#brokerOf(message);
      trace?.settled(message, ConsumeOutcomes.FAILED);
      const topic = names.wrap(message.topic);
      const group = this.#wire.consumerGroup;
      return pop.changeInvisibleTime(addr, group, topic, handle, message.receiptHandle, invisibleDurationMs, {});
    });
    return message;
  }

  /**
   * Receives messages one at a time, `batchSize` at once, each invisible for `invisibleDurationMs`. A
   * message is acknowledged when the loop asks for the next one, so a message whose loop body threw (or
   * broke out) is not, and comes back after its invisible duration. Ends at shutdown or when `signal` aborts.
   */
  async *messages(
    opts: { batchSize?: number; invisibleDurationMs?: number; signal?: AbortSignal } = {},
  ): AsyncGenerator<ReceivedMessage, void, undefined> {
    const batchSize = opts.batchSize ?? this.options.batchSize;
    const invisible = opts.invisibleDurationMs ?? this.options.invisibleDurationMs;
    for (;;) {
      if (this.#lifecycle.shutdownCalled || opts.signal?.aborted) return;
      let batch: ReceivedMessage[];
      try {
        batch = await this.receive(batchSize, invisible, { signal: opts.signal });
      } catch (e) {
        if (this.#lifecycle.shutdownCalled || opts.signal?.aborted) return;
        throw e;
      }
      for (const message of batch) {
        yield message;
        // The loop body finished without throwing: the message is done with.
        await this.ack(message);
      }
    }
  }

  [Symbol.asyncIterator](): AsyncGenerator<ReceivedMessage, void, undefined> {
    return this.messages();
  }

  /** Aborts receives in flight, unregisters the group and releases the client instance. Idempotent. */
  shutdown(): Promise<void> {
    this.#telemetry.stop();
    return this.#lifecycle.shutdown();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
