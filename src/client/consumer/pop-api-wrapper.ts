/**
 * The client side of POP (RocketMQ: MQClientAPIImpl.popMessageAsync / ackMessageAsync /
 * changeInvisibleTimeAsync and processPopResponse): POP_MESSAGE, ACK_MESSAGE and
 * CHANGE_MESSAGE_INVISIBLETIME through the client's transport (HTTP or the remoting protocol).
 */
import { RocketMQError } from '../../common/errors.js';
import { ONE_SHOT } from '../../common/option-errors.js';
import type { MessageExt } from '../../common/message.js';
import { decodeMessages } from '../../common/codec/index.js';
import {
  RequestCode,
  ResponseCode,
  bitSetOf,
  buildExtraInfo,
  errorFromResponse,
  parseExtraInfo,
  type ChangeInvisibleTimeResponseHeader,
  type ExtraInfo,
  type PopMessageResponseHeader,
  QueryAssignmentResponseBody,
} from '../../protocol/index.js';
import type { CallOptions, MQClientAPI } from '../instance/mq-client-api.js';

/** RocketMQ: MessageConst.PROPERTY_POP_CK. */
export const PROPERTY_POP_CK = 'POP_CK';

export interface PopRequest {
  consumerGroup: string;
  topic: string;
  /** -1: every queue of the topic on that broker. */
  queueId: number;
  maxMsgNums: number;
  invisibleTimeMs: number;
  pollTimeMs: number;
  expressionType: string;
  expression: string;
  /** ConsumeInitMode: 0 MIN, 1 MAX. */
  initMode: number;
}

/** A popped message and the receipt handle that acknowledges it. */
export interface PoppedMessage {
  message: MessageExt;
  receiptHandle: string;
  handle: ExtraInfo;
}

/** What QUERY_ASSIGNMENT answered for one (topic, group, member) on one broker. */
export interface PopAssignment {
  /** The group's mode on that broker (set with SET_MESSAGE_REQUEST_MODE, `mqadmin setConsumeMode`). */
  mode: 'PULL' | 'POP';
  /** The queue ids given to the member (-1: every queue of the topic on that broker). */
  queueIds: number[];
}

export interface PopResponse {
  found: PoppedMessage[];
  restNum: number;
}

/** The handle of a message: its POP_CK property, or one built from the answer's offset infos. */
function handleOf(msg: MessageExt, brokerName: string, h: Partial<PopMessageResponseHeader>): string | undefined {
  const ck = msg.properties?.[PROPERTY_POP_CK];
  if (ck) return ck;
  const starts = new Map<string, number>();
  for (const part of (h.startOffsetInfo ?? '').split(';')) {
    const [mark, q, start] = part.split(' ');
    if (mark !== undefined && q !== undefined && start !== undefined) starts.set(`${mark}@${q}`, Number(start));
  }
  const start = starts.get(`0@${msg.queueId}`);
  if (start === undefined || h.popTime === undefined || h.invisibleTime === undefined) return undefined;
  return buildExtraInfo({
    ckOffset: start,
    popTime: h.popTime,
    invisibleTime: h.invisibleTime,
    reviveQid: h.reviveQid ?? 0,
    retry: '0',
    brokerName,
    queueId: msg.queueId,
    queueOffset: msg.queueOffset,
  });
}

export class PopAPIWrapper {
  constructor(private readonly api: MQClientAPI) {}

  /** POP_MESSAGE: the messages found (none when the poll time ended without one). */
  async pop(addr: string, brokerName: string, r: PopRequest, opts: CallOptions): Promise<PopResponse> {
    const header = {
      consumerGroup: r.consumerGroup,
      topic: r.topic,
      queueId: r.queueId,
      maxMsgNums: r.maxMsgNums,
      invisibleTime: r.invisibleTimeMs,
      pollTime: r.pollTimeMs,
      bornTime: Date.now(),
      initMode: r.initMode,
      expType: r.expressionType,
      exp: r.expression,
      order: false,
      bname: brokerName,
    };
    const res = await this.api.invoke(addr, { code: RequestCode.POP_MESSAGE, header }, opts);
    const h = res.header as Partial<PopMessageResponseHeader>;
    if (
      res.code === ResponseCode.POLLING_TIMEOUT ||
      res.code === ResponseCode.PULL_NOT_FOUND ||
      res.code === ResponseCode.NO_MESSAGE
    ) {
      return { found: [], restNum: h.restNum ?? 0 };
    }
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    const found: PoppedMessage[] = [];
    for (const msg of res.body ? decodeMessages(res.body) : []) {
      const receiptHandle = handleOf(msg, brokerName, h);
      const handle = receiptHandle === undefined ? undefined : parseExtraInfo(receiptHandle);
      if (receiptHandle === undefined || handle === undefined || typeof handle === 'string') {
        throw new RocketMQError(
          'ERR_BAD_RESPONSE',
          `malformed response: POP_MESSAGE returned a message without a receipt handle`,
        );
      }
      msg.brokerName = brokerName;
      msg.topic = r.topic;
      found.push({ message: msg, receiptHandle, handle });
    }
    return { found, restNum: h.restNum ?? 0 };
  }

