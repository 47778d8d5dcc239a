/**
 * AdminClient (RocketMQ: `tools.admin`, DefaultMQAdminExt): topic, consumer-group and message
 * commands for operators and the CLI. It never joins a group.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export {
  AdminClient,
  DEFAULT_ADMIN_CLIENT_OPTIONS,
  type AdminClientOptions,
  type ConsumerConnection,
  type ConsumerConnectionInfo,
  type ConsumerProgress,
  type ConsumerQueueProgress,
  type CreateTopicOptions,
  type QueryByKeyOptions,
  type ResetOffsetResult,
  type TopicQueueStatus,
} from './admin-client.js';
export type { MsgTraceView, QueryMsgTraceOptions } from './admin-trace.js';
