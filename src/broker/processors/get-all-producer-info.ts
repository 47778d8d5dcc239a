/**
 * GET_ALL_PRODUCER_INFO (328, mqadmin producer): every producer group's live members as RocketMQ's
 * ProducerTableInfo `{"data":{"<group>":[{"clientId","language","lastUpdateTimestamp","remoteIP","version"}]}}`
 * (RocketMQ: ProducerManager.getProducerTable), with the language and version their heartbeats announced.
 */
import { toFastJson } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const getAllProducerInfo: Processor = (ctx) => {
  const pm = ctx.consumerManager.producerManager;
  const data: Record<string, unknown[]> = {};
  for (const group of pm.getGroups().sort()) {
    data[group] = pm.getClientIds(group).map((clientId) => ({
      clientId,
      ...ctx.ops.clients.describe(clientId),
      lastUpdateTimestamp: pm.lastUpdateTimestamp(group, clientId) ?? 0,
      // RocketMQ writes the channel's address as Netty prints it: `/ip:port`.
      remoteIP: `/${ctx.ops.clients.get(clientId)?.remoteAddress ?? ''}`,
    }));
  }
  return Promise.resolve(ok({}, undefined, Buffer.from(toFastJson({ data }), 'utf8')));
};
