/**
 * RocketMQ 5's POP consumption: POP_MESSAGE (200050), ACK_MESSAGE (200051), BATCH_ACK_MESSAGE (200151),
 * CHANGE_MESSAGE_INVISIBLETIME (200053), QUERY_ASSIGNMENT (400) and SET_MESSAGE_REQUEST_MODE (401), with
 * the field names of RocketMQ's PopMessageRequestHeader, PopMessageResponseHeader, AckMessageRequestHeader,
 * ChangeInvisibleTimeRequestHeader / ResponseHeader, BatchAckMessageRequestBody, QueryAssignmentRequestBody
 * and SetMessageRequestModeRequestBody.
 *
 * A popped message is identified by its receipt handle, RocketMQ's "extra info" (ExtraInfoUtil): eight
 * fields joined by single spaces — checkpoint start offset, pop time, invisible time, revive queue id,
 * retry mark (`0` the topic itself, `1` its POP retry topic), broker name, queue id, queue offset.
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

export const PopMessageRequestHeader = z.object({
  consumerGroup: str(),
  topic: str(),
  /** -1: every readable queue of the topic. */
  queueId: int32(),
  maxMsgNums: int32(),
  invisibleTime: long(),
  /** How long the broker holds the request when nothing is found, ms. */
  pollTime: long(),
  bornTime: long(),
  /** ConsumeInitMode: 0 MIN (from the queue's first message), 1 MAX (from its last). */
  initMode: int32(),
  expType: str().optional(),
  exp: str().optional(),
  order: z.boolean().optional(),
  attemptId: str().optional(),
  bname: str().optional(),
});
export type PopMessageRequestHeader = z.infer<typeof PopMessageRequestHeader>;

export const PopMessageResponseHeader = z.object({
  popTime: long(),
  invisibleTime: long(),
  reviveQid: int32(),
  restNum: long(),
  /** `retryMark queueId startOffset` per queue read, joined by `;`. */
  startOffsetInfo: str().optional(),
  /** `retryMark queueId offset,offset,...` per queue read, joined by `;`. */
  msgOffsetInfo: str().optional(),
  orderCountInfo: str().optional(),
});
export type PopMessageResponseHeader = z.infer<typeof PopMessageResponseHeader>;

export const AckMessageRequestHeader = z.object({
  consumerGroup: str(),
  topic: str(),
  queueId: int32(),
  extraInfo: str(),
  offset: long(),
  bname: str().optional(),
});
export type AckMessageRequestHeader = z.infer<typeof AckMessageRequestHeader>;

export const ChangeInvisibleTimeRequestHeader = AckMessageRequestHeader.extend({ invisibleTime: long() });
export type ChangeInvisibleTimeRequestHeader = z.infer<typeof ChangeInvisibleTimeRequestHeader>;

export const ChangeInvisibleTimeResponseHeader = z.object({
  popTime: long(),
  invisibleTime: long(),
  reviveQid: int32(),
});
export type ChangeInvisibleTimeResponseHeader = z.infer<typeof ChangeInvisibleTimeResponseHeader>;

/**
 * RocketMQ's BatchAck as fastjson writes it (short names; the long ones are accepted too): the acked
 * offsets are `startOffset + i` for every bit i set in `bitSet` (java.util.BitSet.toByteArray, base64).
 */
export const BatchAckSchema = z
  .object({
    c: str().optional(),
    consumerGroup: str().optional(),
    t: str().optional(),
    topic: str().optional(),
    r: str().optional(),
    retry: str().optional(),
    so: long().optional(),
    startOffset: long().optional(),
    q: int32().optional(),
    queueId: int32().optional(),
    rq: int32().optional(),
    reviveQueueId: int32().optional(),
    pt: long().optional(),
    popTime: long().optional(),
    it: long().optional(),
    invisibleTime: long().optional(),
    b: str().optional(),
    bitSet: str().optional(),
  })
  .transform((a, ctx) => {
    const out = {
      consumerGroup: a.c ?? a.consumerGroup,
      topic: a.t ?? a.topic,
      retry: a.r ?? a.retry ?? '0',
      startOffset: a.so ?? a.startOffset,
      queueId: a.q ?? a.queueId,
      reviveQueueId: a.rq ?? a.reviveQueueId ?? 0,
      popTime: a.pt ?? a.popTime,
      invisibleTime: a.it ?? a.invisibleTime ?? 0,
      bitSet: a.b ?? a.bitSet ?? '',
    };
    for (const k of ['consumerGroup', 'topic', 'startOffset', 'queueId', 'popTime'] as const) {
      if (out[k] === undefined) {
        ctx.addIssue({ code: 'custom', message: `${k} is required`, path: [k] });
        return z.NEVER;
      }
    }
    return out as {
      consumerGroup: string;
      topic: string;
      retry: string;
      startOffset: number;
      queueId: number;
      reviveQueueId: number;
      popTime: number;
      invisibleTime: number;
      bitSet: string;
    };
  });
