/**
 * rocketmq-ts: the client API. The broker, the filter and the codec are separate entry points
 * (`rocketmq-ts/broker`, `rocketmq-ts/filter`, `rocketmq-ts/codec`).
 * @module rocketmq-ts
 */
export type { Message, MessageExt, MessageQueue, HostAddress } from './common/message.js';
export { MessageConst } from './common/message.js';
export {
  RocketMQError,
  InvalidArgumentError,
  DecodeError,
  TransportError,
  StateError,
  StartTimeoutError,
  AclAccessDeniedError,
  CredentialsError,
  type AclRefusalDetails,
  type RocketMQErrorOptions,
  type TransportErrorOptions,
} from './common/errors.js';
export type { Logger } from './common/logger.js';

// ---- the clients, room by room (each room's index lists what it offers) ----
export * from './client/instance/index.js';
export * from './client/producer/index.js';
export * from './client/consumer/index.js';
export * from './client/consumer/push/index.js';
export * from './client/consumer/lite/index.js';
export * from './client/consumer/pull/index.js';
export * from './client/consumer/simple/index.js';
export * from './client/admin/index.js';
export * from './client/trace/index.js';

// ---- shared pieces the clients' API names ----
export type { Clock, TimerHandle } from './common/clock.js';
export { AbortError, RequestRejectedError, ClosedError } from './remoting/remoting-errors.js';
export type { AclCredentials, CredentialsSource } from './remoting/acl-credentials.js';
export { TlsError, type TlsOptions } from './remoting/tls-options.js';
export { BrokerResponseError } from './protocol/response-error.js';
export { consoleLogger, defaultLogger } from './common/env-logger.js';
