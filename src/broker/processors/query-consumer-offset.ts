/**
 * QUERY_CONSUMER_OFFSET (14): RocketMQ's ConsumerManageProcessor.queryConsumerOffset.
 * The committed offset; without one, offset 0 for a young queue (min offset 0 and message 0 still in
 * memory) unless the caller said `setZeroIfNotFound: false`, else QUERY_NOT_FOUND.
 */
import { nameProblem } from '../../common/names.js';
import { ResponseCode, type QueryConsumerOffsetRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const queryConsumerOffset: Processor = (ctx, request) => {
  const h = request.header as QueryConsumerOffsetRequestHeader;
  const offset = ctx.consumerOffsetManager.queryOffset(h.consumerGroup, h.topic, h.queueId);
  if (offset >= 0) return Promise.resolve(ok({ offset }));
  if (h.setZeroIfNotFound === false) {
    return Promise.resolve(
      fail(ResponseCode.QUERY_NOT_FOUND, 'Not found, do not set to zero, maybe this group boot first'),
    );
  }
  // Names are checked before they reach the store (no path outside the store directory).
  const known = nameProblem('topic', h.topic, 255) === null && h.queueId >= 0;
  const minOffset = known ? ctx.store.getMinOffsetInQueue(h.topic, h.queueId) : 0;
  // RocketMQ: a new group on a young queue starts at 0, whatever its ConsumeFromWhere.
  if (known && minOffset <= 0 && ctx.store.checkInMemByConsumeOffset(h.topic, h.queueId, 0, 1)) {
    return Promise.resolve(ok({ offset: 0 }));
  }
  return Promise.resolve(
    fail(ResponseCode.QUERY_NOT_FOUND, 'Not found, V3_0_6_SNAPSHOT maybe this group consumer boot first'),
  );
};
