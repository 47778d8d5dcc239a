/**
 * The put path of the MessageStore (RocketMQ: DefaultMessageStore.asyncPutMessage and
 * CommitLog.asyncPutMessage): checks a message, encodes its record, appends it to the CommitLog and,
 * once it is in the file, has it dispatched to its consume queue.
 */
import { isUtf8 } from 'node:buffer';
import { MessageSysFlag, createMessageId, encodeStoredMessage, setStoredRecordFields } from '../common/codec/index.js';
import { InvalidArgumentError } from '../common/errors.js';
import { GROUP_MAX_LENGTH, nameProblem } from '../common/names.js';
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueueTable } from './consume-queue-table.js';
import type { ResolvedStoreOptions } from './options.js';
import { storedRecordProblem } from './record-check.js';
import type { ReputMessageService } from './reput-message-service.js';
import type { MessageToStore, PutMessageResult, PutMessageStatus } from './types.js';

/** What the put path works with. */
export interface PutContext {
  readonly o: ResolvedStoreOptions;
  readonly commitLog: CommitLog;
  readonly queues: ConsumeQueueTable;
  readonly reput: ReputMessageService;
  isRunning(): boolean;
  /** Whether the disk is too full to append (re-checked at most every diskCheckIntervalMs). */
  isDiskFull(): boolean;
}

/** Appends one message; resolves once its bytes are in the file (and fsynced in SYNC_FLUSH). */
export function putMessage(ctx: PutContext, msg: MessageToStore): Promise<PutMessageResult> {
  const prepared = prepare(ctx, msg);
  if (!Buffer.isBuffer(prepared)) return Promise.resolve(prepared);
  return append(ctx, msg, prepared);
}

/**
 * Appends a batch, all or nothing: every message is checked and encoded first, and when one is
 * refused none is stored (each result then carries that refusal, so a producer that retries the
 * batch duplicates nothing). Accepted batches are written together, one record per message.
 */
export function putMessages(ctx: PutContext, msgs: MessageToStore[]): Promise<PutMessageResult[]> {
  const records: Buffer[] = [];
  for (let i = 0; i < msgs.length; i++) {
    const prepared = prepare(ctx, msgs[i] as MessageToStore);
    if (!Buffer.isBuffer(prepared)) {
      const refused = { ...prepared, remark: `message ${i} of the batch: ${prepared.remark ?? prepared.status}` };
      return Promise.resolve(msgs.map(() => ({ ...refused })));
    }
    records.push(prepared);
  }
  return Promise.all(msgs.map((m, i) => append(ctx, m, records[i] as Buffer)));
}

/** Checks and encodes a message: its record, or the refusal. */
function prepare(ctx: PutContext, msg: MessageToStore): Buffer | PutMessageResult {
  const refused = checkPut(ctx, msg);
  if (refused) return refused;
  let record: Buffer;
  try {
    record = encodeStoredMessage({
      topic: msg.topic,
      body: msg.body,
      queueId: msg.queueId,
      bornTimestamp: msg.bornTimestamp,
      bornHost: msg.bornHost,
      storeHost: msg.storeHost ?? ctx.o.storeHost,
      flag: msg.flag,
      properties: msg.properties,
      sysFlag: msg.sysFlag,
      reconsumeTimes: msg.reconsumeTimes,
      preparedTransactionOffset: msg.preparedTransactionOffset,
    });
  } catch (e) {
    if (e instanceof InvalidArgumentError) {
      return refusal(e.field === 'properties' ? 'PROPERTIES_SIZE_EXCEEDED' : 'MESSAGE_ILLEGAL', e.message);
    }
    throw e;
  }
  // What the read path would refuse to serve is refused now: the read cache's copy is not checked again.
  const problem = storedRecordProblem(record, isUtf8);
  if (problem !== null) return refusal('MESSAGE_ILLEGAL', `the record would be unreadable: ${problem}`);
  if (record.length > ctx.commitLog.maxRecordSize) {
    return refusal(
      'MESSAGE_ILLEGAL',
      `record of ${record.length} bytes does not fit a ${ctx.o.mappedFileSizeCommitLog}-byte segment`,
    );
  }
  return record;
}

function append(ctx: PutContext, msg: MessageToStore, record: Buffer): Promise<PutMessageResult> {
  const { o, commitLog, queues, reput } = ctx;
  return new Promise((resolve, reject) => {
    const storeHost = msg.storeHost ?? o.storeHost;
    let physicalOffset = 0;
    let queueOffset = 0;
    let storeTimestamp = 0;
    const tran = msg.sysFlag & MessageSysFlag.TRANSACTION_MASK;
    const dispatched =
      tran !== MessageSysFlag.TRANSACTION_PREPARED_TYPE && tran !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE;
    commitLog.append({
      record,
      assign: (offset) => {
        physicalOffset = offset;
        storeTimestamp = o.clock.now();
        // RocketMQ: PREPARED/ROLLBACK records get queue offset 0 and take no place in the queue.
        if (dispatched) {
          const table = queues.queueOffsetTable(msg.topic);
          queueOffset = table.get(msg.queueId) ?? 0;
          table.set(msg.queueId, queueOffset + 1);
        }
        setStoredRecordFields(record, 0, { queueOffset, commitLogOffset: offset, storeTimestamp });
      },
      // Called in reverse order: the first record of the queue in the batch restores its offset last.
      rollback: () => {
        if (dispatched) queues.queueOffsetTable(msg.topic).set(msg.queueId, queueOffset);
      },
      written: () => reput.written(msg, physicalOffset, record.length, queueOffset, storeTimestamp, dispatched),
      settle: (err, flushOk) => {
        if (err) return reject(err);
        resolve({
          status: flushOk ? 'PUT_OK' : 'FLUSH_DISK_TIMEOUT',
          physicalOffset,
          queueOffset,
          storeTimestamp,
          msgId: createMessageId(storeHost, physicalOffset),
          wroteBytes: record.length,
        });
      },
    });
  });
}

function checkPut(ctx: PutContext, msg: MessageToStore): PutMessageResult | null {
  const o = ctx.o;
  if (!ctx.isRunning()) return refusal('SERVICE_NOT_AVAILABLE', 'the message store is shut down');
  const topicProblem = nameProblem('topic', msg.topic, GROUP_MAX_LENGTH);
  if (topicProblem) return refusal('MESSAGE_ILLEGAL', topicProblem);
  if (!Number.isInteger(msg.queueId) || msg.queueId < 0 || msg.queueId > 0x7fffffff) {
    return refusal('MESSAGE_ILLEGAL', `bad queueId ${String(msg.queueId)}`);
  }
  if (!Buffer.isBuffer(msg.body)) return refusal('MESSAGE_ILLEGAL', 'the body must be a Buffer');
  if (msg.body.length > o.maxMessageSize) {
    return refusal('MESSAGE_ILLEGAL', `body of ${msg.body.length} bytes exceeds maxMessageSize ${o.maxMessageSize}`);
  }
  if (ctx.isDiskFull()) {
    return refusal(
      'SERVICE_NOT_AVAILABLE',
      `disk full: the store's disk is more than ${o.diskSpaceWarningLevelRatio}% used (diskSpaceWarningLevelRatio)`,
    );
  }
  return null;
}

function refusal(status: PutMessageStatus, remark: string): PutMessageResult {
  return { status, physicalOffset: -1, queueOffset: -1, storeTimestamp: 0, msgId: '', wroteBytes: 0, remark };
}
