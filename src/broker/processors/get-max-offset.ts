/** GET_MAX_OFFSET (30): one past the queue's last message (0 for an empty or unknown queue). */
import { nameProblem } from '../../common/names.js';
import type { GetMaxOffsetRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const getMaxOffset: Processor = (ctx, request) => {
  const h = request.header as GetMaxOffsetRequestHeader;
  const known = nameProblem('topic', h.topic, 255) === null && h.queueId >= 0;
  return Promise.resolve(ok({ offset: known ? ctx.store.getMaxOffsetInQueue(h.topic, h.queueId) : 0 }));
};
