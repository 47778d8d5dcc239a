/**
 * PullAPIWrapper (RocketMQ's PullAPIWrapper): builds the PullMessageRequestHeader, picks the broker
 * address (the broker id the last answer suggested for the queue), sends PULL_MESSAGE (11), or
 * LITE_PULL_MESSAGE (361) when the sysFlag has the lite bit, and maps the answer to a PullStatus:
 *
 * | response code | PullStatus |
 * |---|---|
 * | 0 SUCCESS | FOUND |
 * | 19 PULL_NOT_FOUND | NO_NEW_MSG |
 * | 20 PULL_RETRY_IMMEDIATELY | NO_MATCHED_MSG |
 * | 21 PULL_OFFSET_MOVED | OFFSET_ILLEGAL |
 * | anything else | thrown (errorFromResponse) |
 *
 * `processPullResult` then decodes the body, re-checks tags by exact string (the broker only compares
 * hash codes), and stamps MIN_OFFSET / MAX_OFFSET, brokerName and, for transactional
 * messages, transactionId.
 */
import { DecodeError, RocketMQError } from '../../common/errors.js';
import { MessageConst, messageQueueKey, type MessageExt, type MessageQueue } from '../../common/message.js';
import { decodeMessages } from '../../common/codec/index.js';
import { clientTagRecheck, type SubscriptionData } from '../../filter/index.js';
import { PullSysFlag, clearCommitOffsetFlag } from '../../protocol/pull-sys-flag.js';
import { ResponseCode } from '../../protocol/response-code.js';
import { errorFromResponse } from '../../protocol/response-error.js';
import type { PullMessageRequestHeader } from '../../protocol/commands/index.js';
import { MASTER_ID, type MQClientInstance } from '../instance/mq-client-instance.js';
import {
  decodeRecordTolerantly,
  PulledBatch,
  stampPulledMessage,
  type UndecodableListener,
  type UndecodableMessage,
} from './pulled-batch.js';
import { PullStatus, type PullResult, type PullResultExt } from './pull-result.js';

export { DECODE_ERROR_PROPERTY, type UndecodableMessage } from './pulled-batch.js';

/** What one pull asks for (RocketMQ's pullKernelImpl arguments). */
export interface PullKernelRequest {
  mq: MessageQueue;
  /** The subscription expression sent when the sysFlag has SUBSCRIPTION. */
  subExpression: string;
  /** `TAG` or `SQL92`. */
  expressionType: string;
  /** RocketMQ's pull and lite-pull consumers send 0 for tag subscriptions. */
  subVersion: number;
  /** The queue offset to read from. */
  offset: number;
  maxNums: number;
  /** Sent as maxMsgBytes; the broker ignores it, as RocketMQ's does. */
  maxSizeInBytes?: number | undefined;
  /** PullSysFlag bits (`buildPullSysFlag`). */
  sysFlag: number;
  /** The offset to commit, used by the broker only with COMMIT_OFFSET. */
  commitOffset: number;
  /** How long the broker may hold the pull (suspendTimeoutMillis), ms. */
  brokerSuspendMaxTimeMillis: number;
  /** The RPC deadline, ms; above brokerSuspendMaxTimeMillis for a held pull. */
  timeoutMillis: number;
  signal?: AbortSignal | undefined;
}

const STATUS_BY_CODE = new Map<number, PullStatus>([
  [ResponseCode.SUCCESS, PullStatus.FOUND],
  [ResponseCode.PULL_NOT_FOUND, PullStatus.NO_NEW_MSG],
  [ResponseCode.PULL_RETRY_IMMEDIATELY, PullStatus.NO_MATCHED_MSG],
  [ResponseCode.PULL_OFFSET_MOVED, PullStatus.OFFSET_ILLEGAL],
]);

