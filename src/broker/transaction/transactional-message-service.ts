/**
 * RocketMQ's TransactionalMessageServiceImpl and TransactionalMessageCheckService: half messages, the
 * producer's decision (END_TRANSACTION) and the check-back of half messages left undecided.
 *
 * The storage is RocketMQ's: half messages in RMQ_SYS_TRANS_HALF_TOPIC, op records in
 * RMQ_SYS_TRANS_OP_HALF_TOPIC, a checked half message appended again with TRANSACTION_CHECK_TIMES one
 * higher (so the count survives a restart), the progress of both queues kept as offsets of the group
 * CID_RMQ_SYS_TRANS. What is pending and what is resolved is held in memory and rebuilt from those
 * queues at start.
 *
 * One rule beyond RocketMQ: a transaction is known by its message's UNIQ_KEY across every copy of its
 * half message, and it is resolved once. RocketMQ resolves by offset, so a late decision on an older copy
 * and an answer to a check on the newer one could both commit; here the second is refused with a remark
 * naming the transaction, and the op record always names the newest copy, which the restart scan sees.
 * A commit stores the real message and its op record in one append, so no crash between them leaves a
 * committed message whose half is checked again.
 */
import { MessageSysFlag, decodeMessage, encodeMessage } from '../../common/codec/index.js';
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { MessageConst, type MessageExt } from '../../common/message.js';
import { PermName, RequestCode, ResponseCode, type RemotingResponse } from '../../protocol/index.js';
import type { EndTransactionRequestHeader } from '../../protocol/commands/end-transaction.js';
import type { MessageStore, MessageToStore, PutMessageResult } from '../../store/index.js';
import {
  TRANS_CHECK_MAX_TIME_TOPIC,
  TRANS_HALF_TOPIC,
  TRANS_OP_HALF_TOPIC,
  TRANS_SYS_GROUP,
  checkTimesOf,
  immunityTimeOf,
  opHalfOffset,
  opOutcome,
  type OpOutcome,
  realQueueOf,
  toCheckMaxTimeMessage,
  toCommittedMessage,
  toHalfMessage,
  toOpMessage,
  toPutBackMessage,
  transactionKeyOf,
} from './transactional-message-util.js';

/** Messages read from a queue at once while scanning. */
const SCAN_BATCH = 32;
const RW = PermName.READ | PermName.WRITE;
const PUT_STORED = new Set(['PUT_OK', 'FLUSH_DISK_TIMEOUT']);

export interface TransactionalMessageServiceOptions {
  store: Pick<
    MessageStore,
    'getMessage' | 'putMessage' | 'putMessages' | 'lookMessageByOffset' | 'getMaxOffsetInQueue' | 'getMinOffsetInQueue'
  >;
  topicConfigManager: { createTopicIfAbsent(topic: string, queueNums: number, perm: number): unknown };
  /** Keeps the progress of the half and op queues (the broker's ConsumerOffsetManager). */
  consumerOffsetManager: {
    commitOffset(clientHost: string, group: string, topic: string, queueId: number, offset: number): void;
    /** -1 when none. */
    queryOffset(group: string, topic: string, queueId: number): number;
  };
  /** The broker's delay transform, applied to a committed message as to any other put. */
  transformDelayedMessage(msg: MessageToStore): MessageToStore;
  /**
   * Sends CHECK_TRANSACTION_STATE (oneway) to a live member of `group`; false when the group has no
   * member this broker can reach.
   */
  sendCheck(group: string, header: Record<string, string>, body: Buffer): boolean;
  /** RocketMQ: transactionTimeOut, ms. */
  transactionTimeOut: number;
  /** RocketMQ: transactionCheckMax. */
  transactionCheckMax: number;
  /** RocketMQ: transactionCheckInterval, ms. */
  transactionCheckInterval: number;
  clock: Clock;
  logger: Logger;
}

/** A transaction not decided yet: the newest copy of its half message. */
interface PendingHalf {
  key: string;
  queueOffset: number;
  commitLogOffset: number;
  producerGroup: string;
  bornTimestamp: number;
  checkTimes: number;
  immunityMs: number;
}

type Outcome = 'committed' | 'rolled back' | 'discarded after too many checks' | 'committed or rolled back';

