/**
 * PullStatus and PullResult (RocketMQ's PullStatus, PullResult, PullResultExt).
 * @pure
 */
import type { MessageExt } from '../../common/message.js';

/** The outcome of a pull. */
export const PullStatus = Object.freeze({
  /** Messages were found (the list may still be empty after the client's tag re-check). */
  FOUND: 'FOUND',
  /** No new message at this offset (PULL_NOT_FOUND). */
  NO_NEW_MSG: 'NO_NEW_MSG',
  /** Messages were examined but none matched the filter (PULL_RETRY_IMMEDIATELY); pull again from `nextBeginOffset`. */
  NO_MATCHED_MSG: 'NO_MATCHED_MSG',
  /** The offset is out of the queue's range (PULL_OFFSET_MOVED); `nextBeginOffset` is where to go. */
  OFFSET_ILLEGAL: 'OFFSET_ILLEGAL',
} as const);
export type PullStatus = (typeof PullStatus)[keyof typeof PullStatus];

export interface PullResult {
  pullStatus: PullStatus;
  /** Where the next pull of this queue starts. */
  nextBeginOffset: number;
  /** The queue's smallest offset still stored. */
  minOffset: number;
  /** One past the queue's last offset. */
  maxOffset: number;
  /** The messages found (empty unless FOUND). */
  msgFoundList: MessageExt[];
}

/** A pull's answer before `processPullResult` (RocketMQ's PullResultExt). */
export interface PullResultExt extends PullResult {
  /** The broker to pull this queue from next time (0 = master). */
  suggestWhichBrokerId: number;
  /** The stored records' bytes of a FOUND answer, not decoded yet. */
  messageBinary: Buffer | undefined;
}
