/**
 * The producer's send path (RocketMQ's DefaultMQProducerImpl.sendDefaultImpl and sendKernelImpl):
 * a message becomes a SEND_MESSAGE header and body, and one request is tried on a queue after another
 * until the broker stores it, an error that is not worth retrying comes back, or the deadline passes.
 * The topic's writable queues come from the route cache (tryToFindTopicPublishInfo), borrowing the
 * template topic's brokers while the topic does not exist yet.
 */
import { AclAccessDeniedError, RocketMQError, TransportError } from '../../common/errors.js';
import { MessageConst, RETRY_GROUP_TOPIC_PREFIX, type Message, type MessageQueue } from '../../common/message.js';
import type { Logger } from '../../common/logger.js';
import { CompressionType, MessageSysFlag, createUniqId, messageProperties2String } from '../../common/codec/index.js';
import { compressBody } from '../../common/codec/compression.js';
import { ResponseCode } from '../../protocol/response-code.js';
import { errorFromResponse } from '../../protocol/response-error.js';
import type { SendMessageRequestHeader } from '../../protocol/commands/index.js';
import { AbortError } from '../../remoting/remoting-errors.js';
import type { MQClientInstance, TopicPublishInfo } from '../instance/mq-client-instance.js';
import type { SafeEventEmitter } from '../instance/safe-emitter.js';
import { unreachableError } from '../instance/connection-errors.js';
import { chosenQueue, MQFaultStrategy } from './mq-fault-strategy.js';
import type { ResolvedProducerOptions } from './producer-options.js';
import type { ProducerEvents, SendOptions, SendResult } from './producer-types.js';
import { messageToProperties } from './validators.js';
import type { MsgTrace } from '../trace/trace-hooks.js';
import type { ProducerTelemetry } from '../telemetry/index.js';

/** RocketMQ's retryResponseCodes: broker answers after which a send is tried again elsewhere. */
const RETRY_RESPONSE_CODES = new Set<number>([
  ResponseCode.TOPIC_NOT_EXIST,
  ResponseCode.SERVICE_NOT_AVAILABLE,
  ResponseCode.SYSTEM_ERROR,
  ResponseCode.SYSTEM_BUSY,
  ResponseCode.NO_PERMISSION,
]);

function shouldRetry(err: unknown): boolean {
  if (err instanceof AbortError || !(err instanceof RocketMQError)) return false;
  // RocketMQ's broker answers an ACL refusal with SYSTEM_ERROR, but every broker refuses the account alike.
  if (err instanceof AclAccessDeniedError) return false;
  if (err.responseCode !== undefined && err.responseCode >= 0)
    return RETRY_RESPONSE_CODES.has(err.responseCode) || err.retriable;
  return err.retriable;
}

interface PublishEntry {
  info: TopicPublishInfo;
  /** The route came from the template topic (the topic does not exist yet). */
  fromDefault: boolean;
}

/** One message made ready to send: its header (without queue and broker), body and message properties. */
export interface SendRequest {
  header: SendMessageRequestHeader;
  body: Buffer;
  uniqId: string;
  props: Map<string, string>;
}

/**
 * The request of a single message: UNIQ_KEY set on the client unless the message has one, the body
 * compressed from `compressMsgBodyOverBytes`, and a retry topic's reconsume counts moved to the header.
 */
