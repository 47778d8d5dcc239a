/**
 * GET_CONSUMER_LIST_BY_GROUP (38): the live client ids of a group. Body `{"consumerIdList": [...]}`.
 * A group with no member answers SYSTEM_ERROR `no consumer for this group, <group>` as RocketMQ does.
 *
 * WATCH_CONSUMER_IDS (90001, ours): the HTTP stand-in for RocketMQ's broker-initiated, oneway
 * NOTIFY_CONSUMER_IDS_CHANGED. The client sends the membership `version` it knows; the broker holds the
 * call until the group's version differs (a join, a leave or an eviction) or `timeoutMillis` passes,
 * then answers SUCCESS with the current `version` and the member list in the body. Holding a watch
 * also tells the broker the client is alive (docs/protocol.md, "Membership news").
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { defineCommand, long, str } from '../define.js';

export const GetConsumerListByGroupRequestHeader = z.object({ consumerGroup: str().min(1) });
export type GetConsumerListByGroupRequestHeader = z.infer<typeof GetConsumerListByGroupRequestHeader>;

export const ConsumerListBody = z.object({ consumerIdList: z.array(str()) });
export type ConsumerListBody = z.infer<typeof ConsumerListBody>;

export const GetConsumerListByGroup = defineCommand({
  code: RequestCode.GET_CONSUMER_LIST_BY_GROUP,
  name: 'GET_CONSUMER_LIST_BY_GROUP',
  requestHeader: GetConsumerListByGroupRequestHeader,
  responseHeader: z.object({}),
  responseBody: ConsumerListBody,
});

export const WatchConsumerIdsRequestHeader = z.object({
  consumerGroup: str().min(1),
  clientID: str().min(1),
  /** The membership version the client knows; -1 when it knows none (answered at once). */
  version: long(),
  /** How long the broker may hold the call, ms. */
  timeoutMillis: long().min(0).max(120_000),
});
export type WatchConsumerIdsRequestHeader = z.infer<typeof WatchConsumerIdsRequestHeader>;

export const WatchConsumerIdsResponseHeader = z.object({ version: long() });
export type WatchConsumerIdsResponseHeader = z.infer<typeof WatchConsumerIdsResponseHeader>;

export const WatchConsumerIds = defineCommand({
  code: RequestCode.WATCH_CONSUMER_IDS,
  name: 'WATCH_CONSUMER_IDS',
  requestHeader: WatchConsumerIdsRequestHeader,
  responseHeader: WatchConsumerIdsResponseHeader.partial(),
  responseBody: ConsumerListBody,
});
