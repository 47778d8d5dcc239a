/**
 * SEND_MESSAGE (10) and SEND_BATCH_MESSAGE (320) (SendMessageRequestHeader).
 *
 * Request header: producerGroup, topic, defaultTopic (the template topic for auto-creation, `TBW102`),
 * defaultTopicQueueNums, queueId, sysFlag (MessageSysFlag; COMPRESSED when the body is compressed),
 * bornTimestamp (ms), flag, properties (RocketMQ's `\u0001`/`\u0002` string), and optionally
 * reconsumeTimes, unitMode, batch, maxReconsumeTimes, bname. Body: the message body (single) or the
 * producer batch body (batch: every message with its own properties, MessageDecoder.encodeMessages).
 *
 * Response header: msgId (the offset message id; comma-separated for a batch), queueId, queueOffset
 * (of the first message for a batch), transactionId?. Codes: SUCCESS, TOPIC_NOT_EXIST (auto-create off),
 * NO_PERMISSION, MESSAGE_ILLEGAL, SERVICE_NOT_AVAILABLE (disk full), FLUSH_DISK_TIMEOUT.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { defineCommand, int32, long, str } from '../define.js';

export const SendMessageRequestHeader = z.object({
  producerGroup: str(),
  topic: str(),
  defaultTopic: str(),
  defaultTopicQueueNums: int32(),
  queueId: int32(),
  sysFlag: int32(),
  bornTimestamp: long(),
  flag: int32(),
  properties: str().optional(),
  reconsumeTimes: int32().optional(),
  unitMode: z.boolean().optional(),
  batch: z.boolean().optional(),
  maxReconsumeTimes: int32().optional(),
  bname: str().optional(),
});
export type SendMessageRequestHeader = z.infer<typeof SendMessageRequestHeader>;

export const SendMessageResponseHeader = z.object({
  msgId: str(),
  queueId: int32(),
  queueOffset: long(),
  transactionId: str().optional(),
  /** RocketMQ: the broker's region and trace switch (MessageConst.PROPERTY_MSG_REGION, PROPERTY_TRACE_SWITCH). */
  MSG_REGION: str().optional(),
  TRACE_ON: str().optional(),
});
export type SendMessageResponseHeader = z.infer<typeof SendMessageResponseHeader>;

export const SendMessage = defineCommand({
  code: RequestCode.SEND_MESSAGE,
  name: 'SEND_MESSAGE',
  requestHeader: SendMessageRequestHeader,
  responseHeader: SendMessageResponseHeader.partial(),
});

export const SendBatchMessage = defineCommand({
  code: RequestCode.SEND_BATCH_MESSAGE,
  name: 'SEND_BATCH_MESSAGE',
  requestHeader: SendMessageRequestHeader,
  responseHeader: SendMessageResponseHeader.partial(),
});
