/**
 * The message store (RocketMQ's DefaultMessageStore): what the broker uses. Layout and recovery are
 * described in docs/storage.md.
 */
export { MessageStore } from './message-store.js';
export {
  resolveStoreOptions,
  STORE_DEFAULTS,
  type BrokerRole,
  type FlushDiskType,
  type MessageStoreOptions,
  type ResolvedStoreOptions,
} from './options.js';
export { StoreLayoutError, StoreLockedError } from './store-files.js';
export { MAX_POOLED_BYTES, acquirePullBody, releasePullBody } from './pull-body-pool.js';
export { DEFAULT_MESSAGE_DELAY_LEVEL, computeDeliverTimestamp, parseDelayLevels } from './delay-levels.js';
export {
  decideStart,
  isTheBatchFull,
  nextOffsetCorrection,
  scanConsumeQueue,
  type ScanParams,
  type ScanRequest,
  type ScanResult,
  type StartDecision,
} from './get-message-rules.js';
export type {
  BoundaryType,
  GetMessageResult,
  GetMessageStatus,
  MessageArrival,
  MessageFilter,
  MessageToStore,
  PutMessageResult,
  PutMessageStatus,
} from './types.js';
