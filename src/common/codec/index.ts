/**
 * `rocketmq-ts/codec`: RocketMQ's stored-message format (the commit-log record, which is also the
 * pull-response body), message ids, properties strings, the producer batch body and Java string rules.
 * The byte table is in constants.ts. Compressed bodies (zlib, LZ4 and Zstandard) are decoded;
 * encoding compresses with zlib or LZ4 only.
 * @module rocketmq-ts/codec
 */
export type { HostAddress, MessageExt } from '../message.js';
export { DecodeError, InvalidArgumentError } from '../errors.js';
export {
  BLANK_MAGIC_CODE,
  BLANK_RECORD_LENGTH,
  CompressionType,
  DEFAULT_MAX_DECOMPRESSED_BYTES,
  MAGIC_CODE_V1,
  MAGIC_CODE_V2,
  MAX_PROPERTIES_BYTES,
  MAX_TOPIC_BYTES_V1,
  MAX_TOPIC_BYTES_V2,
  MIN_RECORD_LENGTH,
  MessageSysFlag,
  NAME_VALUE_SEPARATOR,
  PROPERTY_SEPARATOR,
  bodySizePosition,
  compressionTypeOf,
  storeTimestampPosition,
  storedRecordLength,
} from './constants.js';
export {
  bodyCrc32,
  encodeMessage,
  encodeStoredMessage,
  setStoredRecordFields,
  writeBlankRecord,
  type EncodableMessage,
  type EncodeOptions,
  type StoredMessageInput,
} from './encode.js';
export { checkRecordHeader, decodeMessage, decodeMessages, type DecodeOptions } from './decode.js';
export {
  checkRecord,
  decodeProperties,
  newLayout,
  peekRecordFields,
  type CheckRecordOptions,
  type RecordCheck,
  type RecordFields,
  type RecordLayout,
} from './record-scan.js';
export { createMessageId, decodeMessageId } from './message-id.js';
export { messageProperties2String, string2messageProperties, type PropertiesInput } from './properties.js';
export {
  createUniqId,
  getIPFromUniqId,
  getIPStrFromUniqId,
  getNearlyTimeFromUniqId,
  getPidFromUniqId,
} from './uniq-id.js';
export {
  decodeBatchBody,
  BATCH_ELEMENT_OVERHEAD,
  encodeBatchBody,
  encodeBatchBodyMessage,
  type BatchBodyMessage,
  type DecodedBatchMessage,
} from './batch.js';
export {
  hasUnpairedSurrogate,
  javaStringHashCode,
  javaUtf8Encode,
  javaUtf8Length,
  javaUtf8RoundTrip,
  tagsHashCode,
} from './java-string.js';
