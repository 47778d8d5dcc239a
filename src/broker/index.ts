/**
 * `rocketmq-ts/broker`: the reference broker. `Broker.start({ storePath, host, port, ... })` resolves to
 * a running broker whose `address` is its HTTP base URL; `shutdown()` stops it. The wire is described in
 * docs/protocol.md; the CLI is `rocketmq-ts broker --store DIR --port N`.
 * @module rocketmq-ts/broker
 */
export { Broker } from './broker.js';
export {
  BROKER_DEFAULTS,
  resolveBrokerOptions,
  type BrokerOptions,
  type BrokerStoreOptions,
  type ResolvedBrokerOptions,
} from './broker-options.js';
export type { TopicConfig } from './broker-context.js';
export type { BrokerTlsOptions, TlsMode } from './broker-tls.js';
export type { MessageStoreOptions, FlushDiskType, BrokerRole } from '../store/index.js';
export type { Clock, TimerHandle } from '../common/clock.js';
export type { Logger } from '../common/logger.js';
export { StoreLockedError } from '../store/store-files.js';
