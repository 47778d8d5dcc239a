/**
 * The store maintenance mqadmin triggers by hand, done now as RocketMQ's AdminBrokerProcessor does it,
 * each answered SUCCESS once done (mqadmin prints `success`):
 * - CLEAN_EXPIRED_CONSUMEQUEUE (306, cleanExpiredCQ): deletes the consume queues whose every message has
 *   left the commit log (DefaultMessageStore.cleanExpiredConsumerQueue).
 * - CLEAN_UNUSED_TOPIC (316, cleanUnusedTopic): deletes the consume queues of topics the broker no longer
 *   has a config for (DefaultMessageStore.cleanUnusedTopic).
 * - DELETE_EXPIRED_COMMITLOG (329, deleteExpiredCommitLog): runs retention now rather than at `deleteWhen`:
 *   commit-log segments older than fileReservedTime are deleted and the consume queues moved past them
 *   (DefaultMessageStore.executeDeleteFilesManually).
 */
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const cleanExpiredConsumeQueue: Processor = (ctx, _request, connection) => {
  const deleted = ctx.store.cleanExpiredConsumeQueues();
  ctx.logger.warn({ remote: connection.remoteAddress, deleted }, 'cleanExpiredConsumeQueue');
  return Promise.resolve(ok());
};

export const cleanUnusedTopic: Processor = (ctx, _request, connection) => {
  const tcm = ctx.topicConfigManager;
  const cleaned = ctx.store.cleanUnusedTopics((topic) => tcm.selectTopicConfig(topic) !== undefined);
  ctx.logger.warn({ remote: connection.remoteAddress, cleaned }, 'cleanUnusedTopic');
  return Promise.resolve(ok());
};

export const deleteExpiredCommitLog: Processor = async (ctx, _request, connection) => {
  const segments = await ctx.store.deleteExpiredFiles();
  ctx.logger.warn({ remote: connection.remoteAddress, segments }, 'deleteExpiredCommitLog');
  return ok();
};