const systemError = (remark: string): RemotingResponse => ({ code: ResponseCode.SYSTEM_ERROR, header: {}, remark });

export class TransactionalMessageService {
  readonly #o: TransactionalMessageServiceOptions;
  /** Undecided transactions by key. */
  readonly #pending = new Map<string, PendingHalf>();
  /** Decided transactions still at or past the half progress: key → newest half offset and outcome. */
  readonly #resolved = new Map<string, { queueOffset: number; outcome: Outcome }>();
  /** Op records at or past the op progress, in order. */
  #ops: { opOffset: number; halfOffset: number }[] = [];
  /** Decisions and checks run one at a time, so a transaction is never decided twice. */
  #tail: Promise<unknown> = Promise.resolve();
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;
  #stopped = false;

  constructor(options: TransactionalMessageServiceOptions) {
    this.#o = options;
  }

  /** Half messages not decided yet (for tests and tools). */
  get pendingCount(): number {
    return this.#pending.size;
  }

  /** Creates the system topics, rebuilds the state from the half and op queues, starts the checks. */
  async start(): Promise<void> {
    const tcm = this.#o.topicConfigManager;
    tcm.createTopicIfAbsent(TRANS_HALF_TOPIC, 1, RW);
    tcm.createTopicIfAbsent(TRANS_OP_HALF_TOPIC, 1, RW);
    await this.#load();
    this.#timer = setInterval(() => void this.check(), this.#o.transactionCheckInterval);
    this.#timer.unref();
  }

  async shutdown(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearInterval(this.#timer);
    await this.#round;
    await this.#tail;
    this.#persistProgress();
  }

  /** RocketMQ: prepareMessage — stores the half message; the producer's send result names it. */
  async prepareMessage(msg: MessageToStore): Promise<PutMessageResult> {
    const half = toHalfMessage(msg);
    const r = await this.#o.store.putMessage(half);
    if (PUT_STORED.has(r.status)) {
      const key = half.properties[MessageConst.UNIQ_KEY] ?? r.msgId;
      this.#pending.set(key, {
        key,
        queueOffset: r.queueOffset,
        commitLogOffset: r.physicalOffset,
        producerGroup: half.properties[MessageConst.PGROUP] ?? '',
        bornTimestamp: half.bornTimestamp,
        checkTimes: 0,
        immunityMs: immunityTimeOf({ properties: half.properties } as MessageExt, this.#o.transactionTimeOut),
      });
    }
    return r;
  }

  /** RocketMQ: EndTransactionProcessor — commits or rolls back the half message the header names. */
  endTransaction(h: EndTransactionRequestHeader): Promise<RemotingResponse> {
    const type = h.commitOrRollback;
    const log = { producerGroup: h.producerGroup, msgId: h.msgId, fromCheck: h.fromTransactionCheck === true };
    if (type === MessageSysFlag.TRANSACTION_NOT_TYPE) {
      // RocketMQ: an undecided answer leaves the half message for the next check.
      this.#o.logger.warn(log, 'the producer has not decided the transaction yet');
      return Promise.resolve({ code: ResponseCode.SUCCESS, header: {} });
    }
    if (type !== MessageSysFlag.TRANSACTION_COMMIT_TYPE && type !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) {
      return Promise.resolve(
        systemError(`commitOrRollback ${type} is none of commit (8), rollback (12) or not decided (0)`),
      );
    }
    return this.#serial(() => this.#end(h, type === MessageSysFlag.TRANSACTION_COMMIT_TYPE));
  }

