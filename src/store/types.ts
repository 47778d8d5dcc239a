/**
 * The message store's public types: what the broker hands in (MessageToStore), what it gets back
 * (PutMessageResult, GetMessageResult), the two-stage filter it passes to getMessage, and the arrival
 * announcement the dispatch makes. Names follow RocketMQ (GetMessageStatus, PutMessageStatus, ...).
 * @pure
 */
import type { HostAddress } from '../common/message.js';

/**
 * A consumer's filter, structurally (src/filter implements it; the store does not import it).
 * RocketMQ: MessageFilter — first the consume-queue stage (tags code), then the commit-log stage.
 */
export interface MessageFilter {
  /** `tagsCode` is `null` when the consume queue holds no usable tags code (RocketMQ: CQ-ext address). */
  isMatchedByConsumeQueue(tagsCode: number | null): boolean;
  /** `record` is the stored record's bytes; `properties` is given when already decoded (else null). */
  isMatchedByCommitLog(record: Buffer | null, properties: Record<string, string> | null): boolean;
}

/** RocketMQ: GetMessageStatus (GetMessageStatus.java). */
export type GetMessageStatus =
  | 'FOUND'
  | 'NO_MATCHED_MESSAGE'
  | 'MESSAGE_WAS_REMOVING'
  | 'OFFSET_FOUND_NULL'
  | 'OFFSET_OVERFLOW_BADLY'
  | 'OFFSET_OVERFLOW_ONE'
  | 'OFFSET_TOO_SMALL'
  | 'NO_MATCHED_LOGIC_QUEUE'
  | 'NO_MESSAGE_IN_QUEUE'
  | 'OFFSET_RESET';

export interface GetMessageResult {
  status: GetMessageStatus;
  /** Where the next pull of this queue should start. */
  nextBeginOffset: number;
  minOffset: number;
  maxOffset: number;
  /** Each found record's exact stored bytes, in queue order. */
  messages: Buffer[];
  /**
   * All of `messages` back to back (each entry of `messages` is a slice of it): the pull body, ready to
   * send without another copy. Empty when nothing was found.
   */
  messagesBuffer?: Buffer;
  /** The queue offset of each entry of `messages`. */
  queueOffsets: number[];
  bufferTotalSize: number;
  messageCount: number;
  /** RocketMQ's hint that the reader is far behind the head (more than the in-memory share of RAM). */
  suggestPullingFromSlave: boolean;
  /** Records dropped by the commit-log stage of the filter. */
  filterMessageCount: number;
}

/** What the broker hands the store (RocketMQ's MessageExtBrokerInner). */
export interface MessageToStore {
  topic: string;
  queueId: number;
  flag: number;
  /** The body as stored: already compressed when `sysFlag` says so. */
  body: Buffer;
  properties: Record<string, string>;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: HostAddress;
  /** Defaults to the store's `storeHost` option. */
  storeHost?: HostAddress;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
}

/** RocketMQ: PutMessageStatus, the values this store produces. */
export type PutMessageStatus =
  | 'PUT_OK'
  | 'FLUSH_DISK_TIMEOUT'
  | 'SERVICE_NOT_AVAILABLE'
  | 'MESSAGE_ILLEGAL'
  | 'PROPERTIES_SIZE_EXCEEDED'
  | 'OS_PAGE_CACHE_BUSY'
  | 'UNKNOWN_ERROR';

export interface PutMessageResult {
  status: PutMessageStatus;
  /** Commit-log offset of the record (RocketMQ: wroteOffset). */
  physicalOffset: number;
  /** Queue offset assigned to the record (0 for PREPARED/ROLLBACK transaction records). */
  queueOffset: number;
  storeTimestamp: number;
  /** The offset message id (store host + commit-log offset). */
  msgId: string;
  /** Bytes the record takes in the commit log. */
  wroteBytes: number;
  /** Why the store refused the message, when `status` is not PUT_OK / FLUSH_DISK_TIMEOUT. */
  remark?: string;
}

/** Announced right after a record is dispatched to its consume queue (RocketMQ: MessageArrivingListener). */
export interface MessageArrival {
  topic: string;
  queueId: number;
  queueOffset: number;
  /** The queue's new max offset (= queueOffset + 1). */
  maxOffset: number;
  tagsCode: number;
  storeTimestamp: number;
  properties: Record<string, string> | null;
}

/** SEARCH_OFFSET_BY_TIMESTAMP boundary (RocketMQ: BoundaryType). */
export type BoundaryType = 'LOWER' | 'UPPER';
