/**
 * QUERY_MESSAGE (12): messages of a topic whose KEYS property holds `key` (RocketMQ's
 * QueryMessageRequestHeader: `topic`, `key`, `maxNum`, `beginTimestamp`, `endTimestamp`, ms). With the
 * extra header field `_UNIQUE_KEY_QUERY: "true"` the key is matched against the message's unique
 * client id (UNIQ_KEY) instead, as `mqadmin queryMsgById` does for a client message id.
 *
 * Body: the stored records' bytes, one after another (as a pull body). Response header
 * `indexLastUpdateTimestamp` and `indexLastUpdatePhyoffset`. QUERY_NOT_FOUND (22)
 * `can not find message, maybe time range not correct` when nothing matched.
 *
 * The bundled broker keeps no key index: it scans the topic's most recent messages inside the time
 * range, newest first, at most `QUERY_MESSAGE_SCAN_LIMIT` of them per query (a bounded scan), and
 * answers at most `maxNum` messages.
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { defineCommand, int32, long, str } from '../define.js';

/** The most messages one QUERY_MESSAGE looks at on the bundled broker. */
export const QUERY_MESSAGE_SCAN_LIMIT = 100_000;

/** RocketMQ: MixAll.UNIQUE_MSG_QUERY_FLAG. */
export const UNIQUE_MSG_QUERY_FLAG = '_UNIQUE_KEY_QUERY';

export const QueryMessageRequestHeader = z.object({
  topic: str().min(1),
  key: str().min(1),
  maxNum: int32().min(1),
  beginTimestamp: long(),
  endTimestamp: long(),
  _UNIQUE_KEY_QUERY: z.union([z.boolean(), str()]).optional(),
});
export type QueryMessageRequestHeader = z.infer<typeof QueryMessageRequestHeader>;

export const QueryMessageResponseHeader = z.object({
  indexLastUpdateTimestamp: long(),
  indexLastUpdatePhyoffset: long(),
});
export type QueryMessageResponseHeader = z.infer<typeof QueryMessageResponseHeader>;

export const QueryMessage = defineCommand({
  code: RequestCode.QUERY_MESSAGE,
  name: 'QUERY_MESSAGE',
  requestHeader: QueryMessageRequestHeader,
  responseHeader: QueryMessageResponseHeader.partial(),
});
