/**
 * rocketmq-ts: the client API. The broker, the filter and the codec are separate entry points
 * (`rocketmq-ts/broker`, `rocketmq-ts/filter`, `rocketmq-ts/codec`).
 * @packageDocumentation
 */
export type { Message, MessageExt, MessageQueue, HostAddress } from './common/message.js';
export { MessageConst } from './common/message.js';
export {
  RocketMQError,
  InvalidArgumentError,
  DecodeError,
  TransportError,
  StateError,
  type RocketMQErrorOptions,
} from './common/errors.js';
export type { Logger } from './common/logger.js';
