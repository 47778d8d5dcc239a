/**
 * VIEW_MESSAGE_BY_ID (33): the stored record at a commit-log offset (the client decodes the offset from
 * an offset message id), as its exact bytes. RocketMQ answers SYSTEM_ERROR when nothing is stored there.
 */
import { ResponseCode, type ViewMessageRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const viewMessageById: Processor = async (ctx, request) => {
  const h = request.header as ViewMessageRequestHeader;
  const record = await ctx.store.lookMessageByOffsetRaw(h.offset);
  if (!record) return fail(ResponseCode.SYSTEM_ERROR, `can not find message by the offset, ${h.offset}`);
  return ok({}, undefined, record);
};
