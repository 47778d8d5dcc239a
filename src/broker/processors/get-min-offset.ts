/** GET_MIN_OFFSET (31): the queue's smallest offset still stored (0 for an unknown queue). */
import { nameProblem } from '../../common/names.js';
import type { GetMinOffsetRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const getMinOffset: Processor = (ctx, request) => {
  const h = request.header as GetMinOffsetRequestHeader;
  const known = nameProblem('topic', h.topic, 255) === null && h.queueId >= 0;
  return Promise.resolve(ok({ offset: known ? ctx.store.getMinOffsetInQueue(h.topic, h.queueId) : 0 }));
};
