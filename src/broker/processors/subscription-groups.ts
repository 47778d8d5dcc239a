/**
 * Subscription-group administration of RocketMQ's AdminBrokerProcessor:
 * - GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): SubscriptionGroupWrapper, every group's config and the
 *   table's data version (mqadmin getConsumerConfig picks its group from it).
 * - DELETE_SUBSCRIPTIONGROUP (207): removes the group's config, with `removeOffset` its committed
 *   offsets too, and forgets its stats. Succeeds for an unknown group, as RocketMQ does.
 * - CLONE_GROUP_OFFSET (314): `destGroup` gets `srcGroup`'s committed offsets on `topic` (blank: on every
 *   topic srcGroup has offsets on). Unknown topics are skipped, and so, unless `offline`, are topics an
 *   online srcGroup does not subscribe to; always SUCCESS, as RocketMQ answers.
 */
import {
  toFastJson,
  type CloneGroupOffsetRequestHeader,
  type DeleteSubscriptionGroupRequestHeader,
} from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const getAllSubscriptionGroupConfig: Processor = (ctx) => {
  const groups = ctx.subscriptionGroupManager.allSubscriptionGroups();
  const body = toFastJson({
    dataVersion: ctx.subscriptionGroupManager.getDataVersion(),
    subscriptionGroupTable: Object.fromEntries(groups.map((g) => [g.groupName, g])),
  });
  return Promise.resolve(ok({}, undefined, Buffer.from(body, 'utf8')));
};

export const deleteSubscriptionGroup: Processor = (ctx, request, connection) => {
  const h = request.header as DeleteSubscriptionGroupRequestHeader;
  ctx.logger.info({ group: h.groupName, remote: connection.remoteAddress }, 'deleteSubscriptionGroup');
  ctx.subscriptionGroupManager.deleteSubscriptionGroupConfig(h.groupName);
  if (h.removeOffset) ctx.consumerOffsetManager.removeOffsetsOfGroup(h.groupName);
  ctx.ops.stats.onGroupDeleted(h.groupName);
  return Promise.resolve(ok());
};

export const cloneGroupOffset: Processor = (ctx, request) => {
  const h = request.header as CloneGroupOffsetRequestHeader;
  const topics =
    h.topic === undefined || h.topic.trim() === ''
      ? ctx.consumerOffsetManager.whichTopicByConsumer(h.srcGroup)
      : [h.topic];
  const online = ctx.consumerManager.getConsumerGroupInfo(h.srcGroup);
  for (const topic of topics) {
    if (!ctx.topicConfigManager.selectTopicConfig(topic)) {
      ctx.logger.warn({ topic }, 'cloneGroupOffset: the topic config does not exist');
      continue;
    }
    if (!h.offline && online && online.getSubscriptions().length > 0 && !online.findSubscriptionData(topic)) {
      ctx.logger.warn(
        { group: h.srcGroup, topic },
        'cloneGroupOffset: the online group does not subscribe to the topic',
      );
      continue;
    }
    ctx.consumerOffsetManager.cloneOffset(h.srcGroup, h.destGroup, topic);
  }
  return Promise.resolve(ok());
};
