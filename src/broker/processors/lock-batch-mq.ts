/**
 * LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42) — RocketMQ: AdminBrokerProcessor.lockBatchMQ /
 * unlockBatchMQ. The queue locks of orderly consumption, held in the broker's RebalanceLockManager.
 * The body was parsed and validated by the transport with the command's schema.
 */
import type { LockBatchRequestBody, MessageQueueWire } from '../../protocol/index.js';
import type { BrokerContext, Processor } from '../broker-context.js';
import { ok } from './responses.js';

/**
 * Only queues that exist on this broker can be locked: a lock on anything else would mean nothing, and
 * refusing it keeps the lock table bounded by the queues that exist.
 */
function existingQueues(ctx: BrokerContext, mqs: readonly MessageQueueWire[]): MessageQueueWire[] {
  return mqs.filter((mq) => {
    if (mq.brokerName !== ctx.brokerName) return false;
    const tc = ctx.topicConfigManager.selectTopicConfig(mq.topic);
    return tc !== undefined && mq.queueId < Math.max(tc.readQueueNums, tc.writeQueueNums);
  });
}

export const lockBatchMq: Processor = async (ctx, request) => {
  const body = request.parsedBody as LockBatchRequestBody;
  const mqs = existingQueues(ctx, body.mqSet);
  const lockOKMQSet = ctx.rebalanceLockManager.tryLockBatch(body.consumerGroup, mqs, body.clientId);
  return ok({}, undefined, Buffer.from(JSON.stringify({ lockOKMQSet }), 'utf8'));
};

export const unlockBatchMq: Processor = async (ctx, request) => {
  const body = request.parsedBody as LockBatchRequestBody;
  ctx.rebalanceLockManager.unlockBatch(body.consumerGroup, body.mqSet, body.clientId);
  return ok({});
};
