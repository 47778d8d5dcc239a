/**
 * HEART_BEAT (34): a client tells a broker who it is, which groups it consumes or produces for, and
 * what it subscribes to (RocketMQ's HeartbeatData). No header; the body is HeartbeatData as JSON.
 * The broker registers the client (ConsumerManager), creates the subscription group and its
 * `%RETRY%` topic on first sight, and compiles SQL92 subscriptions (the ConsumerFilterManager role).
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

/** RocketMQ's SubscriptionData as it travels in a heartbeat. */
export const SubscriptionDataSchema = z.object({
  topic: str(),
  subString: str(),
  tagsSet: z.array(str()).default([]),
  codeSet: z.array(int32()).default([]),
  subVersion: long(),
  expressionType: str().default('TAG'),
  classFilterMode: z.boolean().default(false),
});
export type SubscriptionDataWire = z.infer<typeof SubscriptionDataSchema>;

export const ConsumeType = z.enum(['CONSUME_ACTIVELY', 'CONSUME_PASSIVELY', 'CONSUME_POP']);
export const MessageModelSchema = z.enum(['BROADCASTING', 'CLUSTERING']);
export const ConsumeFromWhereSchema = z.enum([
  'CONSUME_FROM_LAST_OFFSET',
  'CONSUME_FROM_FIRST_OFFSET',
  'CONSUME_FROM_TIMESTAMP',
  'CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST',
  'CONSUME_FROM_MIN_OFFSET',
  'CONSUME_FROM_MAX_OFFSET',
]);

export const ConsumerDataSchema = z.object({
  groupName: str().min(1),
  consumeType: ConsumeType,
  messageModel: MessageModelSchema,
  consumeFromWhere: ConsumeFromWhereSchema,
  subscriptionDataSet: z.array(SubscriptionDataSchema).default([]),
  unitMode: z.boolean().default(false),
});
export type ConsumerDataWire = z.infer<typeof ConsumerDataSchema>;

export const ProducerDataSchema = z.object({ groupName: str().min(1) });

export const HeartbeatDataSchema = z.object({
  clientID: str().min(1),
  consumerDataSet: z.array(ConsumerDataSchema).default([]),
  producerDataSet: z.array(ProducerDataSchema).default([]),
  heartbeatFingerprint: int32().optional(),
  withoutSub: z.boolean().optional(),
});
export type HeartbeatData = z.infer<typeof HeartbeatDataSchema>;

export const HeartBeat = defineCommand({
  code: RequestCode.HEART_BEAT,
  name: 'HEART_BEAT',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: HeartbeatDataSchema,
});
