/**
 * MQClientAPI (RocketMQ's MQClientAPIImpl): one typed method per command, over a RemotingClient.
 * Each method builds the request header, picks the timeout, and turns the answer into a value; a
 * response code the caller does not expect becomes an error through `errorFromResponse` (the one
 * mapping). PULL_MESSAGE is the exception: its four protocol outcomes are returned raw for the
 * PullAPIWrapper to map.
 */
import { RocketMQError } from '../../common/errors.js';
import { ONE_SHOT } from '../../common/option-errors.js';
import type { MessageExt, MessageQueue } from '../../common/message.js';
import { decodeMessages } from '../../common/codec/index.js';
import type { RemotingRequest, RemotingResponse } from '../../protocol/command.js';
import { RequestCode } from '../../protocol/request-code.js';
import { ResponseCode } from '../../protocol/response-code.js';
import { errorFromResponse } from '../../protocol/response-error.js';
import { parseLenientJson } from '../../protocol/lenient-json.js';
import {
  ConsumerListBody,
  LockBatchResponseBodySchema,
  TopicRouteDataSchema,
  type CreateTopicRequestHeader,
  type HeartbeatData,
  type SubscriptionDataWire,
  type PullMessageRequestHeader,
  type PullMessageResponseHeader,
  type SendMessageRequestHeader,
  type SendMessageResponseHeader,
  type TopicRouteData,
} from '../../protocol/commands/index.js';
import type { RemotingClient } from '../../remoting/remoting-client.js';
import type { EndTransactionRequestHeader } from '../../protocol/commands/end-transaction.js';
import type { z } from 'zod';

