/**
 * RESUME_CHECK_HALF_MESSAGE (323, mqadmin resumeCheckHalfMessage) `msgId`: the half message named by its
 * offset message id, or its copy given up to TRANS_CHECK_MAX_TIME_TOPIC after too many checks, is put
 * back into RMQ_SYS_TRANS_HALF_TOPIC with its check count at 0, so the broker checks it with its producer
 * group again (RocketMQ: AdminBrokerProcessor.resumeCheckHalfMessage). SYSTEM_ERROR with RocketMQ's remark
 * `Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC.` and the reason when the id
 * names no stored message, a message that is not a half message, or a transaction already committed or
 * rolled back (this broker never resumes a transaction that was decided, so it cannot be delivered twice).
 */
import { ResponseCode } from '../../protocol/index.js';
import type { ResumeCheckHalfMessageRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail } from './responses.js';

const PUT_BACK_FAILED = 'Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC.';

export const resumeCheckHalfMessage: Processor = async (ctx, request, connection) => {
  const { msgId } = request.header as ResumeCheckHalfMessageRequestHeader;
  const service = ctx.transactionalMessageService;
  if (!service) return fail(ResponseCode.SYSTEM_ERROR, `${PUT_BACK_FAILED} transactional messages are off`);
  const msg = await ctx.store.lookMessageByMsgId(msgId).catch(() => null);
  if (!msg) return fail(ResponseCode.SYSTEM_ERROR, `${PUT_BACK_FAILED} No message with the offset id ${msgId}`);
  const answer = await service.resumeCheck(msg);
  ctx.logger.info({ msgId, code: answer.code, remote: connection.remoteAddress }, 'resumeCheckHalfMessage');
  return answer.code === ResponseCode.SUCCESS
    ? answer
    : { ...answer, remark: `${PUT_BACK_FAILED} ${answer.remark ?? ''}`.trim() };
};
