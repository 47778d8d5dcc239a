/**
 * GET_CONSUMER_LIST_BY_GROUP (38) — RocketMQ: ConsumerManageProcessor.getConsumerListByGroup. Body
 * `{"consumerIdList": [...]}` with the live members (join order; clients sort them). A group with no
 * live member: SYSTEM_ERROR `no consumer for this group, <group>`.
 */
import { ResponseCode, type GetConsumerListByGroupRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const getConsumerListByGroup: Processor = async (ctx, request, connection) => {
  const { consumerGroup } = request.header as GetConsumerListByGroupRequestHeader;
  const clientIds = ctx.consumerManager.getConsumerGroupInfo(consumerGroup)?.getAllClientIds() ?? [];
  if (clientIds.length > 0) {
    return ok({}, undefined, Buffer.from(JSON.stringify({ consumerIdList: clientIds }), 'utf8'));
  }
  ctx.logger.debug({ consumerGroup, remote: connection.remoteAddress }, 'getConsumerGroupInfo failed');
  return fail(ResponseCode.SYSTEM_ERROR, `no consumer for this group, ${consumerGroup}`);
};
