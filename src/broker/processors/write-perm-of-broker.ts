/**
 * WIPE_WRITE_PERM_OF_BROKER (205) and ADD_WRITE_PERM_OF_BROKER (327), as RocketMQ's NameServer
 * (RouteInfoManager.operateWritePermOfBroker) does them for this broker, its own NameServer: the routes
 * it hands out show the broker's queues without PERM_WRITE (wipe) or with READ and WRITE again (add), so
 * producers stop or resume sending to it once they refresh their routes; the broker itself keeps
 * accepting what is sent to it. The answer counts the topics whose route changed
 * (`wipeTopicCount` / `addTopicCount`): every topic of the broker, or 0 for another broker name.
 */
import type { WritePermOfBrokerRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const wipeWritePermOfBroker: Processor = (ctx, request, connection) => {
  const { brokerName } = request.header as WritePermOfBrokerRequestHeader;
  if (brokerName !== ctx.brokerName) return Promise.resolve(ok({ wipeTopicCount: 0 }));
  ctx.ops.nameServer.wipeWritePerm(ctx.topicConfigManager.getDataVersion().counter);
  const count = ctx.topicConfigManager.allTopics().length;
  ctx.logger.warn({ brokerName, remote: connection.remoteAddress, count }, 'wipe write perm of broker');
  return Promise.resolve(ok({ wipeTopicCount: count }));
};

export const addWritePermOfBroker: Processor = (ctx, request, connection) => {
  const { brokerName } = request.header as WritePermOfBrokerRequestHeader;
  if (brokerName !== ctx.brokerName) return Promise.resolve(ok({ addTopicCount: 0 }));
  ctx.ops.nameServer.addWritePerm();
  const count = ctx.topicConfigManager.allTopics().length;
  ctx.logger.info({ brokerName, remote: connection.remoteAddress, count }, 'add write perm of broker');
  return Promise.resolve(ok({ addTopicCount: count }));
};