export function buildSendRequest(message: Message, opts: SendOptions, o: ResolvedProducerOptions): SendRequest {
  const props = messageToProperties(message);
  if (opts.shardingKey !== undefined) props.set(MessageConst.SHARDING_KEY, opts.shardingKey);
  let uniqId = props.get(MessageConst.UNIQ_KEY);
  if (uniqId === undefined) {
    uniqId = createUniqId(o.clock);
    props.set(MessageConst.UNIQ_KEY, uniqId);
  }
  let body: Buffer = Buffer.isBuffer(message.body) ? message.body : Buffer.from(message.body);
  let sysFlag = 0;
  if (body.length >= o.compressMsgBodyOverBytes) {
    body = compressBody(body, CompressionType.ZLIB);
    sysFlag |= MessageSysFlag.COMPRESSED_FLAG | (CompressionType.ZLIB << 8);
  }
  const header: SendMessageRequestHeader = {
    producerGroup: o.producerGroup,
    topic: message.topic,
    defaultTopic: o.createTopicKey,
    defaultTopicQueueNums: o.defaultTopicQueueNums,
    queueId: 0,
    sysFlag,
    bornTimestamp: 0,
    flag: message.flag ?? 0,
    reconsumeTimes: 0,
    unitMode: false,
    bname: '', // set per attempt (see ProducerSender.sendDefaultImpl)
  };
  // RocketMQ: a send to a retry topic carries reconsumeTimes / maxReconsumeTimes in the header.
  if (message.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
    const rt = props.get(MessageConst.RECONSUME_TIME);
    if (rt !== undefined && /^\d+$/.test(rt)) {
      header.reconsumeTimes = Number(rt);
      props.delete(MessageConst.RECONSUME_TIME);
    }
    const mrt = props.get(MessageConst.MAX_RECONSUME_TIMES);
    if (mrt !== undefined && /^\d+$/.test(mrt)) {
      header.maxReconsumeTimes = Number(mrt);
      props.delete(MessageConst.MAX_RECONSUME_TIMES);
    }
  }
  header.properties = messageProperties2String(props);
  return { header, body, uniqId, props };
}

/** Sends requests for one producer: its route cache, its fault strategy and its `sendError` events. */
export class ProducerSender {
  readonly #options: ResolvedProducerOptions;
  readonly #events: SafeEventEmitter<ProducerEvents>;
  readonly #logger: Logger;
  /** RocketMQ's topicPublishInfoTable. */
  readonly #publish = new Map<string, PublishEntry>();
  readonly #faultStrategy: MQFaultStrategy;
  /** The producer's message trace while it runs with `enableMsgTrace`. */
  trace: MsgTrace | undefined;

  constructor(
    options: ResolvedProducerOptions,
    events: SafeEventEmitter<ProducerEvents>,
    private readonly telemetry?: ProducerTelemetry,
  ) {
    this.#options = options;
    this.#events = events;
    this.#logger = options.logger;
    const { clock } = options;
    this.#faultStrategy = new MQFaultStrategy(() => clock.now(), options.sendLatencyFaultEnable);
  }

