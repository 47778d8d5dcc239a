/**
 * The message shapes of RocketMQ's transactional messages (TransactionalMessageBridge,
 * TransactionalMessageUtil, EndTransactionProcessor.endMessageTransaction):
 * - a half message is the producer's message moved to RMQ_SYS_TRANS_HALF_TOPIC queue 0 with its real
 *   topic and queue kept in REAL_TOPIC / REAL_QID and its transaction type reset to none, so the store
 *   files it in the half queue and no consumer of the real topic sees it;
 * - an op record in RMQ_SYS_TRANS_OP_HALF_TOPIC (tag `d`, body the half queue offset as decimal text)
 *   says that half message is resolved;
 * - a commit puts the half message back on its real topic and queue, typed COMMIT, without
 *   REAL_TOPIC, REAL_QID and TRAN_MSG, every other property kept.
 * @pure
 */
import { MessageSysFlag } from '../../common/codec/constants.js';
import { MessageConst, type MessageExt } from '../../common/message.js';
import type { MessageToStore } from '../../store/index.js';

/** RocketMQ: TopicValidator.RMQ_SYS_TRANS_HALF_TOPIC. */
export const TRANS_HALF_TOPIC = 'RMQ_SYS_TRANS_HALF_TOPIC';
/** RocketMQ: TopicValidator.RMQ_SYS_TRANS_OP_HALF_TOPIC. */
export const TRANS_OP_HALF_TOPIC = 'RMQ_SYS_TRANS_OP_HALF_TOPIC';
/** RocketMQ: TopicValidator.RMQ_SYS_TRANS_CHECK_MAX_TIME_TOPIC — where a half message checked too often goes. */
export const TRANS_CHECK_MAX_TIME_TOPIC = 'TRANS_CHECK_MAX_TIME_TOPIC';
/** RocketMQ: MixAll.CID_SYS_RMQ_TRANS — the group whose offsets record how far the check has come. */
export const TRANS_SYS_GROUP = 'CID_RMQ_SYS_TRANS';
/** RocketMQ: TransactionalMessageUtil.REMOVETAG. */
export const REMOVE_TAG = 'd';

const TYPE_MASK = MessageSysFlag.TRANSACTION_MASK;

/** RocketMQ: MessageSysFlag.resetTransactionValue. */
export const resetTransactionValue = (sysFlag: number, type: number): number => (sysFlag & ~TYPE_MASK) | type;

/** True when a SEND_MESSAGE's properties string marks a half message (`TRAN_MSG=true`). */
export function isTransactionPrepared(properties: Record<string, string>): boolean {
  return properties[MessageConst.TRAN_MSG] === 'true';
}

/** RocketMQ: TransactionalMessageBridge.parseHalfMessageInner — the message as the half queue keeps it. */
export function toHalfMessage(msg: MessageToStore): MessageToStore {
  const properties = {
    ...msg.properties,
    [MessageConst.REAL_TOPIC]: msg.topic,
    [MessageConst.REAL_QID]: String(msg.queueId),
  };
  return {
    ...msg,
    topic: TRANS_HALF_TOPIC,
    queueId: 0,
    properties,
    sysFlag: resetTransactionValue(msg.sysFlag, MessageSysFlag.TRANSACTION_NOT_TYPE),
  };
}

/** Where a half message belongs, or a description of what is wrong with its properties. */
export function realQueueOf(half: MessageExt): { topic: string; queueId: number } | string {
  const topic = (half.properties ?? {})[MessageConst.REAL_TOPIC];
  const qid = (half.properties ?? {})[MessageConst.REAL_QID];
  if (!topic) return 'the half message has no REAL_TOPIC';
  if (qid === undefined || !/^\d+$/.test(qid)) return `the half message has a bad REAL_QID (${String(qid)})`;
  return { topic, queueId: Number(qid) };
}

/**
 * RocketMQ: EndTransactionProcessor.endMessageTransaction plus the type and prepared offset it sets —
 * the committed message on its real topic and queue.
 */
export function toCommittedMessage(half: MessageExt, real: { topic: string; queueId: number }): MessageToStore {
  const properties = { ...(half.properties ?? {}) };
  delete properties[MessageConst.REAL_TOPIC];
  delete properties[MessageConst.REAL_QID];
  delete properties[MessageConst.TRAN_MSG];
  return {
    topic: real.topic,
    queueId: real.queueId,
    flag: half.flag,
    body: half.body ?? Buffer.alloc(0),
    properties,
    sysFlag: resetTransactionValue(half.sysFlag, MessageSysFlag.TRANSACTION_COMMIT_TYPE),
    bornTimestamp: half.bornTimestamp,
    bornHost: half.bornHost,
    reconsumeTimes: half.reconsumeTimes,
    preparedTransactionOffset: half.commitLogOffset,
  };
}

