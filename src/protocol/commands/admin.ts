/**
 * UPDATE_AND_CREATE_TOPIC (17), UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200) and VIEW_MESSAGE_BY_ID (33).
 *
 * UPDATE_AND_CREATE_TOPIC header: topic, readQueueNums, writeQueueNums, perm, and optionally
 * topicFilterType (`SINGLE_TAG` | `MULTI_TAG`), topicSysFlag, order, defaultTopic (which a RocketMQ broker requires).
 * UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: no header; body SubscriptionGroupConfig JSON (RocketMQ's defaults).
 * VIEW_MESSAGE_BY_ID: offset (commit-log offset, decoded from an offset message id by the client);
 * body = the stored record's bytes; SYSTEM_ERROR when no message is stored there.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

/**
 * The most queues a topic may have, read or write (ours: RocketMQ has no bound, and a route listing 1e9
 * queues exhausts every client that fetches it). Also bounds a group's retryQueueNums.
 */
export const MAX_QUEUE_NUMS = 1024;

export const CreateTopicRequestHeader = z.object({
  topic: str().min(1),
  readQueueNums: int32().min(1),
  writeQueueNums: int32().min(1),
  perm: int32(),
  topicFilterType: str().optional(),
  topicSysFlag: int32().optional(),
  order: z.boolean().optional(),
  /** The template topic (`TBW102`); RocketMQ's broker requires it, the bundled broker ignores it. */
  defaultTopic: str().optional(),
});
export type CreateTopicRequestHeader = z.infer<typeof CreateTopicRequestHeader>;

export const UpdateAndCreateTopic = defineCommand({
  code: RequestCode.UPDATE_AND_CREATE_TOPIC,
  name: 'UPDATE_AND_CREATE_TOPIC',
  requestHeader: CreateTopicRequestHeader,
  responseHeader: EmptyHeader,
});

export const SubscriptionGroupConfigSchema = z.object({
  groupName: str().min(1),
  consumeEnable: z.boolean().default(true),
  consumeFromMinEnable: z.boolean().default(true),
  consumeBroadcastEnable: z.boolean().default(true),
  retryQueueNums: int32().min(0).max(MAX_QUEUE_NUMS).default(1),
  retryMaxTimes: int32().min(0).default(16),
  brokerId: long().default(0),
  whichBrokerWhenConsumeSlowly: long().default(1),
  notifyConsumerIdsChangedEnable: z.boolean().default(true),
  groupSysFlag: int32().default(0),
  consumeTimeoutMinute: int32().default(15),
});
export type SubscriptionGroupConfig = z.infer<typeof SubscriptionGroupConfigSchema>;

export const UpdateAndCreateSubscriptionGroup = defineCommand({
  code: RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP,
  name: 'UPDATE_AND_CREATE_SUBSCRIPTIONGROUP',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: SubscriptionGroupConfigSchema,
});

export const ViewMessageRequestHeader = z.object({ offset: long().min(0) });
export type ViewMessageRequestHeader = z.infer<typeof ViewMessageRequestHeader>;

export const ViewMessageById = defineCommand({
  code: RequestCode.VIEW_MESSAGE_BY_ID,
  name: 'VIEW_MESSAGE_BY_ID',
  requestHeader: ViewMessageRequestHeader,
  responseHeader: EmptyHeader,
});
