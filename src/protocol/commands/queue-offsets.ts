/**
 * GET_MIN_OFFSET (31), GET_MAX_OFFSET (30) and SEARCH_OFFSET_BY_TIMESTAMP (29): offsets of a queue.
 *
 * GET_MAX_OFFSET answers one past the last message (0 for an empty or unknown queue).
 * SEARCH_OFFSET_BY_TIMESTAMP: boundaryType `LOWER` (default; the first offset stored at or after
 * `timestamp`) or `UPPER` (the last stored at or before), case-insensitive as in RocketMQ.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { defineCommand, int32, long, str } from '../define.js';

export const OffsetResponseHeader = z.object({ offset: long() });
export type OffsetResponseHeader = z.infer<typeof OffsetResponseHeader>;

export const GetMinOffsetRequestHeader = z.object({ topic: str(), queueId: int32(), bname: str().optional() });
export type GetMinOffsetRequestHeader = z.infer<typeof GetMinOffsetRequestHeader>;

export const GetMinOffset = defineCommand({
  code: RequestCode.GET_MIN_OFFSET,
  name: 'GET_MIN_OFFSET',
  requestHeader: GetMinOffsetRequestHeader,
  responseHeader: OffsetResponseHeader.partial(),
});

export const GetMaxOffsetRequestHeader = z.object({
  topic: str(),
  queueId: int32(),
  committed: z.boolean().optional(),
  bname: str().optional(),
});
export type GetMaxOffsetRequestHeader = z.infer<typeof GetMaxOffsetRequestHeader>;

export const GetMaxOffset = defineCommand({
  code: RequestCode.GET_MAX_OFFSET,
  name: 'GET_MAX_OFFSET',
  requestHeader: GetMaxOffsetRequestHeader,
  responseHeader: OffsetResponseHeader.partial(),
});

export const SearchOffsetRequestHeader = z.object({
  topic: str(),
  queueId: int32(),
  timestamp: long(),
  boundaryType: str().optional(),
  bname: str().optional(),
});
export type SearchOffsetRequestHeader = z.infer<typeof SearchOffsetRequestHeader>;

export const SearchOffsetByTimestamp = defineCommand({
  code: RequestCode.SEARCH_OFFSET_BY_TIMESTAMP,
  name: 'SEARCH_OFFSET_BY_TIMESTAMP',
  requestHeader: SearchOffsetRequestHeader,
  responseHeader: OffsetResponseHeader.partial(),
});
