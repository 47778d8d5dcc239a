/**
 * UNREGISTER_CLIENT (35) — RocketMQ: ClientManageProcessor.unregisterClient. Removes the client from the
 * producer group and/or the consumer group named in the header; a consumer's departure is announced to
 * the remaining members at once (unless the group's notifyConsumerIdsChangedEnable is off, or it is a
 * BROADCASTING group). Always SUCCESS, also for a client that was not registered.
 */
import type { UnregisterClientRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const unregisterClient: Processor = async (ctx, request) => {
  const h = request.header as UnregisterClientRequestHeader;
  if (h.producerGroup) ctx.consumerManager.producerManager.unregisterProducer(h.producerGroup, h.clientID);
  if (h.consumerGroup) {
    const config = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(h.consumerGroup);
    ctx.consumerManager.unregisterConsumer(h.consumerGroup, h.clientID, config?.notifyConsumerIdsChangedEnable ?? true);
  }
  return ok();
};