  async #end(h: EndTransactionRequestHeader, commit: boolean): Promise<RemotingResponse> {
    const half = await this.#o.store.lookMessageByOffset(h.commitLogOffset).catch(() => null);
    if (!half) return systemError('Find prepared transaction message failed');
    if (half.topic !== TRANS_HALF_TOPIC) {
      return systemError(
        `The commit log offset ${h.commitLogOffset} holds a message of topic ${half.topic}, not a half message`,
      );
    }
    // RocketMQ: checkPrepareMessage, with its remarks.
    if ((half.properties ?? {})[MessageConst.PGROUP] !== h.producerGroup)
      return systemError('The producer group wrong');
    if (half.queueOffset !== h.tranStateTableOffset) return systemError('The transaction state table offset wrong');
    if (half.commitLogOffset !== h.commitLogOffset) return systemError('The commit log offset wrong');
    const key = transactionKeyOf(half);
    const pending = this.#pending.get(key);
    if (!pending) {
      const outcome = this.#resolved.get(key)?.outcome ?? 'committed or rolled back';
      return systemError(`The transaction of message ${key} was already ${outcome}`);
    }
    const op = toOpMessage(half, pending.queueOffset, commit ? 'commit' : 'rollback');
    let records: MessageToStore[] = [op];
    if (commit) {
      const real = realQueueOf(half);
      if (typeof real === 'string') return systemError(real);
      records = [this.#o.transformDelayedMessage(toCommittedMessage(half, real)), op];
    }
    const results = await this.#o.store.putMessages(records);
    const failed = results.find((r) => !PUT_STORED.has(r.status));
    if (failed) {
      this.#o.logger.warn({ status: failed.status, remark: failed.remark, key }, 'end transaction: put failed');
      const code =
        failed.status === 'SERVICE_NOT_AVAILABLE' ? ResponseCode.SERVICE_NOT_AVAILABLE : ResponseCode.SYSTEM_ERROR;
      return { code, header: {}, remark: `${failed.status} ${failed.remark ?? ''}`.trim() };
    }
    const opResult = results.at(-1) as PutMessageResult;
    this.#resolve(pending, commit ? 'committed' : 'rolled back', opResult.queueOffset);
    const timedOut = results.some((r) => r.status === 'FLUSH_DISK_TIMEOUT');
    return timedOut
      ? { code: ResponseCode.FLUSH_DISK_TIMEOUT, header: {}, remark: 'FLUSH_DISK_TIMEOUT' }
      : { code: ResponseCode.SUCCESS, header: {} };
  }