/** The PullMessageRequestHeader of a pull (pure; exported for tests). */
export function buildPullMessageRequestHeader(consumerGroup: string, req: PullKernelRequest): PullMessageRequestHeader {
  const header: PullMessageRequestHeader = {
    consumerGroup,
    topic: req.mq.topic,
    queueId: req.mq.queueId,
    queueOffset: req.offset,
    maxMsgNums: req.maxNums,
    sysFlag: req.sysFlag,
    commitOffset: req.commitOffset,
    suspendTimeoutMillis: req.brokerSuspendMaxTimeMillis,
    subscription: req.subExpression,
    subVersion: req.subVersion,
    expressionType: req.expressionType,
    bname: req.mq.brokerName,
  };
  if (req.maxSizeInBytes !== undefined) header.maxMsgBytes = req.maxSizeInBytes;
  return header;
}

function requireNumber(v: unknown, field: string): number {
  if (typeof v !== 'number')
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: PULL_MESSAGE answered without ${field}`);
  return v;
}

export class PullAPIWrapper {
  readonly #instance: MQClientInstance;
  readonly #consumerGroup: string;
  readonly #pullFromWhichNodeTable = new Map<string, number>();
  /** RocketMQ's connectBrokerByUser / defaultBrokerId: pin every pull to one broker id. */
  connectBrokerByUser = false;
  defaultBrokerId = MASTER_ID;

  constructor(instance: MQClientInstance, consumerGroup: string) {
    this.#instance = instance;
    this.#consumerGroup = consumerGroup;
  }

  /** Brokers that answered LITE_PULL_MESSAGE with REQUEST_CODE_NOT_SUPPORTED (RocketMQ 4.x). */
  readonly #noLitePull = new Set<string>();

  /** Remembers the broker id an answer suggested for `mq`. */
  updatePullFromWhichNode(mq: MessageQueue, brokerId: number): void {
    this.#pullFromWhichNodeTable.set(messageQueueKey(mq), brokerId);
  }

  /** The broker id to pull `mq` from: the last suggestion, or the master. */
  recalculatePullFromWhichNode(mq: MessageQueue): number {
    if (this.connectBrokerByUser) return this.defaultBrokerId;
    return this.#pullFromWhichNodeTable.get(messageQueueKey(mq)) ?? MASTER_ID;
  }

  /**
   * Sends one pull and maps its code. The result's `msgFoundList` is empty: run `processPullResult`
   * to decode and filter the messages.
   */
  async pullKernelImpl(req: PullKernelRequest): Promise<PullResultExt> {
    const brokerId = this.recalculatePullFromWhichNode(req.mq);
    // The route is known on every pull but the first: look it up without an await.
    const found =
      this.#instance.findBrokerAddressInSubscribe(req.mq.brokerName, brokerId, false) ??
      (await this.#instance.findBrokerAddressForQueue(req.mq, brokerId));
    const header = buildPullMessageRequestHeader(this.#consumerGroup, req);
    // RocketMQ: a pull served by a slave never commits the offset (PullAPIWrapper.java:217-219).
    if (found.slave) header.sysFlag = clearCommitOffsetFlag(header.sysFlag);
    let lite = (header.sysFlag & PullSysFlag.LITE_PULL_MESSAGE) !== 0;
    if (lite && this.#noLitePull.has(found.brokerAddr)) {
      header.sysFlag &= ~PullSysFlag.LITE_PULL_MESSAGE;
      lite = false;
    }
    const opts = { timeoutMs: req.timeoutMillis, signal: req.signal, lite };
    let res = await this.#instance.api.pullMessage(found.brokerAddr, header, opts);
    if (lite && res.code === ResponseCode.REQUEST_CODE_NOT_SUPPORTED) {
      // RocketMQ 4.x brokers know no LITE_PULL_MESSAGE (RocketMQ 5's code): their lite pull consumer
      // sends PULL_MESSAGE, and so does this one to such a broker from now on.
      this.#noLitePull.add(found.brokerAddr);
      header.sysFlag &= ~PullSysFlag.LITE_PULL_MESSAGE;
      opts.lite = false;
      res = await this.#instance.api.pullMessage(found.brokerAddr, header, opts);
    }
    const pullStatus = STATUS_BY_CODE.get(res.code);
    if (pullStatus === undefined) throw errorFromResponse(res.code, res.remark);
    return {
      pullStatus,
      nextBeginOffset: requireNumber(res.header.nextBeginOffset, 'nextBeginOffset'),
      minOffset: requireNumber(res.header.minOffset, 'minOffset'),
      maxOffset: requireNumber(res.header.maxOffset, 'maxOffset'),
      suggestWhichBrokerId: res.header.suggestWhichBrokerId ?? MASTER_ID,
      msgFoundList: [],
      messageBinary: pullStatus === PullStatus.FOUND ? res.body : undefined,
    };
  }

  /**
   * `processPullResult` for a consumer that decodes messages as it hands them out: a FOUND answer's
   * records are indexed into a PulledBatch (exact-tag re-check included) and kept raw, not decoded.
   * `onUndecodable` is told of a record whose body cannot be decoded when it is handed out.
   */
  processPullResultRaw(
    mq: MessageQueue,
    pullResult: PullResultExt,
    subscriptionData: SubscriptionData,
    onUndecodable: UndecodableListener,
  ): PullResult & { batch?: PulledBatch } {
    this.updatePullFromWhichNode(mq, pullResult.suggestWhichBrokerId);
    const result: PullResult & { batch?: PulledBatch } = {
      pullStatus: pullResult.pullStatus,
      nextBeginOffset: pullResult.nextBeginOffset,
      minOffset: pullResult.minOffset,
      maxOffset: pullResult.maxOffset,
      msgFoundList: [],
    };
    const body = pullResult.messageBinary;
    if (pullResult.pullStatus !== PullStatus.FOUND || !body) return result;
    result.batch = new PulledBatch(
      mq,
      body,
      pullResult.minOffset,
      pullResult.maxOffset,
      subscriptionData,
      onUndecodable,
    );
    return result;
  }

  /**
   * RocketMQ's processPullResult: records the suggested broker, and for FOUND decodes the records,
   * keeps only messages whose tag is exactly one of the subscription's tags (when it has tags), and
   * sets MIN_OFFSET / MAX_OFFSET (creating the properties map when the message has none), brokerName,
   * queueId and, for `TRAN_MSG=true`, transactionId = UNIQ_KEY.
   */
  processPullResult(
    mq: MessageQueue,
    pullResult: PullResultExt,
    subscriptionData: SubscriptionData,
  ): PullResult & { undecodable?: UndecodableMessage[] } {
    this.updatePullFromWhichNode(mq, pullResult.suggestWhichBrokerId);
    const result: PullResult & { undecodable?: UndecodableMessage[] } = {
      pullStatus: pullResult.pullStatus,
      nextBeginOffset: pullResult.nextBeginOffset,
      minOffset: pullResult.minOffset,
      maxOffset: pullResult.maxOffset,
      msgFoundList: [],
    };
    if (pullResult.pullStatus !== PullStatus.FOUND || !pullResult.messageBinary) return result;
    // The pull body belongs to this pull alone (a RemotingClient never reuses a response body), so the
    // bodies may be views of it: no second copy of the whole body per pull.
    const decoded = decodeTolerantly(pullResult.messageBinary, mq, (e) => (result.undecodable ??= []).push(e));
    const kept: MessageExt[] = [];
    const minOffset = String(pullResult.minOffset);
    const maxOffset = String(pullResult.maxOffset);
    for (const msg of decoded) {
      if (!clientTagRecheck(subscriptionData, msg.properties?.[MessageConst.TAGS])) continue;
      stampPulledMessage(msg, mq, minOffset, maxOffset);
      kept.push(msg);
    }
    result.msgFoundList = kept;
    return result;
  }
}

/**
 * Decodes a pull body. When one record's body cannot be decoded, the others still are: the bad one is
 * decoded again without decompression and handed on flagged (its `DECODE_ERROR` property says why, its
 * body is the stored bytes), so one bad message never blocks its queue. A record whose header itself
 * is corrupt cannot be delimited, and the error is thrown as before.
 */
function decodeTolerantly(
  body: Buffer,
  mq: MessageQueue,
  onUndecodable: (u: UndecodableMessage) => void,
): MessageExt[] {
  try {
    return decodeMessages(body, { bodyViews: true });
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
  }
  const out: MessageExt[] = [];
  for (let p = 0; p < body.length;) {
    const decoded = decodeRecordTolerantly(body, p, mq, onUndecodable);
    out.push(decoded.message);
    p += decoded.size;
  }
  return out;
}
