/**
 * LOCK_BATCH_MQ (41) and UNLOCK_BATCH_MQ (42): the broker-side queue locks of orderly consumption
 * (RocketMQ: AdminBrokerProcessor.lockBatchMQ / unlockBatchMQ over RebalanceLockManager).
 *
 * No header. Request body (RocketMQ's LockBatchRequestBody / UnlockBatchRequestBody):
 * `{consumerGroup, clientId, onlyThisBroker, mqSet: [{topic, brokerName, queueId}]}`.
 * LOCK_BATCH_MQ answers SUCCESS with `{lockOKMQSet: [...]}`: the queues of the request that this
 * client holds now (newly locked, renewed, or taken over from an expired lock). UNLOCK_BATCH_MQ
 * answers SUCCESS with no body; a queue locked by another client is left alone.
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, str } from '../define.js';

export const MessageQueueSchema = z.object({
  topic: str().min(1),
  brokerName: str(),
  queueId: int32().min(0),
});
export type MessageQueueWire = z.infer<typeof MessageQueueSchema>;

/** A request names at most this many queues (a consumer holds far fewer per broker). */
export const MAX_LOCK_BATCH_QUEUES = 65536;

export const LockBatchRequestBodySchema = z.object({
  consumerGroup: str().min(1),
  clientId: str().min(1),
  onlyThisBroker: z.boolean().default(false),
  mqSet: z.array(MessageQueueSchema).max(MAX_LOCK_BATCH_QUEUES).default([]),
});
export type LockBatchRequestBody = z.infer<typeof LockBatchRequestBodySchema>;

export const LockBatchResponseBodySchema = z.object({
  lockOKMQSet: z.array(MessageQueueSchema).default([]),
});
export type LockBatchResponseBody = z.infer<typeof LockBatchResponseBodySchema>;

export const LockBatchMq = defineCommand({
  code: RequestCode.LOCK_BATCH_MQ,
  name: 'LOCK_BATCH_MQ',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: LockBatchRequestBodySchema,
  responseBody: LockBatchResponseBodySchema,
});

export const UnlockBatchMq = defineCommand({
  code: RequestCode.UNLOCK_BATCH_MQ,
  name: 'UNLOCK_BATCH_MQ',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: LockBatchRequestBodySchema,
});
