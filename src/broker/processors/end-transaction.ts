/**
 * END_TRANSACTION (37) — RocketMQ: EndTransactionProcessor. A transactional producer commits or rolls
 * back the half message it sent (or answers the broker's check with `fromTransactionCheck`). The
 * TransactionalMessageService checks that the offsets name a half message of this producer group that is
 * still undecided, and answers SYSTEM_ERROR naming what does not match otherwise.
 */
import { ResponseCode, type EndTransactionRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { recordTransactionEnd } from '../metrics/transaction-end.js';
import { fail } from './responses.js';

export const endTransaction: Processor = async (ctx, request, connection) => {
  const service = ctx.transactionalMessageService;
  if (!service) return fail(ResponseCode.SYSTEM_ERROR, 'this broker has no transactional message service');
  const h = request.header as EndTransactionRequestHeader;
  ctx.logger.debug({ header: h, producer: connection.remoteAddress }, 'end transaction');
  const answer = await service.endTransaction(h);
  if (answer.code === ResponseCode.SUCCESS) void recordTransactionEnd(ctx, h);
  return answer;
};
