/**
 * GET_PRODUCER_CONNECTION_LIST (204): a producer group's live members as RocketMQ's ProducerConnection
 * `{"connectionSet":[{"clientAddr","clientId","language","version"}]}`; SYSTEM_ERROR
 * `the producer group[<g>] not exist` when no member is alive (RocketMQ: AdminBrokerProcessor).
 */
import { ResponseCode, toFastJson, type GetProducerConnectionListRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const getProducerConnectionList: Processor = (ctx, request) => {
  const { producerGroup } = request.header as GetProducerConnectionListRequestHeader;
  const ids = ctx.consumerManager.producerManager.getClientIds(producerGroup);
  if (ids.length === 0) {
    return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, `the producer group[${producerGroup}] not exist`));
  }
  const connectionSet = ids.map((clientId) => {
    const seen = ctx.ops.clients.get(clientId);
    return { clientAddr: seen?.remoteAddress ?? '', clientId, ...ctx.ops.clients.describe(clientId) };
  });
  return Promise.resolve(ok({}, undefined, Buffer.from(toFastJson({ connectionSet }), 'utf8')));
};
