/**
 * Producer (RocketMQ's DefaultMQProducer, modernised): `start()`, `send(message)`, `sendBatch(messages)`,
 * `shutdown()`. Sends are synchronous in RocketMQ's sense: the promise resolves with the broker's answer.
 *
 * RocketMQ behaviour kept (DefaultMQProducerImpl.sendDefaultImpl / sendKernelImpl):
 * - queues are chosen round robin over the topic's writable queues; after a failure the next attempt
 *   avoids the broker that failed, up to `retryTimesWhenSendFailed` extra attempts, all within one
 *   `sendMsgTimeoutMs` deadline; with `sendLatencyFaultEnable` (on by default here) a broker that failed or
 *   answered slowly is avoided for a while (MQFaultStrategy's latency table);
 * - an unknown topic is sent through the route of `createTopicKey` (TBW102) with `defaultTopic` set,
 *   and the broker auto-creates it;
 * - UNIQ_KEY (the msgId) is set on the client (MessageClientIDSetter), unless the message has one;
 * - bodies of at least `compressMsgBodyOverBytes` are zlib-compressed (level 5) with COMPRESSED set.
 *
 * The send path (producer-send), queue selection with fault tolerance (mq-fault-strategy) and the
 * batch paths (producer-batch) live beside this file; Producer keeps the lifecycle and the public API.
 */
import { buildClientId } from '../instance/client-options.js';
import { StateError } from '../../common/errors.js';
import type { Message, MessageQueue } from '../../common/message.js';
import type { Logger } from '../../common/logger.js';
import { SlotSet } from '../../common/slot-set.js';
import { BATCH_ELEMENT_OVERHEAD } from '../../common/codec/index.js';
import { ResponseCode } from '../../protocol/response-code.js';
import { errorFromResponse } from '../../protocol/response-error.js';
import { MQClientInstance } from '../instance/mq-client-instance.js';
import { resolveProducerOptions, type ProducerOptions, type ResolvedProducerOptions } from './producer-options.js';
import { SafeEventEmitter } from '../instance/safe-emitter.js';
import type { ClientEventListen, ClientEventUnlisten } from '../instance/event-methods.js';
import { orderedChoice } from './mq-fault-strategy.js';
import { batchHeader, canAutoBatch, dispatchSendTurn, encodeSendBatch, type QueuedSend } from './producer-batch.js';
import { buildSendRequest, ProducerSender, type SendRequest } from './producer-send.js';
import type { MQProducerInner } from '../instance/mq-consumer-inner.js';
import type { TraceStats } from '../trace/async-trace-dispatcher.js';
import type { MsgTrace } from '../trace/trace-hooks.js';
import { startMsgTrace, traceStatsOf } from '../trace/trace-options.js';
import { SendAccumulator } from './send-accumulator.js';
import { checkMessage, checkTopic } from './validators.js';
import { NameMapper, unwrapEvents } from '../instance/namespace.js';
import { ProducerTelemetry } from '../telemetry/index.js';

export type { ProducerEvents, SendOptions, SendResult } from './producer-types.js';
import type { ProducerEvents, SendOptions, SendResult } from './producer-types.js';

type State = 'CREATE_JUST' | 'STARTING' | 'RUNNING' | 'SHUTDOWN';

/**
 * Sends messages to a topic. Create it with a `producerGroup` and `endpoints` (the bundled broker) or
 * `namesrvAddr` (a RocketMQ cluster), `start()` it, `send()` messages (with tags, keys, properties, a
 * delay level or a sharding key), then `shutdown()`. A send resolves once the broker has stored the
 * message; a failed send is retried on another queue within `sendMsgTimeoutMs`.
 *
 * ```ts
 * const producer = new Producer({ producerGroup: 'orders', endpoints: 'http://127.0.0.1:8081' });
 * await producer.start();
 * await producer.send({ topic: 'Orders', tags: 'Paid', body: Buffer.from('hello') });
 * await producer.shutdown();
 * ```
 */
