/**
 * GET_CONSUMER_CONNECTION_LIST (203): a group's live members and subscriptions, as RocketMQ's
 * ConsumerConnection; CONSUMER_NOT_ONLINE `the consumer group[<g>] not online` when no member is alive.
 * A member's language and version are those of its heartbeat's remoting header; members of the HTTP
 * transport report none and appear as language `OTHER`, version 0 unless their registration carried them.
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
    // The heartbeat's remoting header names the client's language and version (RocketMQ: ClientChannelInfo).
    const announced = ctx.ops.clients.describe(ch.clientId);
    return {
      clientId: ch.clientId,
      clientAddr: ch.remoteAddress,
      language: typeof extra.language === 'string' ? extra.language : announced.language,
      version: typeof extra.version === 'number' ? extra.version : announced.version,
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