  /**
   * RocketMQ: AdminBrokerProcessor.resumeCheckHalfMessage — `msg` (a half message, or its copy given up to
   * TRANS_CHECK_MAX_TIME_TOPIC) is appended to the half queue again with its check count at 0, and its
   * transaction is checked again from the next round. A transaction known to be committed or rolled back is
   * refused, so a resumed check can never deliver it twice.
   */
  resumeCheck(msg: MessageExt): Promise<RemotingResponse> {
    if (msg.topic !== TRANS_HALF_TOPIC && msg.topic !== TRANS_CHECK_MAX_TIME_TOPIC) {
      return Promise.resolve(systemError(`the message is in topic ${msg.topic}, not a half message`));
    }
    return this.#serial(async () => {
      const key = transactionKeyOf(msg);
      const resolved = this.#resolved.get(key);
      const decided = resolved && resolved.outcome !== 'discarded after too many checks';
      // A half copy neither pending nor resolved lies before the progress: decided long ago.
      if (decided || (msg.topic === TRANS_HALF_TOPIC && !this.#pending.has(key))) {
        return systemError(
          `the transaction of message ${key} was already ${resolved?.outcome ?? 'committed or rolled back'}`,
        );
      }
      const r = await this.#o.store.putMessage(toPutBackMessage(msg, 0));
      if (!PUT_STORED.has(r.status)) return systemError(`${r.status} ${r.remark ?? ''}`.trim());
      this.#resolved.delete(key);
      this.#pending.set(key, {
        key,
        queueOffset: r.queueOffset,
        commitLogOffset: r.physicalOffset,
        producerGroup: (msg.properties ?? {})[MessageConst.PGROUP] ?? '',
        bornTimestamp: msg.bornTimestamp,
        checkTimes: 0,
        immunityMs: immunityTimeOf(msg, this.#o.transactionTimeOut),
      });
      this.#o.logger.info({ key, queueOffset: r.queueOffset }, 'half message put back for its check to resume');
      return { code: ResponseCode.SUCCESS, header: {} };
    });
  }

  #resolve(p: PendingHalf, outcome: Outcome, opOffset: number): void {
    this.#pending.delete(p.key);
    this.#resolved.set(p.key, { queueOffset: p.queueOffset, outcome });
    this.#ops.push({ opOffset, halfOffset: p.queueOffset });
  }

  #serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.#tail.then(fn, fn);
    this.#tail = run.catch(() => undefined);
    return run;
  }

  /**
   * One round of TransactionalMessageCheckService: every half message older than its immunity time is
   * appended again with one more check and its producer group asked; one checked `transactionCheckMax`
   * times is moved to TRANS_CHECK_MAX_TIME_TOPIC and resolved. Resolves when the round is done.
   */
  check(): Promise<void> {
    this.#round ??= this.#checkRound().finally(() => {
      this.#round = undefined;
    });
    return this.#round;
  }

  async #checkRound(): Promise<void> {
    const due = [...this.#pending.values()].sort((a, b) => a.queueOffset - b.queueOffset);
    for (const p of due) {
      if (this.#stopped) return;
      await this.#serial(() => this.#checkOne(p)).catch((err: unknown) =>
        this.#o.logger.warn({ err, key: p.key }, 'transaction check failed'),
      );
    }
    this.#persistProgress();
  }

  async #checkOne(p: PendingHalf): Promise<void> {
    if (this.#pending.get(p.key) !== p) return;
    const age = this.#o.clock.now() - p.bornTimestamp;
    // RocketMQ checks a half message born "in the future" (a clock step) at once.
    if (age >= 0 && age < p.immunityMs) return;
    const store = this.#o.store;
    const half = await store.lookMessageByOffset(p.commitLogOffset);
    if (!half) {
      this.#o.logger.warn({ key: p.key, commitLogOffset: p.commitLogOffset }, 'half message no longer stored');
      this.#pending.delete(p.key);
      return;
    }
    if (p.checkTimes >= this.#o.transactionCheckMax) {
      this.#o.topicConfigManager.createTopicIfAbsent(TRANS_CHECK_MAX_TIME_TOPIC, 1, RW);
      const results = await store.putMessages([
        toCheckMaxTimeMessage(half),
        toOpMessage(half, p.queueOffset, 'discard'),
      ]);
      if (results.some((r) => !PUT_STORED.has(r.status))) return;
      this.#o.logger.error(
        { key: p.key, producerGroup: p.producerGroup, checkTimes: p.checkTimes },
        `the half message has been checked too many times, so it is discarded to ${TRANS_CHECK_MAX_TIME_TOPIC}`,
      );
      this.#resolve(p, 'discarded after too many checks', (results[1] as PutMessageResult).queueOffset);
      return;
    }
    const r = await store.putMessage(toPutBackMessage(half, p.checkTimes + 1));
    if (!PUT_STORED.has(r.status)) {
      this.#o.logger.warn({ key: p.key, status: r.status }, 'putting back the half message failed');
      return;
    }
    const next: PendingHalf = {
      ...p,
      queueOffset: r.queueOffset,
      commitLogOffset: r.physicalOffset,
      checkTimes: p.checkTimes + 1,
    };
    this.#pending.set(p.key, next);
    this.#sendCheck(half, next, r);
  }

  /** RocketMQ: AbstractTransactionalMessageCheckListener.sendCheckMessage. */
  #sendCheck(half: MessageExt, p: PendingHalf, r: PutMessageResult): void {
    const real = realQueueOf(half);
    const props = { ...(half.properties ?? {}), [MessageConst.TRANSACTION_CHECK_TIMES]: String(p.checkTimes) };
    const body = encodeMessage({
      ...half,
      topic: typeof real === 'string' ? half.topic : real.topic,
      queueId: typeof real === 'string' ? half.queueId : real.queueId,
      queueOffset: r.queueOffset,
      commitLogOffset: r.physicalOffset,
      storeTimestamp: r.storeTimestamp,
      properties: props,
      storeSize: 0,
    });
    const header: Record<string, string> = {
      tranStateTableOffset: String(r.queueOffset),
      commitLogOffset: String(r.physicalOffset),
      msgId: p.key,
      transactionId: p.key,
      offsetMsgId: r.msgId,
    };
    if (!this.#o.sendCheck(p.producerGroup, header, body)) {
      this.#o.logger.warn(
        { producerGroup: p.producerGroup, key: p.key, code: RequestCode.CHECK_TRANSACTION_STATE },
        'Check transaction failed, no live member of the producer group',
      );
    }
  }

  /** Moves the half and op progress past what is resolved (RocketMQ: updateOffset of CID_RMQ_SYS_TRANS). */
  #persistProgress(): void {
    const store = this.#o.store;
    let half = store.getMaxOffsetInQueue(TRANS_HALF_TOPIC, 0);
    for (const p of this.#pending.values()) half = Math.min(half, p.queueOffset);
    for (const [key, r] of this.#resolved) if (r.queueOffset < half) this.#resolved.delete(key);
    this.#ops = this.#ops.filter((o) => o.halfOffset >= half);
    const op = this.#ops[0]?.opOffset ?? store.getMaxOffsetInQueue(TRANS_OP_HALF_TOPIC, 0);
    const com = this.#o.consumerOffsetManager;
    com.commitOffset('127.0.0.1', TRANS_SYS_GROUP, TRANS_HALF_TOPIC, 0, half);
    com.commitOffset('127.0.0.1', TRANS_SYS_GROUP, TRANS_OP_HALF_TOPIC, 0, op);
  }

  /** Rebuilds what is pending and resolved from the op queue and then the half queue, from their progress. */
  async #load(): Promise<void> {
    const com = this.#o.consumerOffsetManager;
    const store = this.#o.store;
    const from = (topic: string): number => {
      const committed = com.queryOffset(TRANS_SYS_GROUP, topic, 0);
      return Math.max(committed, store.getMinOffsetInQueue(topic, 0));
    };
    const halfFrom = from(TRANS_HALF_TOPIC);
    const opsByHalf = new Map<number, Outcome>();
    const outcomes: Record<OpOutcome, Outcome> = {
      commit: 'committed',
      rollback: 'rolled back',
      discard: 'discarded after too many checks',
    };
    await this.#scan(TRANS_OP_HALF_TOPIC, from(TRANS_OP_HALF_TOPIC), (op, opOffset) => {
      const halfOffset = opHalfOffset(op);
      if (halfOffset === undefined || halfOffset < halfFrom) return;
      const outcome = opOutcome(op);
      opsByHalf.set(halfOffset, outcome ? outcomes[outcome] : 'committed or rolled back');
      this.#ops.push({ opOffset, halfOffset });
    });
    await this.#scan(TRANS_HALF_TOPIC, halfFrom, (half, queueOffset) => {
      const key = transactionKeyOf(half);
      const outcome = opsByHalf.get(queueOffset);
      if (outcome) {
        this.#pending.delete(key);
        this.#resolved.set(key, { queueOffset, outcome });
        return;
      }
      // A copy after the resolved one can only be an operator's resume (RESUME_CHECK_HALF_MESSAGE).
      const resolved = this.#resolved.get(key);
      if (resolved && resolved.queueOffset > queueOffset) return;
      this.#resolved.delete(key);
      this.#pending.set(key, {
        key,
        queueOffset,
        commitLogOffset: half.commitLogOffset,
        producerGroup: (half.properties ?? {})[MessageConst.PGROUP] ?? '',
        bornTimestamp: half.bornTimestamp,
        checkTimes: checkTimesOf(half),
        immunityMs: immunityTimeOf(half, this.#o.transactionTimeOut),
      });
    });
    if (this.#pending.size > 0) this.#o.logger.info({ pending: this.#pending.size }, 'half messages to check');
  }

  async #scan(topic: string, from: number, visit: (m: MessageExt, queueOffset: number) => void): Promise<void> {
    const store = this.#o.store;
    const max = store.getMaxOffsetInQueue(topic, 0);
    let offset = from;
    while (offset < max) {
      const res = await store.getMessage(TRANS_SYS_GROUP, topic, 0, offset, SCAN_BATCH, null);
      if (res.status !== 'FOUND') {
        if (res.nextBeginOffset <= offset) return;
        offset = res.nextBeginOffset;
        continue;
      }
      res.messages.forEach((bytes, i) => {
        const m = decodeMessage(bytes, 0, { decompressBody: false }).message;
        visit(m, res.queueOffsets[i] ?? m.queueOffset);
      });
      offset = res.nextBeginOffset;
    }
  }
}
