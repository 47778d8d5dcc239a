/**
 * GET_ROUTEINFO_BY_TOPIC (105): the broker answers route queries itself. One broker (id 0,
 * the master) at this broker's address; the topic's queues with its perm masked by the broker's, as a
 * RocketMQ broker registers them (registerBrokerAll), without PERM_WRITE while an operator has wiped it
 * (write-perm-of-broker.ts). TBW102 is served while auto-creation is enabled.
 */
import {
  FAQ_SUFFIX,
  PermName,
  ResponseCode,
  type GetRouteInfoRequestHeader,
  type TopicRouteData,
} from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const getRouteInfoByTopic: Processor = (ctx, request) => {
  const h = request.header as GetRouteInfoRequestHeader;
  const cfg = ctx.topicConfigManager.selectTopicConfig(h.topic);
  if (!cfg) {
    return Promise.resolve(
      fail(ResponseCode.TOPIC_NOT_EXIST, `No topic route info in name server for the topic: ${h.topic}${FAQ_SUFFIX}`),
    );
  }
  const brokerPerm = ctx.brokerConfig.brokerPermission;
  let perm = (brokerPerm & 6) === 6 ? cfg.perm : cfg.perm & brokerPerm;
  // An operator's WIPE_WRITE_PERM_OF_BROKER: the route shows no PERM_WRITE, as RocketMQ's name server does.
  if (ctx.ops.nameServer.isWritePermWiped(ctx.topicConfigManager.getDataVersion().counter)) perm &= ~PermName.WRITE;
  const route: TopicRouteData = {
    brokerDatas: [{ cluster: ctx.clusterName, brokerName: ctx.brokerName, brokerAddrs: { '0': ctx.brokerAddress } }],
    queueDatas: [
      {
        brokerName: ctx.brokerName,
        readQueueNums: cfg.readQueueNums,
        writeQueueNums: cfg.writeQueueNums,
        perm,
        topicSysFlag: cfg.topicSysFlag,
      },
    ],
  };
  return Promise.resolve(ok({}, undefined, Buffer.from(JSON.stringify(route), 'utf8')));
};
