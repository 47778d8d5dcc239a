/**
 * CONSUMER_SEND_MSG_BACK (36): a consumer hands a failed message back for a later retry.
 *
 * Request header: offset (the message's COMMIT-LOG offset, not its queue offset), group, delayLevel
 * (0 = let the broker choose 3 + reconsumeTimes; negative = straight to the DLQ), and optionally
 * originMsgId, originTopic, unitMode, maxReconsumeTimes, bname.
 * Codes: SUCCESS; SUBSCRIPTION_GROUP_NOT_EXIST; NO_PERMISSION; SYSTEM_ERROR
 * ("look message by offset failed, <offset>").
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

export const ConsumerSendMsgBackRequestHeader = z.object({
  offset: long(),
  group: str(),
  delayLevel: int32(),
  originMsgId: str().optional(),
  originTopic: str().optional(),
  unitMode: z.boolean().optional(),
  maxReconsumeTimes: int32().optional(),
  bname: str().optional(),
});
export type ConsumerSendMsgBackRequestHeader = z.infer<typeof ConsumerSendMsgBackRequestHeader>;

export const ConsumerSendMsgBack = defineCommand({
  code: RequestCode.CONSUMER_SEND_MSG_BACK,
  name: 'CONSUMER_SEND_MSG_BACK',
  requestHeader: ConsumerSendMsgBackRequestHeader,
  responseHeader: EmptyHeader,
});