export class Producer {
  readonly options: ResolvedProducerOptions;
  readonly events: SafeEventEmitter<ProducerEvents>;
  /** As `events.on` (KafkaJS's `producer.on`): the same events and payloads; returns the producer. */
  readonly on: ClientEventListen<ProducerEvents, this> = (event, fn) => (this.events.on(event, fn), this);
  /** As `events.once`: the listener runs for the next such event only. */
  readonly once: ClientEventListen<ProducerEvents, this> = (event, fn) => (this.events.once(event, fn), this);
  /** As `events.off`: removes `fn`, or every listener of the event without it. */
  readonly off: ClientEventUnlisten<ProducerEvents, this> = (event, fn) => (this.events.off(event, fn), this);
  readonly #logger: Logger;
  #instance: MQClientInstance | undefined;
  #state: State = 'CREATE_JUST';
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<void> | undefined;
  readonly #inflight = new SlotSet<Promise<unknown>>();
  /** The send path: route cache, queue selection with fault tolerance, retries. */
  readonly #sender: ProducerSender;
  /** Groups the plain sends of one turn (the autoBatch option); undefined when it is off. */
  readonly #accumulator: SendAccumulator<QueuedSend> | undefined;
  /** The namespace's name mapper: the send path below it sees only wire names (`ns%Topic`, `ns%group`). */
  readonly #names: NameMapper;
  /** The options with the producer group as it travels. */
  readonly #wire: ResolvedProducerOptions;
  /** OpenTelemetry spans and metrics of the sends; inert until start() finds the API. */
  readonly #telemetry: ProducerTelemetry;

  constructor(options: ProducerOptions) {
    this.options = resolveProducerOptions(options);
    this.#logger = this.options.logger;
    const { autoBatch } = this.options;
    const names = (this.#names = new NameMapper(this.options.namespace));
    const wire = names.active
      ? { ...this.options, producerGroup: names.wrap(this.options.producerGroup) }
      : this.options;
    this.#wire = wire;
    this.events = unwrapEvents(
      new SafeEventEmitter<ProducerEvents>((err, event) =>
        this.#logger.error({ err, event }, 'a producer event listener threw'),
      ),
      names,
    );
    this.#telemetry = new ProducerTelemetry(this.#logger, this.options.openTelemetry, this.options.producerGroup);
    const sender = new ProducerSender(wire, this.events, this.#telemetry);
    this.#sender = sender;
    this.#accumulator =
      autoBatch === false
        ? undefined
        : new SendAccumulator<QueuedSend>(autoBatch, (topic, sends) => dispatchSendTurn(sender, wire, topic, sends));
  }

  /**
   * The namespace's name mapper.
   * @internal
   */
  protected get names(): NameMapper {
    return this.#names;
  }

  /**
   * The producer group as it travels (`ns%group` with a namespace).
   * @internal
   */
  protected get wireGroup(): string {
    return this.#wire.producerGroup;
  }

  /** `message` as it travels: its topic in the namespace and, as RocketMQ's producer does, INSTANCE_ID set. */
  #toWire<M extends Message>(message: M): M {
    const names = this.#names;
    if (!names.active || message === null || typeof message !== 'object' || typeof message.topic !== 'string')
      return message;
    const properties = { ...(message.properties ?? {}), INSTANCE_ID: names.namespace! };
    return { ...message, topic: names.wrap(message.topic), properties };
  }

  /** A selector sees the plain queues and message; its pick is mapped back to the wire queue. */
  #wireOptions(opts: SendOptions, message: Message): SendOptions {
    const { selector } = opts;
    const names = this.#names;
    if (!names.active || selector === undefined || selector === null) return opts;
    if (typeof selector !== 'function' && (typeof selector !== 'object' || typeof selector.select !== 'function'))
      return opts;
    const run = typeof selector === 'function' ? selector : selector.select.bind(selector);
    return {
      ...opts,
      selector: (mqs, _wireMessage, arg) => {
        const picked = run(
          mqs.map((q) => names.unwrapQueue(q)),
          message,
          arg,
        );
        return picked !== null && typeof picked === 'object' ? names.wrapQueue(picked) : picked;
      },
    };
  }