  /** ACK_MESSAGE: acknowledges one message by its receipt handle. */
  async ack(
    addr: string,
    consumerGroup: string,
    topic: string,
    handle: ExtraInfo,
    extraInfo: string,
    opts: CallOptions,
  ): Promise<void> {
    const header = {
      consumerGroup,
      topic,
      queueId: handle.queueId,
      extraInfo,
      offset: handle.queueOffset,
      bname: handle.brokerName,
    };
    const res = await this.api.invoke(addr, { code: RequestCode.ACK_MESSAGE, header }, opts);
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
  }

  /**
   * BATCH_ACK_MESSAGE (RocketMQ: MQClientAPIImpl.batchAckMessageAsync): acknowledges messages popped from
   * one broker in one request, one BatchAck (a start offset and a bit set) per popped checkpoint. A
   * broker that could not apply some answers an error naming how many it applied.
   */
  async batchAck(
    addr: string,
    brokerName: string,
    consumerGroup: string,
    items: ReadonlyArray<{ topic: string; handle: ExtraInfo }>,
    opts: CallOptions,
  ): Promise<void> {
    const groups = new Map<string, { topic: string; h: ExtraInfo; bits: number[] }>();
    for (const { topic, handle: h } of items) {
      const k = [topic, h.retry, h.queueId, h.ckOffset, h.popTime, h.invisibleTime, h.reviveQid].join(' ');
      let g = groups.get(k);
      if (!g) groups.set(k, (g = { topic, h, bits: [] }));
      g.bits.push(h.queueOffset - h.ckOffset);
    }
    const acks = [...groups.values()].map(({ topic, h, bits }) => ({
      c: consumerGroup,
      t: topic,
      r: h.retry,
      so: h.ckOffset,
      q: h.queueId,
      rq: h.reviveQid,
      pt: h.popTime,
      it: h.invisibleTime,
      b: bitSetOf(bits),
    }));
    const body = Buffer.from(JSON.stringify({ brokerName, acks }), 'utf8');
    const res = await this.api.invoke(addr, { code: RequestCode.BATCH_ACK_MESSAGE, header: {}, body }, opts);
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
  }

  /** CHANGE_MESSAGE_INVISIBLETIME: the new receipt handle (the old one is no longer valid). */
  async changeInvisibleTime(
    addr: string,
    consumerGroup: string,
    topic: string,
    handle: ExtraInfo,
    extraInfo: string,
    invisibleTimeMs: number,
    opts: CallOptions,
  ): Promise<string> {
    const header = {
      consumerGroup,
      topic,
      queueId: handle.queueId,
      extraInfo,
      offset: handle.queueOffset,
      invisibleTime: invisibleTimeMs,
      bname: handle.brokerName,
    };
    const res = await this.api.invoke(addr, { code: RequestCode.CHANGE_MESSAGE_INVISIBLETIME, header }, opts);
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    const h = res.header as Partial<ChangeInvisibleTimeResponseHeader>;
    if (h.popTime === undefined || h.invisibleTime === undefined)
      throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: CHANGE_MESSAGE_INVISIBLETIME without popTime');
    // RocketMQ's client builds the new handle from the message's own offset and the answer's times.
    return buildExtraInfo({
      ...handle,
      ckOffset: handle.queueOffset,
      popTime: h.popTime,
      invisibleTime: h.invisibleTime,
      reviveQid: h.reviveQid ?? handle.reviveQid,
    });
  }

  /**
   * QUERY_ASSIGNMENT (RocketMQ: MQClientAPIImpl.queryAssignment): the queues the broker gives this member
   * of `consumerGroup` on `topic`, and the group's mode there.
   */
  async queryAssignment(
    addr: string,
    q: { topic: string; consumerGroup: string; clientId: string; strategyName: string },
    opts: CallOptions,
  ): Promise<PopAssignment> {
    const body = Buffer.from(JSON.stringify({ ...q, messageModel: 'CLUSTERING' }), 'utf8');
    const res = await this.api.invoke(addr, { code: RequestCode.QUERY_ASSIGNMENT, header: {}, body }, opts);
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    let parsed: ReturnType<typeof QueryAssignmentResponseBody.safeParse>;
    try {
      parsed = QueryAssignmentResponseBody.safeParse(JSON.parse(res.body?.toString('utf8') ?? '{}'), ONE_SHOT);
    } catch {
      throw new RocketMQError(
        'ERR_BAD_RESPONSE',
        'malformed response: QUERY_ASSIGNMENT answered a body that is not JSON',
      );
    }
    if (!parsed.success)
      throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: QUERY_ASSIGNMENT: ${parsed.error.message}`);
    const assignments = (parsed.data.messageQueueAssignments ?? []).filter((a) => a.messageQueue.topic === q.topic);
    return {
      mode: assignments.some((a) => a.mode === 'POP') ? 'POP' : 'PULL',
      queueIds: [...new Set(assignments.map((a) => a.messageQueue.queueId))].sort((a, b) => a - b),
    };
  }
}
