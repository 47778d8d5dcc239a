/**
 * Consumer-group administration, as RocketMQ's `mqadmin` asks it of a broker. Bodies are fastjson
 * (keys sorted, nulls left out, a MessageQueue map key written as a JSON object; see fastjson.ts).
 *
 * - GET_CONSUME_STATS (208): `consumerGroup`, optional `topic` (absent: every topic the group has
 *   committed offsets on). Body ConsumeStats:
 *   `{"consumeTps":d,"offsetTable":{<MessageQueue>:{"brokerOffset":n,"consumerOffset":n,"lastTimestamp":ms}}}`.
 *   `brokerOffset` is the queue's max offset, `consumerOffset` the committed offset read from the
 *   broker's table in memory (0 when none), `lastTimestamp` the store time of the last consumed message
 *   (0 when none); `consumeTps` is the group's committed messages per second over the last minute.
 *   TOPIC_NOT_EXIST (17) when a named topic is unknown.
 * - GET_CONSUMER_CONNECTION_LIST (203): `consumerGroup`. Body ConsumerConnection:
 *   `{"connectionSet":[{"clientAddr","clientId","language","version"}],"consumeFromWhere","consumeType",
 *   "messageModel","subscriptionTable":{"<topic>":SubscriptionData}}`; CONSUMER_NOT_ONLINE (206)
 *   `the consumer group[<g>] not online` when the group has no live member.
 * - INVOKE_BROKER_TO_RESET_OFFSET (222): `topic`, `group`, `timestamp` (ms; -1 = the queue's end),
 *   `isForce`. Per queue the offset of the first message stored at or after `timestamp`; without
 *   `isForce` an offset is only moved back, never forward. The broker commits the new offsets and
 *   tells each member on its next pull of the queue (PULL_OFFSET_MOVED with the new offset), so it
 *   works whether the group is online or not. Body ResetOffsetBody `{"offsetTable":{<MessageQueue>:n}}`.
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, long, str } from '../define.js';

export const GetConsumeStatsRequestHeader = z.object({ consumerGroup: str().min(1), topic: str().optional() });
export type GetConsumeStatsRequestHeader = z.infer<typeof GetConsumeStatsRequestHeader>;

/**
 * RocketMQ's OffsetWrapper. `pullOffset` is RocketMQ 5's: the next offset the broker handed the group, from
 * which 5.x's mqadmin consumerProgress prints what is in flight (pulled, not yet committed).
 */
export const OffsetWrapperSchema = z.object({
  brokerOffset: long(),
  consumerOffset: long(),
  pullOffset: long().optional(),
  lastTimestamp: long(),
});
export type OffsetWrapper = z.infer<typeof OffsetWrapperSchema>;

export const GetConsumeStats = defineCommand({
  code: RequestCode.GET_CONSUME_STATS,
  name: 'GET_CONSUME_STATS',
  requestHeader: GetConsumeStatsRequestHeader,
  responseHeader: EmptyHeader,
});

export const GetConsumerConnectionListRequestHeader = z.object({ consumerGroup: str().min(1) });
export type GetConsumerConnectionListRequestHeader = z.infer<typeof GetConsumerConnectionListRequestHeader>;

/** RocketMQ's Connection: one member of a group. */
export const ConnectionSchema = z.object({
  clientId: str(),
  clientAddr: str(),
  // A RocketMQ broker leaves it out for a language it does not know (fastjson drops the null enum).
  language: str().default('OTHER'),
  version: z.number(),
});
export type Connection = z.infer<typeof ConnectionSchema>;

export const ConsumerSubscriptionSchema = z.object({
  topic: str(),
  subString: str(),
  tagsSet: z.array(str()).default([]),
  codeSet: z.array(z.number()).default([]),
  subVersion: z.number(),
  expressionType: str().default('TAG'),
  classFilterMode: z.boolean().default(false),
});

export const ConsumerConnectionBody = z.object({
  connectionSet: z.array(ConnectionSchema),
  subscriptionTable: z.record(z.string(), ConsumerSubscriptionSchema),
  consumeType: str().optional(),
  messageModel: str().optional(),
  consumeFromWhere: str().optional(),
});
export type ConsumerConnectionBody = z.infer<typeof ConsumerConnectionBody>;

export const GetConsumerConnectionList = defineCommand({
  code: RequestCode.GET_CONSUMER_CONNECTION_LIST,
  name: 'GET_CONSUMER_CONNECTION_LIST',
  requestHeader: GetConsumerConnectionListRequestHeader,
  responseHeader: EmptyHeader,
  responseBody: ConsumerConnectionBody,
});

export const ResetOffsetRequestHeader = z.object({
  topic: str().min(1),
  group: str().min(1),
  timestamp: long(),
  isForce: z.boolean().default(false),
});
export type ResetOffsetRequestHeader = z.infer<typeof ResetOffsetRequestHeader>;

export const InvokeBrokerToResetOffset = defineCommand({
  code: RequestCode.INVOKE_BROKER_TO_RESET_OFFSET,
  name: 'INVOKE_BROKER_TO_RESET_OFFSET',
  requestHeader: ResetOffsetRequestHeader,
  responseHeader: EmptyHeader,
});
