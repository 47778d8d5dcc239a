/**
 * QUERY_CONSUMER_OFFSET (14) and UPDATE_CONSUMER_OFFSET (15).
 *
 * QUERY: consumerGroup, topic, queueId, setZeroIfNotFound? → SUCCESS with `offset`, or QUERY_NOT_FOUND
 * (22) when the group has no committed offset (with RocketMQ's "offset 0 on a young queue" rule).
 * UPDATE: consumerGroup, topic, queueId, commitOffset → SUCCESS; SUBSCRIPTION_GROUP_NOT_EXIST,
 * TOPIC_NOT_EXIST, INVALID_PARAMETER as RocketMQ checks them. The Java client sends it oneway; over
 * HTTP it is an ordinary call whose answer the client may ignore.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

export const QueryConsumerOffsetRequestHeader = z.object({
  consumerGroup: str(),
  topic: str(),
  queueId: int32(),
  setZeroIfNotFound: z.boolean().optional(),
  bname: str().optional(),
});
export type QueryConsumerOffsetRequestHeader = z.infer<typeof QueryConsumerOffsetRequestHeader>;

export const QueryConsumerOffsetResponseHeader = z.object({ offset: long().optional() });
export type QueryConsumerOffsetResponseHeader = z.infer<typeof QueryConsumerOffsetResponseHeader>;

export const QueryConsumerOffset = defineCommand({
  code: RequestCode.QUERY_CONSUMER_OFFSET,
  name: 'QUERY_CONSUMER_OFFSET',
  requestHeader: QueryConsumerOffsetRequestHeader,
  responseHeader: QueryConsumerOffsetResponseHeader,
});

export const UpdateConsumerOffsetRequestHeader = z.object({
  consumerGroup: str(),
  topic: str(),
  queueId: int32(),
  commitOffset: long(),
  bname: str().optional(),
});
export type UpdateConsumerOffsetRequestHeader = z.infer<typeof UpdateConsumerOffsetRequestHeader>;

export const UpdateConsumerOffset = defineCommand({
  code: RequestCode.UPDATE_CONSUMER_OFFSET,
  name: 'UPDATE_CONSUMER_OFFSET',
  requestHeader: UpdateConsumerOffsetRequestHeader,
  responseHeader: EmptyHeader,
});