  /** The broker's answer with the plain topic, and errors with plain names. */
  #plain(p: Promise<SendResult>): Promise<SendResult> {
    return this.#names.active ? this.#plainAsync(p) : p;
  }

  async #plainAsync(p: Promise<SendResult>): Promise<SendResult> {
    const names = this.#names;
    try {
      const r = await p;
      return { ...r, messageQueue: names.unwrapQueue(r.messageQueue) };
    } catch (err) {
      throw names.unwrapError(err);
    }
  }

  /** The client id (`ip@instanceName`). */
  get clientId(): string {
    return buildClientId(this.options);
  }

  /** Joins (or creates) the client instance and registers the producer group. Idempotent. */
  start(): Promise<void> {
    if (this.#state === 'SHUTDOWN') return Promise.reject(new StateError('the producer has been shut down'));
    this.#startPromise ??= this.#start();
    return this.#startPromise;
  }

  async #start(): Promise<void> {
    this.#state = 'STARTING';
    const instance = MQClientInstance.acquire(this.options);
    try {
      instance.registerProducer(this.#wire.producerGroup, this.producerInner());
      await instance.start();
      await this.#telemetry.start(instance.clientId);
    } catch (err) {
      await instance.unregisterProducer(this.#wire.producerGroup).catch(() => undefined);
      await instance.release();
      this.#state = 'SHUTDOWN';
      throw err;
    }
    this.#instance = instance;
    this.#sender.trace = startMsgTrace(instance, this.options, this.options.producerGroup, 'PRODUCE');
    if (this.#state === 'STARTING') this.#state = 'RUNNING';
  }

  #running(): MQClientInstance {
    if (this.#state !== 'RUNNING' || !this.#instance)
      throw new StateError(
        this.#state === 'SHUTDOWN'
          ? 'the producer has been shut down'
          : 'the producer is not started: call start() first',
      );
    return this.#instance;
  }

  /**
   * What the client instance knows of this producer (TransactionProducer adds the check-back).
   * @internal
   */
  protected producerInner(): MQProducerInner {
    return {
      groupName: () => this.#wire.producerGroup,
      connectionError: (e) => void this.events.emit('connectionError', e),
    };
  }

  /** What the message trace has sent and dropped; undefined unless `enableMsgTrace` is on. */
  traceStats(): TraceStats | undefined {
    return traceStatsOf(this.#sender.trace);
  }

  /**
   * The message trace's hooks while the producer runs with `enableMsgTrace`.
   * @internal
   */
  protected msgTrace(): MsgTrace | undefined {
    return this.#sender.trace;
  }

  /**
   * The client instance while the producer runs; throws StateError otherwise.
   * @internal
   */
  protected runningInstance(): MQClientInstance {
    return this.#running();
  }

  /**
   * Sends one message on its own (never auto-batched), letting `prepare` change the request first — how
   * TransactionProducer marks a half message.
   * @internal
   */
  protected sendPrepared(
    plainMessage: Message,
    opts: SendOptions,
    prepare: (req: SendRequest) => void,
  ): Promise<SendResult> {
    const message = this.#toWire(plainMessage);
    const send = async (): Promise<SendResult> => {
      const instance = this.#running();
      const o = this.#wire;
      checkMessage(message, o.maxMessageSizeBytes, o.createTopicKey, 'message', o.maxDelayLevel);
      const req = buildSendRequest(message, opts, o);
      prepare(req);
      const choose = orderedChoice(message, opts);
      const send = (): Promise<SendResult> =>
        this.#sender.sendDefaultImpl(instance, message.topic, req.header, req.body, req.uniqId, opts, choose);
      return this.#telemetry.send(req, send);
    };
    return this.#track(this.#plain(send()));
  }

  /** Sends one message and resolves with the broker's answer. */
  send(message: Message, opts: SendOptions = {}): Promise<SendResult> {
    return this.#track(this.#plain(this.#send(this.#toWire(message), this.#wireOptions(opts, message))));
  }

  /**
   * Sends messages of one topic as one batch (SEND_BATCH_MESSAGE): stored together on one queue, in
   * order. Delay levels and retry topics are not allowed in a batch (as in RocketMQ).
   */
  sendBatch(messages: readonly Message[], opts: SendOptions = {}): Promise<SendResult> {
    const wire = this.#names.active && Array.isArray(messages) ? messages.map((m) => this.#toWire(m)) : messages;
    return this.#track(this.#plain(this.#sendBatch(wire, opts)));
  }

  #track<T>(p: Promise<T>): Promise<T> {
    const slot = this.#inflight.add(p);
    const untrack = (): void => this.#inflight.delete(slot, p);
    void p.then(untrack, untrack);
    return p;
  }

  async #send(message: Message, opts: SendOptions): Promise<SendResult> {
    const instance = this.#running();
    const o = this.#wire;
    checkMessage(message, o.maxMessageSizeBytes, o.createTopicKey, 'message', o.maxDelayLevel);
    const choose = orderedChoice(message, opts);
    const req = buildSendRequest(message, opts, o);
    return this.#telemetry.send(req, () => this.#dispatch(instance, message, opts, choose, req));
  }

  /** Queues the request for an auto-batch, or sends it on its own. */
  #dispatch(
    instance: MQClientInstance,
    message: Message,
    opts: SendOptions,
    choose: ReturnType<typeof orderedChoice>,
    req: SendRequest,
  ): Promise<SendResult> {
    const { header, body, uniqId } = req;
    const accumulator = this.#accumulator;
    if (accumulator !== undefined && canAutoBatch(message, opts, choose, req)) {
      const bytes = BATCH_ELEMENT_OVERHEAD + body.length + Buffer.byteLength(header.properties ?? '');
      return new Promise<SendResult>((resolve, reject) =>
        accumulator.add(message.topic, { instance, header, body, uniqId, resolve, reject }, bytes),
      );
    }
    return this.#sender.sendDefaultImpl(instance, message.topic, header, body, uniqId, opts, choose);
  }

  async #sendBatch(messages: readonly Message[], opts: SendOptions): Promise<SendResult> {
    const instance = this.#running();
    return this.#telemetry.sendBatch(messages, (carried) => {
      const { topic, body, msgId } = encodeSendBatch(carried, this.#wire);
      return this.#sender.sendDefaultImpl(instance, topic, batchHeader(this.#wire, topic), body, msgId, opts);
    });
  }

  /** The writable queues of `topic` (RocketMQ's fetchPublishMessageQueues). */
  async fetchPublishMessageQueues(topic: string): Promise<MessageQueue[]> {
    const instance = this.#running();
    checkTopic(topic, 'topic', this.options.createTopicKey);
    const info = await instance.getTopicPublishInfo(this.#names.wrap(topic), { refresh: true });
    if (!info) throw errorFromResponse(ResponseCode.TOPIC_NOT_EXIST, `no route info of this topic: ${topic}`);
    return info.messageQueues.map((q) => this.#names.unwrapQueue(q));
  }

  /**
   * Waits for sends in flight (up to the send timeout), unregisters the producer group and releases the
   * client instance. Idempotent: returns the same promise.
   */
  shutdown(): Promise<void> {
    this.#shutdownPromise ??= this.#shutdown();
    return this.#shutdownPromise;
  }

  async #shutdown(): Promise<void> {
    const starting = this.#startPromise;
    this.#state = 'SHUTDOWN';
    this.#accumulator?.flush();
    if (starting) await starting.catch(() => undefined);
    await Promise.allSettled(this.#inflight.toArray());
    const instance = this.#instance;
    this.#instance = undefined;
    if (!instance) return;
    await this.#sender.trace?.dispatcher.close();
    try {
      await instance.unregisterProducer(this.#wire.producerGroup);
    } catch (err) {
      this.#logger.warn({ err }, 'unregistering the producer failed');
    }
    await instance.release();
    this.#telemetry.stop();
    this.events.removeAllListeners();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