/** A copy of a half message appended again to the half queue (RocketMQ: putBackHalfMsg), with its check count. */
export function toPutBackMessage(half: MessageExt, checkTimes: number): MessageToStore {
  return {
    topic: TRANS_HALF_TOPIC,
    queueId: 0,
    flag: half.flag,
    body: half.body ?? Buffer.alloc(0),
    properties: { ...(half.properties ?? {}), [MessageConst.TRANSACTION_CHECK_TIMES]: String(checkTimes) },
    sysFlag: half.sysFlag,
    bornTimestamp: half.bornTimestamp,
    bornHost: half.bornHost,
    reconsumeTimes: half.reconsumeTimes,
    preparedTransactionOffset: half.preparedTransactionOffset,
  };
}

/** A half message given up after too many checks, as RocketMQ keeps it in TRANS_CHECK_MAX_TIME_TOPIC. */
export function toCheckMaxTimeMessage(half: MessageExt): MessageToStore {
  return { ...toPutBackMessage(half, checkTimesOf(half)), topic: TRANS_CHECK_MAX_TIME_TOPIC };
}

/** How a transaction was resolved, kept in its op record (RocketMQ's op records do not say). */
export type OpOutcome = 'commit' | 'rollback' | 'discard';
/** The op record's property naming its outcome, so a restart knows a given-up transaction may be resumed. */
export const OP_OUTCOME_PROPERTY = 'TRAN_OP_OUTCOME';

/** RocketMQ: TransactionalMessageServiceImpl's op message — resolves the half message at `halfQueueOffset`. */
export function toOpMessage(half: MessageExt, halfQueueOffset: number, outcome: OpOutcome): MessageToStore {
  return {
    topic: TRANS_OP_HALF_TOPIC,
    queueId: 0,
    flag: 0,
    body: Buffer.from(String(halfQueueOffset), 'utf8'),
    properties: { [MessageConst.TAGS]: REMOVE_TAG, [OP_OUTCOME_PROPERTY]: outcome },
    sysFlag: 0,
    bornTimestamp: half.storeTimestamp,
    bornHost: half.storeHost,
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
  };
}

/** The half queue offset an op record resolves, or undefined when its body is not one. */
export function opHalfOffset(op: MessageExt): number | undefined {
  if ((op.properties ?? {})[MessageConst.TAGS] !== REMOVE_TAG) return undefined;
  const text = Buffer.from(op.body ?? Buffer.alloc(0)).toString('utf8');
  return /^\d+$/.test(text) ? Number(text) : undefined;
}

/** The outcome an op record names, or undefined for a record written without one. */
export function opOutcome(op: MessageExt): OpOutcome | undefined {
  const v = (op.properties ?? {})[OP_OUTCOME_PROPERTY];
  return v === 'commit' || v === 'rollback' || v === 'discard' ? v : undefined;
}

/** How many times the half message was checked (its TRANSACTION_CHECK_TIMES; 0 when absent or bad). */
export function checkTimesOf(half: MessageExt): number {
  const v = (half.properties ?? {})[MessageConst.TRANSACTION_CHECK_TIMES];
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : 0;
}

/**
 * RocketMQ: TransactionalMessageServiceImpl.getImmunityTime — CHECK_IMMUNITY_TIME_IN_SECONDS in ms, never
 * below `transactionTimeOut`, which is also the answer when the property is absent or not a number.
 */
export function immunityTimeOf(half: MessageExt, transactionTimeOut: number): number {
  const v = (half.properties ?? {})[MessageConst.CHECK_IMMUNITY_TIME_IN_SECONDS];
  if (v === undefined || !/^-?\d+$/.test(v)) return transactionTimeOut;
  return Math.max(Number(v) * 1000, transactionTimeOut);
}

/** The identity of a transaction across the copies of its half message: its UNIQ_KEY, else its first id. */
export const transactionKeyOf = (half: MessageExt): string =>
  (half.properties ?? {})[MessageConst.UNIQ_KEY] ?? half.msgId;