/** Per-call options: a timeout (default: the client's requestTimeoutMs) and an AbortSignal. */
export interface CallOptions {
  timeoutMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** The raw answer to a PULL_MESSAGE: code, remark, header and the stored records' bytes. */
export interface RawPullResponse {
  code: number;
  remark: string | undefined;
  header: Partial<PullMessageResponseHeader>;
  body: Buffer | undefined;
}

/** RocketMQ's SendStatus. */
export const SendStatus = Object.freeze({
  SEND_OK: 'SEND_OK',
  FLUSH_DISK_TIMEOUT: 'FLUSH_DISK_TIMEOUT',
  FLUSH_SLAVE_TIMEOUT: 'FLUSH_SLAVE_TIMEOUT',
  SLAVE_NOT_AVAILABLE: 'SLAVE_NOT_AVAILABLE',
} as const);
export type SendStatus = (typeof SendStatus)[keyof typeof SendStatus];

/** What a broker answered to a send, before the producer adds the message queue and msgId. */
export interface SendResponse {
  sendStatus: SendStatus;
  /** The offset message id(s): store host + commit-log offset (comma-separated for a batch). */
  offsetMsgId: string;
  queueId: number;
  queueOffset: number;
  transactionId: string | undefined;
  /** The broker's region (the MSG_REGION ext field); RocketMQ's trace hook skips a send without one. */
  regionId: string | undefined;
  /** Whether the broker has tracing on (the TRACE_ON ext field, true when absent as RocketMQ reads it). */
  traceOn: boolean;
}

/** SEARCH_OFFSET_BY_TIMESTAMP's boundary: LOWER (first at/after, default) or UPPER (last at/before). */
export type BoundaryType = 'LOWER' | 'UPPER';

/** The answer to a membership watch. */
export interface ConsumerIdsWatch {
  version: number;
  consumerIdList: string[];
}

/** A held membership watch is answered by the broker within its hold; the RPC waits this much longer. */
const WATCH_RPC_MARGIN_MS = 5000;

/** RocketMQ's LockBatchRequestBody / UnlockBatchRequestBody. */
function lockBody(b: { consumerGroup: string; clientId: string; mqSet: readonly MessageQueue[] }): Buffer {
  const mqSet = b.mqSet.map((mq) => ({ topic: mq.topic, brokerName: mq.brokerName, queueId: mq.queueId }));
  return Buffer.from(
    JSON.stringify({ consumerGroup: b.consumerGroup, clientId: b.clientId, onlyThisBroker: false, mqSet }),
    'utf8',
  );
}

function offsetOf(res: RemotingResponse, what: string): number {
  const offset = (res.header as { offset?: unknown }).offset;
  if (typeof offset !== 'number')
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${what} answered without an offset`);
  return offset;
}

function jsonBody<S extends z.ZodType>(res: RemotingResponse, schema: S, what: string): z.output<S> {
  let raw: unknown;
  try {
    raw = parseLenientJson(res.body ? res.body.toString('utf8') : 'null');
  } catch (e) {
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${what} body is not JSON`, { cause: e });
  }
  const parsed = schema.safeParse(raw, ONE_SHOT);
  if (!parsed.success)
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${what} body: ${parsed.error.message}`);
  return parsed.data;
}

export class MQClientAPI {
  readonly #remoting: RemotingClient;
  readonly #requestTimeoutMs: number;

  constructor(remoting: RemotingClient, options: { requestTimeoutMs: number }) {
    this.#remoting = remoting;
    this.#requestTimeoutMs = options.requestTimeoutMs;
  }

  get remoting(): RemotingClient {
    return this.#remoting;
  }

  /** Any command; resolves with the answer whatever its code. */
  invoke(addr: string, request: RemotingRequest, opts: CallOptions = {}): Promise<RemotingResponse> {
    return this.#remoting.invoke(addr, request, {
      timeoutMs: opts.timeoutMs ?? this.#requestTimeoutMs,
      signal: opts.signal,
    });
  }

  /** Like `invoke`, but anything other than SUCCESS throws the mapped error. */
  async #call(addr: string, request: RemotingRequest, opts: CallOptions = {}): Promise<RemotingResponse> {
    const res = await this.invoke(addr, request, opts);
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    return res;
  }

  /**
   * SEND_MESSAGE (10) or, when `header.batch` is true, SEND_BATCH_MESSAGE (320). The header is sent as
   * given, without a second schema check: the producer and the send-back build it from checked messages
   * and options. RocketMQ: processSendResponse.
   */
  async sendMessage(
    addr: string,
    header: SendMessageRequestHeader,
    body: Buffer,
    opts: CallOptions = {},
  ): Promise<SendResponse> {
    const code = header.batch === true ? RequestCode.SEND_BATCH_MESSAGE : RequestCode.SEND_MESSAGE;
    const res = await this.invoke(addr, { code, header, body, headerChecked: true }, opts);
    let sendStatus: SendStatus;
    switch (res.code) {
      case ResponseCode.SUCCESS:
        sendStatus = SendStatus.SEND_OK;
        break;
      case ResponseCode.FLUSH_DISK_TIMEOUT:
        sendStatus = SendStatus.FLUSH_DISK_TIMEOUT;
        break;
      case ResponseCode.FLUSH_SLAVE_TIMEOUT:
        sendStatus = SendStatus.FLUSH_SLAVE_TIMEOUT;
        break;
      case ResponseCode.SLAVE_NOT_AVAILABLE:
        sendStatus = SendStatus.SLAVE_NOT_AVAILABLE;
        break;
      default:
        throw errorFromResponse(res.code, res.remark);
    }
    const h = res.header as Partial<SendMessageResponseHeader>;
    const ext = res.header as { MSG_REGION?: unknown; TRACE_ON?: unknown };
    if (typeof h.msgId !== 'string' || typeof h.queueId !== 'number' || typeof h.queueOffset !== 'number')
      throw new RocketMQError(
        'ERR_BAD_RESPONSE',
        'malformed response: SEND_MESSAGE answered without msgId/queueId/queueOffset',
      );
    return {
      sendStatus,
      offsetMsgId: h.msgId,
      queueId: h.queueId,
      queueOffset: h.queueOffset,
      transactionId: h.transactionId,
      regionId: typeof ext.MSG_REGION === 'string' ? ext.MSG_REGION : undefined,
      traceOn: ext.TRACE_ON !== 'false' && ext.TRACE_ON !== false,
    };
  }

  /**
   * PULL_MESSAGE (11), or LITE_PULL_MESSAGE (361) when `lite` (the sysFlag's LITE_PULL bit). Returns
   * the raw answer whatever its code; `opts.timeoutMs` must exceed `suspendTimeoutMillis` for a held pull.
   */
  async pullMessage(
    addr: string,
    header: PullMessageRequestHeader,
    opts: CallOptions & { lite?: boolean } = {},
  ): Promise<RawPullResponse> {
    const code = opts.lite ? RequestCode.LITE_PULL_MESSAGE : RequestCode.PULL_MESSAGE;
    // Every pull header is built by PullAPIWrapper from checked options, queues and offsets; checking it
    // again per pull would cost more than the rest of the request's encoding.
    const res = await this.invoke(addr, { code, header, headerChecked: true }, opts);
    return {
      code: res.code,
      remark: res.remark,
      header: res.header as Partial<PullMessageResponseHeader>,
      body: res.body,
    };
  }

  /**
   * QUERY_CONSUMER_OFFSET (14): the group's committed offset, or -1 when the broker has none
   * (QUERY_NOT_FOUND), as RemoteBrokerOffsetStore reads it.
   */
  async queryConsumerOffset(
    addr: string,
    header: { consumerGroup: string; topic: string; queueId: number; setZeroIfNotFound?: boolean; bname?: string },
    opts: CallOptions = {},
  ): Promise<number> {
    const res = await this.invoke(addr, { code: RequestCode.QUERY_CONSUMER_OFFSET, header }, opts);
    if (res.code === ResponseCode.QUERY_NOT_FOUND) return -1;
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    return offsetOf(res, 'QUERY_CONSUMER_OFFSET');
  }

  /** UPDATE_CONSUMER_OFFSET (15). RocketMQ sends it oneway; this awaits the broker's answer. */
  async updateConsumerOffset(
    addr: string,
    header: { consumerGroup: string; topic: string; queueId: number; commitOffset: number; bname?: string },
    opts: CallOptions = {},
  ): Promise<void> {
    await this.#call(addr, { code: RequestCode.UPDATE_CONSUMER_OFFSET, header }, opts);
  }

  /**
   * UPDATE_CONSUMER_OFFSET sent oneway (RocketMQ's updateConsumerOffsetOneway): failures are only logged.
   * Settles when the transport is done with it (see RemotingClient.invokeOneway); never rejects.
   */
  updateConsumerOffsetOneway(
    addr: string,
    header: { consumerGroup: string; topic: string; queueId: number; commitOffset: number; bname?: string },
    opts: CallOptions = {},
  ): Promise<void> {
    return this.#remoting.invokeOneway(
      addr,
      { code: RequestCode.UPDATE_CONSUMER_OFFSET, header },
      { timeoutMs: opts.timeoutMs ?? this.#requestTimeoutMs, signal: opts.signal },
    );
  }

  /** GET_MAX_OFFSET (30): one past the last message of the queue. */
  async getMaxOffset(addr: string, mq: MessageQueue, opts: CallOptions = {}): Promise<number> {
    const header = { topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName };
    return offsetOf(await this.#call(addr, { code: RequestCode.GET_MAX_OFFSET, header }, opts), 'GET_MAX_OFFSET');
  }

  /** GET_MIN_OFFSET (31): the first offset still stored. */
  async getMinOffset(addr: string, mq: MessageQueue, opts: CallOptions = {}): Promise<number> {
    const header = { topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName };
    return offsetOf(await this.#call(addr, { code: RequestCode.GET_MIN_OFFSET, header }, opts), 'GET_MIN_OFFSET');
  }

  /** SEARCH_OFFSET_BY_TIMESTAMP (29). */
  async searchOffset(
    addr: string,
    mq: MessageQueue,
    timestamp: number,
    boundaryType: BoundaryType = 'LOWER',
    opts: CallOptions = {},
  ): Promise<number> {
    const header = { topic: mq.topic, queueId: mq.queueId, timestamp, boundaryType, bname: mq.brokerName };
    const res = await this.#call(addr, { code: RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, header }, opts);
    return offsetOf(res, 'SEARCH_OFFSET_BY_TIMESTAMP');
  }

  /** HEART_BEAT (34): body HeartbeatData JSON. */
  async sendHeartbeat(addr: string, heartbeat: HeartbeatData, opts: CallOptions = {}): Promise<void> {
    const body = Buffer.from(JSON.stringify(heartbeat), 'utf8');
    await this.#call(addr, { code: RequestCode.HEART_BEAT, header: {}, body }, opts);
  }

  /**
   * CHECK_CLIENT_CONFIG (46): asks the broker whether it can serve `subscriptionData` (RocketMQ's
   * checkClientInBroker). Throws the broker's error (SYSTEM_ERROR when it has no property filter,
   * SUBSCRIPTION_PARSE_FAILED when the expression does not compile).
   */
  async checkClientInBroker(
    addr: string,
    body: { clientId: string; group: string; subscriptionData: SubscriptionDataWire },
    opts: CallOptions = {},
  ): Promise<void> {
    const bytes = Buffer.from(JSON.stringify(body), 'utf8');
    await this.#call(addr, { code: RequestCode.CHECK_CLIENT_CONFIG, header: {}, body: bytes }, opts);
  }

  /**
   * END_TRANSACTION (37) sent oneway, as RocketMQ's endTransactionOneway: the producer's decision on a half
   * message. Settles when the transport is done with it; never rejects.
   */
  endTransactionOneway(addr: string, header: EndTransactionRequestHeader, opts: CallOptions = {}): Promise<void> {
    return this.#remoting.invokeOneway(
      addr,
      { code: RequestCode.END_TRANSACTION, header },
      { timeoutMs: opts.timeoutMs ?? this.#requestTimeoutMs, signal: opts.signal },
    );
  }

  /** UNREGISTER_CLIENT (35). */
  async unregisterClient(
    addr: string,
    clientID: string,
    groups: { producerGroup?: string | undefined; consumerGroup?: string | undefined },
    opts: CallOptions = {},
  ): Promise<void> {
    const header: Record<string, unknown> = { clientID };
    if (groups.producerGroup !== undefined) header.producerGroup = groups.producerGroup;
    if (groups.consumerGroup !== undefined) header.consumerGroup = groups.consumerGroup;
    await this.#call(addr, { code: RequestCode.UNREGISTER_CLIENT, header }, opts);
  }

  /**
   * GET_CONSUMER_LIST_BY_GROUP (38): the live client ids of a group. A group with no member is
   * answered SYSTEM_ERROR by RocketMQ; that is returned as an empty list here.
   */
  async getConsumerIdListByGroup(addr: string, consumerGroup: string, opts: CallOptions = {}): Promise<string[]> {
    const res = await this.invoke(
      addr,
      { code: RequestCode.GET_CONSUMER_LIST_BY_GROUP, header: { consumerGroup } },
      opts,
    );
    if (res.code === ResponseCode.SYSTEM_ERROR && /^no consumer for this group/.test(res.remark ?? '')) return [];
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    return jsonBody(res, ConsumerListBody, 'GET_CONSUMER_LIST_BY_GROUP').consumerIdList;
  }

  /**
   * WATCH_CONSUMER_IDS (90001): held by the broker until the group's membership version differs from
   * `version` or `timeoutMs` passes; the RPC deadline is `timeoutMs` plus a margin.
   */
  async watchConsumerIds(
    addr: string,
    consumerGroup: string,
    clientID: string,
    version: number,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<ConsumerIdsWatch> {
    const header = { consumerGroup, clientID, version, timeoutMillis: timeoutMs };
    const res = await this.#call(
      addr,
      { code: RequestCode.WATCH_CONSUMER_IDS, header },
      { timeoutMs: timeoutMs + WATCH_RPC_MARGIN_MS, signal },
    );
    const v = (res.header as { version?: unknown }).version;
    if (typeof v !== 'number')
      throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: WATCH_CONSUMER_IDS answered without a version');
    return { version: v, consumerIdList: jsonBody(res, ConsumerListBody, 'WATCH_CONSUMER_IDS').consumerIdList };
  }

  /**
   * CONSUMER_SEND_MSG_BACK (36): hands a consumed message back for a later retry. `offset` is the
   * message's commit-log offset (RocketMQ: MQClientAPIImpl.consumerSendMessageBack).
   */
  async consumerSendMessageBack(
    addr: string,
    brokerName: string | undefined,
    msg: MessageExt,
    consumerGroup: string,
    delayLevel: number,
    maxReconsumeTimes: number,
    opts: CallOptions = {},
  ): Promise<void> {
    const header: Record<string, unknown> = {
      offset: msg.commitLogOffset,
      group: consumerGroup,
      delayLevel,
      originMsgId: msg.msgId,
      originTopic: msg.topic,
      unitMode: false,
      maxReconsumeTimes,
    };
    if (brokerName !== undefined) header.bname = brokerName;
    await this.#call(addr, { code: RequestCode.CONSUMER_SEND_MSG_BACK, header }, opts);
  }

  /**
   * GET_ROUTEINFO_BY_TOPIC (105): the topic's route, or `null` when the topic does not exist. Asks for
   * standard JSON (`acceptStandardJsonOnly`), and still reads the unquoted numeric keys an older
   * NameServer writes.
   */
  async getTopicRouteInfo(addr: string, topic: string, opts: CallOptions = {}): Promise<TopicRouteData | null> {
    const header = { topic, acceptStandardJsonOnly: true };
    const res = await this.invoke(addr, { code: RequestCode.GET_ROUTEINFO_BY_TOPIC, header }, opts);
    if (res.code === ResponseCode.TOPIC_NOT_EXIST) return null;
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    return jsonBody(res, TopicRouteDataSchema, 'GET_ROUTEINFO_BY_TOPIC');
  }

  /** UPDATE_AND_CREATE_TOPIC (17). */
  async createTopic(addr: string, header: CreateTopicRequestHeader, opts: CallOptions = {}): Promise<void> {
    await this.#call(addr, { code: RequestCode.UPDATE_AND_CREATE_TOPIC, header }, opts);
  }

  /** VIEW_MESSAGE_BY_ID (33): the message stored at `commitLogOffset`. */
  async viewMessage(addr: string, commitLogOffset: number, opts: CallOptions = {}): Promise<MessageExt> {
    const res = await this.#call(
      addr,
      { code: RequestCode.VIEW_MESSAGE_BY_ID, header: { offset: commitLogOffset } },
      opts,
    );
    const [msg] = res.body ? decodeMessages(res.body) : [];
    if (!msg) throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: VIEW_MESSAGE_BY_ID returned no message`);
    return msg;
  }

  /**
   * LOCK_BATCH_MQ (41): asks the broker for the orderly-consumption locks of `mqs` for this client;
   * resolves with the queues this client holds now (RocketMQ: MQClientAPIImpl.lockBatchMQ).
   */
  async lockBatchMQ(
    addr: string,
    body: { consumerGroup: string; clientId: string; mqSet: readonly MessageQueue[] },
    opts: CallOptions = {},
  ): Promise<MessageQueue[]> {
    const res = await this.#call(addr, { code: RequestCode.LOCK_BATCH_MQ, header: {}, body: lockBody(body) }, opts);
    return jsonBody(res, LockBatchResponseBodySchema, 'LOCK_BATCH_MQ').lockOKMQSet;
  }

  /** UNLOCK_BATCH_MQ (42): releases this client's locks of `mqs` (RocketMQ: MQClientAPIImpl.unlockBatchMQ). */
  async unlockBatchMQ(
    addr: string,
    body: { consumerGroup: string; clientId: string; mqSet: readonly MessageQueue[] },
    opts: CallOptions = {},
  ): Promise<void> {
    await this.#call(addr, { code: RequestCode.UNLOCK_BATCH_MQ, header: {}, body: lockBody(body) }, opts);
  }
}