  /**
   * Sends `body` with `baseHeader` to a queue of `topic`, retrying on another queue (the one `choose`
   * picks, for an ordered send) while the error is retriable and the deadline allows.
   */
  async sendDefaultImpl(
    instance: MQClientInstance,
    topic: string,
    baseHeader: SendMessageRequestHeader,
    body: Buffer,
    msgId: string,
    opts: SendOptions,
    choose?: (mqs: readonly MessageQueue[]) => MessageQueue,
  ): Promise<SendResult> {
    const { clock } = this.#options;
    const timeoutMs = opts.timeoutMs ?? this.#options.sendMsgTimeoutMs;
    const beginAt = clock.now();
    const attempts = 1 + this.#options.retryTimesWhenSendFailed;
    let lastBrokerName: string | undefined;
    let lastErr: unknown;
    /** Brokers this send could not reach, `name (addr)` → the last failure, for the final error. */
    const unreached = new Map<string, unknown>();
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (opts.signal?.aborted) throw new AbortError('the send was aborted', { cause: opts.signal.reason });
      const remaining = timeoutMs - (clock.now() - beginAt);
      if (remaining <= 0) break;
      let mq: MessageQueue | undefined;
      let addr: string | undefined;
      const attemptAt = clock.now();
      try {
        const entry = await this.#tryToFindTopicPublishInfo(instance, topic);
        // An ordered send goes to the queue its selector picks, every attempt (never elsewhere).
        mq = choose
          ? chosenQueue(choose, entry.info.messageQueues)
          : this.#faultStrategy.selectOneMessageQueue(entry.info, lastBrokerName);
        lastBrokerName = mq.brokerName;
        addr = instance.findBrokerAddressInPublish(mq.brokerName);
        if (addr === undefined) {
          await instance.updateTopicRouteInfo(topic);
          addr = instance.findBrokerAddressInPublish(mq.brokerName);
        }
        if (addr === undefined)
          throw new RocketMQError('ERR_BROKER_NOT_EXIST', `the broker[${mq.brokerName}] not exist`, {
            retriable: true,
          });
        // Only fields the base header already has are overwritten: a copy given one more property than
        // its source keeps each send's whole request alive across young-generation collections.
        const header = { ...baseHeader, queueId: mq.queueId, bornTimestamp: clock.now(), bname: mq.brokerName };
        const left = timeoutMs - (clock.now() - beginAt);
        if (left <= 0) break;
        const r = await instance.api.sendMessage(addr, header, body, { timeoutMs: left, signal: opts.signal });
        this.trace?.sent(addr, header, body.length, msgId, r);
        this.#faultStrategy.updateFaultItem(mq.brokerName, clock.now() - attemptAt, false);
        // The topic exists now: forget the template route so the next send fetches the real one.
        if (entry.fromDefault) this.#publish.delete(topic);
        return {
          sendStatus: r.sendStatus,
          msgId,
          offsetMsgId: r.offsetMsgId,
          // The queue this producer chose: a delayed message is parked by the broker on a schedule
          // queue, but it is delivered on this one.
          messageQueue: { topic, brokerName: mq.brokerName, queueId: mq.queueId },
          queueOffset: r.queueOffset,
          transactionId: r.transactionId,
        };
      } catch (err) {
        lastErr = err;
        if (mq && addr !== undefined && err instanceof TransportError && err.code === 'ERR_TRANSPORT') {
          const broker = `${mq.brokerName} (${addr})`;
          unreached.delete(broker); // the last failure goes last
          unreached.set(broker, err);
        }
        this.#events.emit('sendError', err, { topic, messageQueue: mq, attempt });
        this.#logger.debug({ err, topic, mq, attempt }, 'send attempt failed');
        if (!shouldRetry(err)) throw err;
        this.telemetry?.retried(topic);
        if (mq) this.#faultStrategy.updateFaultItem(mq.brokerName, clock.now() - attemptAt, true);
        if (err instanceof RocketMQError && err.responseCode === ResponseCode.TOPIC_NOT_EXIST)
          this.#publish.delete(topic);
      }
    }
    const timedOut = `send to ${topic} timed out after ${timeoutMs} ms`;
    if (lastErr instanceof RocketMQError && lastErr.code === 'ERR_TIMEOUT')
      throw new RocketMQError('ERR_TIMEOUT', timedOut, { retriable: true, cause: lastErr });
    // A broker that could not be reached is named in the final error, with what the socket said (not the
    // transport's note on when it will try that address again: this send will not).
    if (lastErr !== undefined && [...unreached.values()].at(-1) === lastErr)
      throw unreachableError('broker', `to send to ${topic}`, [...unreached]);
    if (lastErr) throw lastErr;
    throw new RocketMQError('ERR_TIMEOUT', timedOut, { retriable: true });
  }

  /** The writable queues of `topic`, from the cached route, a fresh one, or the template topic's. */
  async #tryToFindTopicPublishInfo(instance: MQClientInstance, topic: string): Promise<PublishEntry> {
    const cached = this.#publish.get(topic);
    const route = instance.getTopicRouteData(topic);
    if (cached && (cached.fromDefault || cached.info.route === route) && cached.info.messageQueues.length > 0)
      return cached;
    let info = await instance.getTopicPublishInfo(topic);
    let fromDefault = false;
    if (!info || info.messageQueues.length === 0) {
      // RocketMQ: no route for the topic — borrow the template topic's brokers (tryToFindTopicPublishInfo).
      const def = await instance.getTopicPublishInfo(this.#options.createTopicKey);
      if (!def || def.messageQueues.length === 0)
        throw errorFromResponse(ResponseCode.TOPIC_NOT_EXIST, `no route info of this topic: ${topic}`);
      const perBroker = new Map<string, number>();
      const mqs: MessageQueue[] = [];
      for (const q of def.messageQueues) {
        const n = perBroker.get(q.brokerName) ?? 0;
        if (n >= this.#options.defaultTopicQueueNums) continue;
        perBroker.set(q.brokerName, n + 1);
        mqs.push({ topic, brokerName: q.brokerName, queueId: q.queueId });
      }
      info = { topic, messageQueues: mqs, route: def.route };
      fromDefault = true;
    }
    const entry = { info, fromDefault };
    this.#publish.set(topic, entry);
    return entry;
  }
}
