/**
 * Every command this project serves, by request code: the table both the broker's dispatcher and the
 * client's transport validate against.
 * @pure
 */
import type { CommandSpec } from '../define.js';
import { UpdateAndCreateSubscriptionGroup, UpdateAndCreateTopic, ViewMessageById } from './admin.js';
import { GetConsumerListByGroup, WatchConsumerIds } from './consumer-list.js';
import { QueryConsumerOffset, UpdateConsumerOffset } from './consumer-offset.js';
import { ConsumerSendMsgBack } from './consumer-send-msg-back.js';
import { HeartBeat } from './heart-beat.js';
import { LitePullMessage, PullMessage } from './pull-message.js';
import { LockBatchMq, UnlockBatchMq } from './lock-batch-mq.js';
import { GetMaxOffset, GetMinOffset, SearchOffsetByTimestamp } from './queue-offsets.js';
import { GetRouteInfoByTopic } from './route.js';
import { SendBatchMessage, SendMessage } from './send-message.js';
import { UnregisterClient } from './unregister-client.js';
import {
  DeleteTopicInBroker,
  DeleteTopicInNamesrv,
  GetAllTopicConfig,
  GetAllTopicListFromNameserver,
  GetTopicConfig,
  GetTopicStatsInfo,
} from './topic-admin.js';
import { GetConsumeStats, GetConsumerConnectionList, InvokeBrokerToResetOffset } from './consumer-admin.js';
import { QueryMessage } from './query-message.js';
import { CheckClientConfig } from './check-client-config.js';
import { BROKER_OPS_COMMANDS } from './broker-ops.js';
import {
  AckMessage,
  BatchAckMessage,
  ChangeInvisibleTime,
  PopMessage,
  QueryAssignment,
  SetMessageRequestMode,
} from './pop-message.js';
import { EndTransaction } from './end-transaction.js';
import { OPS_PARITY_COMMANDS } from './ops-parity.js';
import { ACL_CONFIG_COMMANDS } from './acl-config.js';

export * from './admin.js';
export * from './consumer-list.js';
export * from './consumer-offset.js';
export * from './consumer-send-msg-back.js';
export * from './heart-beat.js';
export * from './lock-batch-mq.js';
export * from './pull-message.js';
export * from './queue-offsets.js';
export * from './route.js';
export * from './send-message.js';
export * from './unregister-client.js';
export * from './topic-admin.js';
export * from './consumer-admin.js';
export * from './query-message.js';
export * from './check-client-config.js';
export * from './broker-ops.js';
export * from './pop-message.js';
export * from './pop-extra-info.js';
export * from './end-transaction.js';
export * from './ops-parity.js';
export * from './acl-config.js';

const ALL: CommandSpec[] = [
  PullMessage,
  LitePullMessage,
  QueryConsumerOffset,
  UpdateConsumerOffset,
  GetMinOffset,
  GetMaxOffset,
  SearchOffsetByTimestamp,
  SendMessage,
  SendBatchMessage,
  ConsumerSendMsgBack,
  HeartBeat,
  UnregisterClient,
  GetConsumerListByGroup,
  WatchConsumerIds,
  GetRouteInfoByTopic,
  UpdateAndCreateTopic,
  UpdateAndCreateSubscriptionGroup,
  ViewMessageById,
  LockBatchMq,
  UnlockBatchMq,
  // admin (mqadmin)
  GetAllTopicConfig,
  GetAllTopicListFromNameserver,
  DeleteTopicInBroker,
  DeleteTopicInNamesrv,
  GetTopicStatsInfo,
  GetTopicConfig,
  GetConsumeStats,
  GetConsumerConnectionList,
  InvokeBrokerToResetOffset,
  QueryMessage,
  CheckClientConfig,
  ...BROKER_OPS_COMMANDS,
  // POP consumption (RocketMQ 5)
  PopMessage,
  AckMessage,
  BatchAckMessage,
  ChangeInvisibleTime,
  QueryAssignment,
  SetMessageRequestMode,
  EndTransaction,
  ...OPS_PARITY_COMMANDS,
  ...ACL_CONFIG_COMMANDS,
];

export const COMMANDS: ReadonlyMap<number, CommandSpec> = new Map(ALL.map((c) => [c.code, c]));
export const COMMANDS_BY_NAME: ReadonlyMap<string, CommandSpec> = new Map(ALL.map((c) => [c.name, c]));
