/**
 * GET_CONSUMER_CONNECTION_LIST (203): a group's live members and subscriptions, as RocketMQ's
 * ConsumerConnection; CONSUMER_NOT_ONLINE `the consumer group[<g>] not online` when no member is alive.
 * Members of the HTTP transport report no language or version: they appear as language `OTHER`,
 * version 0 unless their registration carried them.
 */
import {
  ResponseCode,
  toFastJson,
  type Connection,
  type GetConsumerConnectionListRequestHeader,
} from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const getConsumerConnectionList: Processor = (ctx, request) => {
  const { consumerGroup } = request.header as GetConsumerConnectionListRequestHeader;
  const info = ctx.consumerManager.getConsumerGroupInfo(consumerGroup);
  const channels = info?.getChannels() ?? [];
  if (!info || channels.length === 0) {
    return Promise.resolve(fail(ResponseCode.CONSUMER_NOT_ONLINE, `the consumer group[${consumerGroup}] not online`));
  }
  const connectionSet: Connection[] = channels.map((ch) => {
    const extra = ch as { language?: unknown; version?: unknown };
    return {
      clientId: ch.clientId,
      clientAddr: ch.remoteAddress,
      language: typeof extra.language === 'string' ? extra.language : 'OTHER',
      version: typeof extra.version === 'number' ? extra.version : 0,
    };
  });
  const subscriptionTable = Object.fromEntries(info.getSubscriptions().map((s) => [s.topic, s]));
  const body = toFastJson({
    connectionSet,
    consumeFromWhere: info.consumeFromWhere,
    consumeType: info.consumeType,
    messageModel: info.messageModel,
    subscriptionTable,
  });
  return Promise.resolve(ok({}, undefined, Buffer.from(body, 'utf8')));
};