export type BatchAck = z.output<typeof BatchAckSchema>;

export const BatchAckMessageRequestBody = z.object({
  brokerName: str().optional().nullable(),
  acks: z.array(BatchAckSchema).max(1024),
});
export type BatchAckMessageRequestBody = z.output<typeof BatchAckMessageRequestBody>;

/** RocketMQ's MessageRequestMode. */
export const MessageRequestMode = z.enum(['PULL', 'POP']);
export type MessageRequestMode = z.infer<typeof MessageRequestMode>;

export const SetMessageRequestModeRequestBody = z.object({
  topic: str().min(1),
  consumerGroup: str().min(1),
  mode: MessageRequestMode.default('PULL'),
  popShareQueueNum: int32().default(0),
});
export type SetMessageRequestModeRequestBody = z.output<typeof SetMessageRequestModeRequestBody>;

export const QueryAssignmentRequestBody = z.object({
  topic: str().min(1),
  consumerGroup: str().min(1),
  clientId: str().min(1),
  strategyName: str().optional().nullable(),
  messageModel: z.enum(['CLUSTERING', 'BROADCASTING']).optional().nullable(),
});
export type QueryAssignmentRequestBody = z.output<typeof QueryAssignmentRequestBody>;

export const MessageQueueAssignmentSchema = z.object({
  messageQueue: z.object({ topic: str(), brokerName: str(), queueId: int32() }),
  mode: MessageRequestMode,
  attachments: z.record(z.string(), z.string()).optional().nullable(),
});
export const QueryAssignmentResponseBody = z.object({
  messageQueueAssignments: z.array(MessageQueueAssignmentSchema).nullable().optional(),
});
export type QueryAssignmentResponseBody = z.output<typeof QueryAssignmentResponseBody>;

export const PopMessage = defineCommand({
  code: RequestCode.POP_MESSAGE,
  name: 'POP_MESSAGE',
  requestHeader: PopMessageRequestHeader,
  responseHeader: PopMessageResponseHeader.partial(),
});

export const AckMessage = defineCommand({
  code: RequestCode.ACK_MESSAGE,
  name: 'ACK_MESSAGE',
  requestHeader: AckMessageRequestHeader,
  responseHeader: EmptyHeader,
});

export const BatchAckMessage = defineCommand({
  code: RequestCode.BATCH_ACK_MESSAGE,
  name: 'BATCH_ACK_MESSAGE',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: BatchAckMessageRequestBody,
});

export const ChangeInvisibleTime = defineCommand({
  code: RequestCode.CHANGE_MESSAGE_INVISIBLETIME,
  name: 'CHANGE_MESSAGE_INVISIBLETIME',
  requestHeader: ChangeInvisibleTimeRequestHeader,
  responseHeader: ChangeInvisibleTimeResponseHeader.partial(),
});

export const QueryAssignment = defineCommand({
  code: RequestCode.QUERY_ASSIGNMENT,
  name: 'QUERY_ASSIGNMENT',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: QueryAssignmentRequestBody,
  responseBody: QueryAssignmentResponseBody,
});

export const SetMessageRequestMode = defineCommand({
  code: RequestCode.SET_MESSAGE_REQUEST_MODE,
  name: 'SET_MESSAGE_REQUEST_MODE',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: SetMessageRequestModeRequestBody,
});
