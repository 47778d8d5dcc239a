/**
 * SEARCH_OFFSET_BY_TIMESTAMP (29): the queue offset for a store time. `boundaryType`
 * LOWER (default) or UPPER, case-insensitive; anything else reads as LOWER (RocketMQ: BoundaryType.getType).
 */
import { nameProblem } from '../../common/names.js';
import type { SearchOffsetRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const searchOffsetByTimestamp: Processor = async (ctx, request) => {
  const h = request.header as SearchOffsetRequestHeader;
  if (nameProblem('topic', h.topic, 255) !== null || h.queueId < 0) return ok({ offset: 0 });
  const boundary = h.boundaryType?.toUpperCase() === 'UPPER' ? 'UPPER' : 'LOWER';
  const offset = await ctx.store.getOffsetInQueueByTime(h.topic, h.queueId, h.timestamp, boundary);
  return ok({ offset });
};
