/**
 * `rocketmq-ts/remoting`: RocketMQ's remoting command codec — the TCP frame, its JSON and binary
 * (ROCKETMQ) headers — byte-compatible with Apache RocketMQ's `RemotingCommand`, and an incremental
 * frame reader for socket data.
 * @pure
 * @module rocketmq-ts/remoting
 */
export {
  LanguageCode,
  ONEWAY_FLAG,
  RESPONSE_FLAG,
  decodeRemotingCommand,
  encodeRemotingCommand,
  frameSerializeType,
  isOneway,
  isResponse,
  languageName,
  markOneway,
  markResponse,
  type EncodeOptions,
  type ExtFields,
  type LanguageName,
  type RemotingCommand,
  type RemotingCommandInput,
  type SerializeType,
} from './remoting-command.js';
export { RemotingDecodeError, RemotingFrameTooLargeError } from './remoting-decode-error.js';
export { DEFAULT_MAX_FRAME_LENGTH, FrameReader, type FrameReaderOptions } from './frame-reader.js';
export {
  ACL_ACCESS_KEY,
  ACL_SECURITY_TOKEN,
  ACL_SIGNATURE,
  aclSignature,
  aclSignedContent,
  signExtFields,
  type AclCredentials,
} from './acl-signature.js';
