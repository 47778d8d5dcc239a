/**
 * GET_ROUTEINFO_BY_TOPIC (105): the broker answers route queries itself, so a client needs
 * only the broker's address. Body: TopicRouteData with `brokerAddrs` mapping broker id
 * ("0" = master) to the broker's address — its HTTP base URL for this transport. TOPIC_NOT_EXIST (17)
 * when the topic is unknown. A producer then asks for the route of the default topic `TBW102`, which
 * the broker serves while auto-creation is enabled, and sends with `defaultTopic` set, as RocketMQ does.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { defineCommand, int32, str } from '../define.js';

export const GetRouteInfoRequestHeader = z.object({
  topic: str().min(1),
  /** RocketMQ 4.9.4+: ask a NameServer for standard JSON (quoted numeric `brokerAddrs` keys) whatever the client version. */
  acceptStandardJsonOnly: z.boolean().optional(),
});
export type GetRouteInfoRequestHeader = z.infer<typeof GetRouteInfoRequestHeader>;

export const QueueDataSchema = z.object({
  brokerName: str(),
  readQueueNums: int32(),
  writeQueueNums: int32(),
  perm: int32(),
  topicSysFlag: int32().default(0),
});
export type QueueData = z.infer<typeof QueueDataSchema>;

export const BrokerDataSchema = z.object({
  cluster: str(),
  brokerName: str(),
  brokerAddrs: z.record(z.string(), str()),
});
export type BrokerData = z.infer<typeof BrokerDataSchema>;

export const TopicRouteDataSchema = z.object({
  brokerDatas: z.array(BrokerDataSchema),
  queueDatas: z.array(QueueDataSchema),
});
export type TopicRouteData = z.infer<typeof TopicRouteDataSchema>;

export const GetRouteInfoByTopic = defineCommand({
  code: RequestCode.GET_ROUTEINFO_BY_TOPIC,
  name: 'GET_ROUTEINFO_BY_TOPIC',
  requestHeader: GetRouteInfoRequestHeader,
  responseHeader: z.object({}),
  responseBody: TopicRouteDataSchema,
});

/** RocketMQ's default topic used as the template for auto-created topics. */
export const AUTO_CREATE_TOPIC_KEY_TOPIC = 'TBW102';

/** PermName bits. */
export const PermName = Object.freeze({ PRIORITY: 8, READ: 4, WRITE: 2, INHERIT: 1 } as const);
export const isReadable = (perm: number): boolean => (perm & PermName.READ) !== 0;
export const isWriteable = (perm: number): boolean => (perm & PermName.WRITE) !== 0;
