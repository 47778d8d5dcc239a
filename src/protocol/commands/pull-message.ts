/**
 * PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361): read messages from one queue.
 *
 * Request header: consumerGroup, topic, queueId, queueOffset (offset to read from), maxMsgNums,
 * sysFlag (PullSysFlag), commitOffset (used only with COMMIT_OFFSET), suspendTimeoutMillis (long-poll
 * hold, ms), subVersion, and optionally subscription (only read with the SUBSCRIPTION flag),
 * expressionType (`TAG` | `SQL92`, absent = TAG), maxMsgBytes (sent, ignored by the broker as in
 * RocketMQ), bname (broker name).
 *
 * Response codes: SUCCESS (FOUND; body = stored records back to back), PULL_NOT_FOUND,
 * PULL_RETRY_IMMEDIATELY, PULL_OFFSET_MOVED, and the check failures of RocketMQ's PullMessageProcessor. The remark is the
 * GetMessageStatus name. Response header: nextBeginOffset, minOffset, maxOffset, suggestWhichBrokerId.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { defineCommand, int32, long, str } from '../define.js';

export const PullMessageRequestHeader = z.object({
  consumerGroup: str(),
  topic: str(),
  queueId: int32(),
  queueOffset: long(),
  maxMsgNums: int32(),
  sysFlag: int32(),
  commitOffset: long(),
  suspendTimeoutMillis: long().min(0),
  subscription: str().optional(),
  subVersion: long(),
  expressionType: str().optional(),
  maxMsgBytes: int32().optional(),
  bname: str().optional(),
});
export type PullMessageRequestHeader = z.infer<typeof PullMessageRequestHeader>;

export const PullMessageResponseHeader = z.object({
  suggestWhichBrokerId: long(),
  nextBeginOffset: long(),
  minOffset: long(),
  maxOffset: long(),
  topicSysFlag: int32().optional(),
  groupSysFlag: int32().optional(),
  forbiddenType: int32().optional(),
});
export type PullMessageResponseHeader = z.infer<typeof PullMessageResponseHeader>;

export const PullMessage = defineCommand({
  code: RequestCode.PULL_MESSAGE,
  name: 'PULL_MESSAGE',
  requestHeader: PullMessageRequestHeader,
  responseHeader: PullMessageResponseHeader.partial(),
});

export const LitePullMessage = defineCommand({
  code: RequestCode.LITE_PULL_MESSAGE,
  name: 'LITE_PULL_MESSAGE',
  requestHeader: PullMessageRequestHeader,
  responseHeader: PullMessageResponseHeader.partial(),
});
