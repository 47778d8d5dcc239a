/**
 * MessageStore (RocketMQ's DefaultMessageStore): the CommitLog, one ConsumeQueue per topic-queue built
 * by dispatch right after each write, getMessage, lookups, recovery on open, flushing and retention.
 * Layout and durability are described in docs/storage.md.
 */
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import type { TimerHandle } from '../common/clock.js';
import {
  BLANK_MAGIC_CODE,
  MAGIC_CODE_V1,
  MAGIC_CODE_V2,
  MAX_PROPERTIES_BYTES,
  MAX_TOPIC_BYTES_V2,
  MIN_RECORD_LENGTH,
  MessageSysFlag,
  createMessageId,
  decodeMessage,
  decodeMessageId,
  encodeStoredMessage,
  peekRecordFields,
  setStoredRecordFields,
  storedRecordLength,
  tagsHashCode,
} from '../common/codec/index.js';
import { InvalidArgumentError, StateError } from '../common/errors.js';
import { MessageConst, SCHEDULE_TOPIC, type MessageExt } from '../common/message.js';
import { GROUP_MAX_LENGTH, nameProblem } from '../common/names.js';
import { CommitLog, releaseWindows, type ReadWindow } from './commit-log.js';
import { ConsumeQueue } from './consume-queue.js';
import { OpenFiles, type OpenFile } from './open-files.js';
import { computeDeliverTimestamp } from './delay-levels.js';
import { decideStart, estimateInMem, scanConsumeQueue, MAX_PULL_MSG_SIZE } from './get-message-rules.js';
import { CONSUMEQUEUE_DIR, CQ_FILLER_SIZE, CQ_UNIT_SIZE } from './layout.js';
import { cachedRecordProblem, recordProblem, storedRecordProblem } from './record-check.js';
import { resolveStoreOptions, type MessageStoreOptions, type ResolvedStoreOptions } from './options.js';
import { findOffsetByTime } from './offset-by-time.js';
import { acquirePullBody } from './pull-body-pool.js';
import { acquireLock, markClosed, markOpen, readCheckpoint, writeCheckpoint } from './store-files.js';
import type {
  BoundaryType,
  GetMessageResult,
  MessageArrival,
  MessageFilter,
  MessageToStore,
  PutMessageResult,
  PutMessageStatus,
} from './types.js';

/** Segments verified on open after a clean shutdown (RocketMQ: recoverNormally checks the last 3). */
const NORMAL_RECOVERY_SEGMENTS = 3;
/** Segments deleted at most per run under disk pressure (RocketMQ: DELETE_FILES_BATCH_MAX). */
const FORCED_DELETE_MAX = 10;
/** The answer to the scan for a record that is damaged: skip its unit only. */
const DAMAGED = Buffer.alloc(0);
/** Consume-queue fsyncs in flight at once during a flush. */
const FLUSH_PARALLEL = 16;
/** Commit-log bytes walked at most to rebuild one damaged consume-queue unit. */
const REBUILD_SCAN_BYTES = 4 * 1024 * 1024;
/** Bytes read at once when a pull misses the read cache (RocketMQ's on-disk cap per pull is 64 KiB). */
const READ_AHEAD_BYTES = 64 * 1024;
/**
 * The longest stretch of the log one read covers to serve the records of one pull. Records of a queue
 * whose messages were sent one by one lie between those of the other queues (each send picks the next
 * queue), so a 32-message pull of 1 KiB messages spans about 300 KiB of log with 8 queues: one read of
 * the stretch costs far less than one read per 64 KiB of it.
 */
const PULL_SPAN_BYTES = 512 * 1024;

export class MessageStore {
  readonly storePath: string;
  private readonly o: ResolvedStoreOptions;
  private readonly commitLog: CommitLog;
  /** Descriptors of consume-queue files, at most maxOpenConsumeQueueFiles at once. */
  private readonly openFiles: OpenFiles;
  private readonly queues = new Map<string, Map<number, ConsumeQueue>>();
  /** Next queue offset per topic-queue, assigned at append time (RocketMQ: topicQueueTable). */
  private readonly queueOffsets = new Map<string, Map<number, number>>();
  private readonly listeners = new Set<(a: MessageArrival) => void>();
  /** Arrivals of the batch being written, announced together once it is dispatched. */
  private arrivals: MessageArrival[] = [];
  private readonly timers: TimerHandle[] = [];
  private dispatchedOffset = 0;
  /** Consume-queue units recovery added from the commit log (logged once recovered). */
  private unitsRedispatched = 0;
  private physicMsgTimestamp = 0;
  private logicsMsgTimestamp = 0;
  private running = true;
  private shutdownPromise: Promise<void> | null = null;
  private cqFlushing: Promise<void> | null = null;
  private diskFull = false;
  /** Disk usage (percent) at the last check. */
  private diskRatio = 0;
  private lastCheckpoint = '';
  private diskCheckedAt = -Infinity;
  private releaseLock: () => void = () => {};

  private constructor(o: ResolvedStoreOptions) {
    this.o = o;
    this.storePath = o.storePath;
    this.openFiles = new OpenFiles(o.maxOpenConsumeQueueFiles);
    this.commitLog = new CommitLog(o.storePath, {
      fileSize: o.mappedFileSizeCommitLog,
      readCacheSizeBytes: o.readCacheSizeBytes,
      syncFlush: o.flushDiskType === 'SYNC_FLUSH',
      syncFlushTimeoutMs: o.syncFlushTimeoutMs,
      recordProblem: (record, offset) => recordProblem(record, offset, false, isUtf8),
      logger: o.logger,
      setTimeout: (fn, ms) => {
        const h = o.clock.setTimeout(fn, ms);
        return () => o.clock.clearTimeout(h);
      },
    });
  }

  /** Opens (creating if needed) the store at `options.storePath`: takes the lock, recovers, starts timers. */
  static async open(options: MessageStoreOptions): Promise<MessageStore> {
    const o = resolveStoreOptions(options);
    fs.mkdirSync(o.storePath, { recursive: true });
    const store = new MessageStore(o);
    store.releaseLock = acquireLock(o.storePath);
    try {
      store.recover();
      await store.commitLog.flush();
      await store.flushConsumeQueues();
      store.checkDisk(true);
      store.startTimers();
    } catch (e) {
      store.running = false;
      store.commitLog.closeNow();
      for (const cq of store.allQueues()) cq.close();
      store.releaseLock();
      throw e;
    }
    return store;
  }

  // ---------------------------------------------------------------- recovery

  private recover(): void {
    const abnormal = markOpen(this.storePath);
    const checkpoint = readCheckpoint(this.storePath);
    this.loadConsumeQueues();
    const haveQueues = this.queues.size > 0;
    let dispatchFrom = 0;
    let scanFrom = 0;
    let tailSegments = 0;
    if (checkpoint && haveQueues) {
      dispatchFrom = checkpoint.dispatchedOffset;
      scanFrom = Math.min(checkpoint.commitLogFlushedOffset, dispatchFrom);
      // After a clean shutdown RocketMQ re-verifies the last segments; after a crash it starts at the
      // last checkpoint (everything below it was fsynced).
      if (!abnormal) tailSegments = NORMAL_RECOVERY_SEGMENTS;
    } else if (checkpoint && !haveQueues) {
      this.o.logger.warn({}, 'consume queues missing: rebuilding them from the commit log');
    }
    // Consume queues damaged or cut short (by whole units) are rebuilt from the commit log: cut at the
    // first unit that does not fit the log, then re-dispatched from the end of the last unit kept.
    const bounds = this.commitLog.peekBounds();
    let rebuildFrom = Infinity;
    for (const cq of this.allQueues()) {
      const cut = cq.validate(bounds.min, bounds.end, this.commitLog.maxRecordSize, MIN_RECORD_LENGTH);
      if (cut > 0) {
        this.o.logger.warn(
          { topic: cq.topic, queueId: cq.queueId, unitsCut: cut, keptUnits: cq.maxOffset - cq.minOffset },
          'consume queue: damaged units cut; rebuilding them from the commit log',
        );
        rebuildFrom = Math.min(rebuildFrom, Math.max(bounds.min, cq.maxPhysicOffset));
      } else if (cq.maxPhysicOffset >= bounds.min && cq.maxOffset > cq.minOffset) {
        rebuildFrom = Math.min(rebuildFrom, cq.maxPhysicOffset);
      } else if (cq.maxOffset === 0 && cq.fileCount > 0) {
        // Files without a single unit (cut to nothing): the queue is rebuilt from the start of the log.
        this.o.logger.warn(
          { topic: cq.topic, queueId: cq.queueId },
          'consume queue: files hold no unit; rebuilding the queue from the commit log',
        );
        rebuildFrom = Math.min(rebuildFrom, bounds.min);
      }
    }
    if (checkpoint && haveQueues && rebuildFrom < dispatchFrom) {
      this.o.logger.info(
        { from: rebuildFrom, checkpoint: dispatchFrom },
        'recovery: checking consume queues from the end of the oldest',
      );
      dispatchFrom = rebuildFrom;
      scanFrom = Math.min(scanFrom, rebuildFrom);
    }
    this.o.logger.info({ abnormal, checkpoint, scanFrom, dispatchFrom }, 'message store: recovering');
    const report = this.commitLog.recover(scanFrom, tailSegments, dispatchFrom, (buf, at, offset) =>
      this.redispatch(buf, at, offset),
    );
    const end = report.validEnd;
    for (const cq of this.allQueues()) {
      const cut = cq.truncateDirty(end);
      if (cut > 0)
        this.o.logger.warn(
          { topic: cq.topic, queueId: cq.queueId, unitsCut: cut, maxOffset: cq.maxOffset },
          'consume queue: units past the commit log cut',
        );
      cq.correctMinOffset(this.commitLog.minOffset);
      this.queueOffsetTable(cq.topic).set(cq.queueId, cq.maxOffset);
    }
    if (this.unitsRedispatched > 0) {
      this.o.logger.warn(
        { units: this.unitsRedispatched, abnormal },
        'consume queues: units restored from the commit log',
      );
    }
    this.dispatchedOffset = end;
    this.o.logger.info({ ...report, queues: this.queueCount() }, 'message store: recovered');
  }

  private loadConsumeQueues(): void {
    const root = path.join(this.storePath, CONSUMEQUEUE_DIR);
    if (!fs.existsSync(root)) return;
    for (const topic of fs.readdirSync(root)) {
      if (nameProblem('topic', topic, GROUP_MAX_LENGTH) !== null) {
        this.o.logger.warn({ dir: topic }, 'consume queue: directory with an invalid topic name ignored');
        continue;
      }
      for (const q of fs.readdirSync(path.join(root, topic))) {
        if (!/^\d{1,9}$/.test(q)) continue;
        const cq = this.consumeQueue(topic, Number(q), true) as ConsumeQueue;
        cq.load();
      }
    }
  }

  private redispatch(buf: Buffer, at: number, offset: number): void {
    const f = peekRecordFields(buf, at);
    this.physicMsgTimestamp = f.storeTimestamp;
    const tran = f.sysFlag & MessageSysFlag.TRANSACTION_MASK;
    if (tran === MessageSysFlag.TRANSACTION_PREPARED_TYPE || tran === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) return;
    if (nameProblem('topic', f.topic, GROUP_MAX_LENGTH) !== null) {
      this.o.logger.warn({ offset, topic: f.topic }, 'recovery: record with an invalid topic name not dispatched');
      return;
    }
    const cq = this.consumeQueue(f.topic, f.queueId, true) as ConsumeQueue;
    const tagsCode = this.tagsCodeOf(f.topic, f.properties, f.storeTimestamp);
    if (cq.putUnit(f.queueOffset, offset, f.size, tagsCode)) this.unitsRedispatched++;
    this.logicsMsgTimestamp = f.storeTimestamp;
  }

  // ---------------------------------------------------------------- append

  /** Appends one message; resolves once its bytes are in the file (and fsynced in SYNC_FLUSH). */
  putMessage(msg: MessageToStore): Promise<PutMessageResult> {
    const prepared = this.prepare(msg);
    if (!Buffer.isBuffer(prepared)) return Promise.resolve(prepared);
    return this.append(msg, prepared);
  }

  /**
   * Appends a batch, all or nothing: every message is checked and encoded first, and when one is
   * refused none is stored (each result then carries that refusal, so a producer that retries the
   * batch duplicates nothing). Accepted batches are written together, one record per message.
   */
  putMessages(msgs: MessageToStore[]): Promise<PutMessageResult[]> {
    const records: Buffer[] = [];
    for (let i = 0; i < msgs.length; i++) {
      const prepared = this.prepare(msgs[i] as MessageToStore);
      if (!Buffer.isBuffer(prepared)) {
        const refused = { ...prepared, remark: `message ${i} of the batch: ${prepared.remark ?? prepared.status}` };
        return Promise.resolve(msgs.map(() => ({ ...refused })));
      }
      records.push(prepared);
    }
    return Promise.all(msgs.map((m, i) => this.append(m, records[i] as Buffer)));
  }

  /** Checks and encodes a message: its record, or the refusal. */
  private prepare(msg: MessageToStore): Buffer | PutMessageResult {
    const refused = this.checkPut(msg);
    if (refused) return refused;
    let record: Buffer;
    try {
      record = encodeStoredMessage({
        topic: msg.topic,
        body: msg.body,
        queueId: msg.queueId,
        bornTimestamp: msg.bornTimestamp,
        bornHost: msg.bornHost,
        storeHost: msg.storeHost ?? this.o.storeHost,
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
    if (record.length > this.commitLog.maxRecordSize) {
      return refusal(
        'MESSAGE_ILLEGAL',
        `record of ${record.length} bytes does not fit a ${this.o.mappedFileSizeCommitLog}-byte segment`,
      );
    }
    return record;
  }

  private append(msg: MessageToStore, record: Buffer): Promise<PutMessageResult> {
    return new Promise((resolve, reject) => {
      const storeHost = msg.storeHost ?? this.o.storeHost;
      let physicalOffset = 0;
      let queueOffset = 0;
      let storeTimestamp = 0;
      const tran = msg.sysFlag & MessageSysFlag.TRANSACTION_MASK;
      const dispatched =
        tran !== MessageSysFlag.TRANSACTION_PREPARED_TYPE && tran !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE;
      this.commitLog.append({
        record,
        assign: (offset) => {
          physicalOffset = offset;
          storeTimestamp = this.o.clock.now();
          // RocketMQ: PREPARED/ROLLBACK records get queue offset 0 and take no place in the queue.
          if (dispatched) {
            const table = this.queueOffsetTable(msg.topic);
            queueOffset = table.get(msg.queueId) ?? 0;
            table.set(msg.queueId, queueOffset + 1);
          }
          setStoredRecordFields(record, 0, { queueOffset, commitLogOffset: offset, storeTimestamp });
        },
        // Called in reverse order: the first record of the queue in the batch restores its offset last.
        rollback: () => {
          if (dispatched) this.queueOffsetTable(msg.topic).set(msg.queueId, queueOffset);
        },
        written: () => {
          this.physicMsgTimestamp = storeTimestamp;
          this.dispatchedOffset = physicalOffset + record.length;
          if (dispatched) this.dispatch(msg, physicalOffset, record.length, queueOffset, storeTimestamp);
        },
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

  private checkPut(msg: MessageToStore): PutMessageResult | null {
    if (!this.running) return refusal('SERVICE_NOT_AVAILABLE', 'the message store is shut down');
    const topicProblem = nameProblem('topic', msg.topic, GROUP_MAX_LENGTH);
    if (topicProblem) return refusal('MESSAGE_ILLEGAL', topicProblem);
    if (!Number.isInteger(msg.queueId) || msg.queueId < 0 || msg.queueId > 0x7fffffff) {
      return refusal('MESSAGE_ILLEGAL', `bad queueId ${String(msg.queueId)}`);
    }
    if (!Buffer.isBuffer(msg.body)) return refusal('MESSAGE_ILLEGAL', 'the body must be a Buffer');
    if (msg.body.length > this.o.maxMessageSize) {
      return refusal(
        'MESSAGE_ILLEGAL',
        `body of ${msg.body.length} bytes exceeds maxMessageSize ${this.o.maxMessageSize}`,
      );
    }
    this.checkDisk(false);
    if (this.diskFull) {
      return refusal(
        'SERVICE_NOT_AVAILABLE',
        `disk full: the store's disk is more than ${this.o.diskSpaceWarningLevelRatio}% used (diskSpaceWarningLevelRatio)`,
      );
    }
    return null;
  }

  /** Re-reads the disk usage at most every diskCheckIntervalMs (always when `force`). */
  private checkDisk(force: boolean): void {
    const now = this.o.clock.now();
    if (!force && now - this.diskCheckedAt < this.o.diskCheckIntervalMs) return;
    this.diskCheckedAt = now;
    let ratio = 0;
    try {
      ratio = this.o.diskUsedRatio(this.storePath);
    } catch (e) {
      this.o.logger.warn({ err: e }, 'disk usage check failed');
    }
    // RocketMQ: over diskMaxUsedSpaceRatio expired files are deleted at once, over
    // diskSpaceCleanForciblyRatio the oldest files are deleted even when young, over
    // diskSpaceWarningLevelRatio appends are refused.
    this.diskRatio = ratio;
    const full = ratio > this.o.diskSpaceWarningLevelRatio;
    if (full !== this.diskFull) {
      this.o.logger[full ? 'error' : 'info'](
        { ratio, limit: this.o.diskSpaceWarningLevelRatio },
        full ? 'disk full: appends refused' : 'disk usage back below the limit: appends accepted',
      );
    }
    this.diskFull = full;
  }

  /** Builds the consume-queue unit and announces the arrival (RocketMQ: CommitLogDispatcherBuildConsumeQueue). */
  private dispatch(
    msg: MessageToStore,
    offset: number,
    size: number,
    queueOffset: number,
    storeTimestamp: number,
  ): void {
    const cq = this.consumeQueue(msg.topic, msg.queueId, true) as ConsumeQueue;
    const tagsCode = this.tagsCodeOf(msg.topic, msg.properties, storeTimestamp);
    cq.putUnit(queueOffset, offset, size, tagsCode);
    this.logicsMsgTimestamp = storeTimestamp;
    if (this.listeners.size === 0) return;
    this.arrivals.push({
      topic: msg.topic,
      queueId: msg.queueId,
      queueOffset,
      maxOffset: queueOffset + 1,
      tagsCode,
      storeTimestamp,
      properties: msg.properties,
    });
    if (this.arrivals.length === 1) queueMicrotask(this.announceArrivals);
  }

  /**
   * Announces the arrivals of a written batch once all of it is dispatched, outside the write path: a
   * held pull woken by the first record of a batch finds the whole batch.
   */
  private readonly announceArrivals = (): void => {
    const arrivals = this.arrivals;
    this.arrivals = [];
    for (const arrival of arrivals) {
      for (const l of this.listeners) {
        try {
          l(arrival);
        } catch (e) {
          this.o.logger.error({ err: e }, 'message arrival listener threw');
        }
      }
    }
  };

  /**
   * The consume-queue tags code: the delivery time for SCHEDULE_TOPIC_XXXX records with a DELAY level,
   * else Java's hashCode of TAGS (0 without a tag). RocketMQ: CommitLog.checkMessageAndReturnSize.
   */
  private tagsCodeOf(topic: string, props: Record<string, string> | null, storeTimestamp: number): number {
    const tags = props?.[MessageConst.TAGS];
    if (topic === SCHEDULE_TOPIC && props) {
      const level = Number.parseInt(props[MessageConst.DELAY] ?? '', 10);
      if (level > 0) return computeDeliverTimestamp(this.o.delayLevelsMs, level, storeTimestamp);
    }
    return tagsHashCode(tags);
  }

  // ---------------------------------------------------------------- read

  /**
   * RocketMQ: DefaultMessageStore.getMessage. Consume-queue units and records not held in memory are
   * read asynchronously: a pull of old messages never blocks the event loop on the disk.
   */
  getMessage(
    group: string,
    topic: string,
    queueId: number,
    offset: number,
    maxMsgNums: number,
    filter: MessageFilter | null = null,
  ): Promise<GetMessageResult> {
    return this.readMessages(group, topic, queueId, offset, maxMsgNums, filter, 0);
  }

  private async readMessages(
    group: string,
    topic: string,
    queueId: number,
    offset: number,
    maxMsgNums: number,
    filter: MessageFilter | null,
    attempt: number,
  ): Promise<GetMessageResult> {
    if (!this.running) throw new StateError('the message store is shut down');
    void group;
    const cq = this.consumeQueue(topic, queueId, false);
    const validName = nameProblem('topic', topic, GROUP_MAX_LENGTH) === null;
    // RocketMQ finds-or-creates the queue, so an unknown queue reads as an empty one.
    const min = cq?.minOffset ?? 0;
    const max = cq?.maxOffset ?? 0;
    const start = decideStart(offset, min, max, validName, this.o);
    const result: GetMessageResult = {
      status: start.status,
      nextBeginOffset: start.nextBeginOffset,
      minOffset: min,
      maxOffset: max,
      messages: [],
      queueOffsets: [],
      bufferTotalSize: 0,
      messageCount: 0,
      suggestPullingFromSlave: false,
      filterMessageCount: 0,
    };
    if (!start.scan || !cq) return result;
    const o = this.o;
    const scan = scanConsumeQueue({
      maxTransferCountOnMessageInMemory: o.maxTransferCountOnMessageInMemory,
      maxTransferBytesOnMessageInMemory: o.maxTransferBytesOnMessageInMemory,
      maxTransferCountOnMessageInDisk: o.maxTransferCountOnMessageInDisk,
      maxTransferBytesOnMessageInDisk: o.maxTransferBytesOnMessageInDisk,
      brokerRole: o.brokerRole,
      offsetCheckInSlave: o.offsetCheckInSlave,
      maxFilterMessageCount: o.maxFilterMessageCount,
      travelCqFileNumWhenGetMessage: o.travelCqFileNumWhenGetMessage,
      totalPhysicalMemoryBytes: o.totalPhysicalMemoryBytes,
      accessMessageInMemoryMaxRatio: o.accessMessageInMemoryMaxRatio,
      offset,
      maxOffset: max,
      maxMsgNums,
      maxTotalMsgSize: MAX_PULL_MSG_SIZE,
      cqUnitsPerFile: cq.unitsPerFile,
      commitLogFileSize: this.o.mappedFileSizeCommitLog,
      commitLogMaxOffset: this.commitLog.maxOffset,
      filter,
    });
    // Reads answered from memory (consume-queue units held in memory, the read cache, the current read
    // window) answer at once, and so do records the page cache is taken to hold (read on the loop); the
    // others read the file asynchronously, off the event loop. Records are views (ring or read window)
    // copied into one buffer below, unless they already lie back to back in one read window. A ring view
    // is only valid until the ring wraps past it: when the scan had to wait for the disk, each is checked
    // still cached, and the pull is read again if one was not.
    const window: ReadWindow = { start: 0, buf: null, wantEnd: 0 };
    let pullUnits: Buffer | null = null;
    const ringServed: number[] = [];
    let waited = false;
    let step = scan.next();
    while (!step.done) {
      const req = step.value;
      let answer: Buffer | null;
      if (req.kind === 'units') {
        let units = cq.readUnitsInMemory(req.from, req.maxUnits);
        if (units === undefined) {
          waited = true;
          units = await cq.readUnitsFromFile(req.from, req.maxUnits);
        }
        answer = units;
        pullUnits = units;
        window.wantEnd = units && units.length > 0 ? unitsSpanEnd(units, maxMsgNums, unitOffset(units, 0)) : 0;
      } else {
        let b: Buffer | null | undefined = this.commitLog.ringView(req.offset, req.size);
        const cached = b !== undefined;
        if (b) ringServed.push(req.offset, req.size);
        else {
          b = windowView(window, req.offset, req.size);
          if (!b) {
            // Past the stretch the last read covered: the next read covers the records from here on.
            if (pullUnits && req.offset >= window.wantEnd)
              window.wantEnd = unitsSpanEnd(pullUnits, maxMsgNums, req.offset);
            if (this.inPageCache(req.offset)) {
              b = this.commitLog.readWindowSync(req.offset, req.size, window, READ_AHEAD_BYTES);
            } else {
              waited = true;
              b = await this.commitLog.readWindow(req.offset, req.size, window, READ_AHEAD_BYTES);
            }
          }
        }
        answer = this.recordView(cq, req.queueOffset, req.offset, req.size, b, window, cached);
      }
      step = scan.next(answer);
    }
    // Shut down while reading: a read that found its file closed must not be answered as removed data.
    if (waited && !this.running) throw new StateError('the message store is shut down');
    if (waited && !this.stillCached(ringServed)) {
      releaseWindows(window);
      if (attempt < 3) return this.readMessages(group, topic, queueId, offset, maxMsgNums, filter, attempt + 1);
      throw new StateError('getMessage: the read cache wrapped past the records of a pull three times');
    }
    const r = step.value;
    const body = pullBody(r, window);
    // The records now lie in `body`: every other read window of this pull goes back to the pool.
    releaseWindows(window, body);
    Object.assign(result, r, { messageCount: r.messages.length, messagesBuffer: body });
    return result;
  }

  /** Whether every `[offset, size]` pair of `ranges` is still in the read cache. */
  private stillCached(ranges: number[]): boolean {
    for (let i = 0; i < ranges.length; i += 2) {
      if (!this.commitLog.isCached(ranges[i] as number, ranges[i + 1] as number)) return false;
    }
    return true;
  }

  /**
   * Whether the page cache is taken to hold the commit log at `offset`: RocketMQ's estimate (within
   * accessMessageInMemoryMaxRatio of RAM behind the head). Such a record is read on the event loop.
   */
  private inPageCache(offset: number): boolean {
    return estimateInMem(
      this.commitLog.maxOffset,
      offset,
      this.o.totalPhysicalMemoryBytes,
      this.o.accessMessageInMemoryMaxRatio,
    );
  }

  /**
   * The record a unit names; null when its segment is gone, and an empty buffer (skip this unit only)
   * when it cannot be served. The bytes must be one valid record (its CRC is checked unless
   * checkCRCOnRead is off, and its header must be self-consistent) of this queue at this queue offset.
   * When they are not, the unit may be the damaged part: the record is looked for in the log between the
   * records of the units around it, and found, the unit is rebuilt and the record served. A damaged
   * record is never served.
   */
  private recordView(
    cq: ConsumeQueue,
    queueOffset: number,
    offset: number,
    size: number,
    b: Buffer | null,
    window: ReadWindow,
    cached: boolean,
  ): Buffer | null {
    const expected = { topic: cq.topic, queueId: cq.queueId, queueOffset };
    // Bytes still in the read cache were written by this store in this run, their content checked before
    // it stored them: only that they are the record asked for is checked. Bytes read from the file get
    // every check (the file may have been damaged since).
    const problem = !b
      ? 'unreadable'
      : cached
        ? cachedRecordProblem(b, offset, expected)
        : recordProblem(b, offset, this.o.checkCRCOnRead, isUtf8, expected);
    if (b && problem === null) return b;
    if (offset < this.commitLog.minOffset || !this.running) return null;
    const found = this.rebuildUnit(cq, queueOffset, window);
    if (found) return found;
    this.o.logger.warn(
      { topic: cq.topic, queueId: cq.queueId, queueOffset, offset, size, problem },
      'getMessage: damaged record skipped',
    );
    return DAMAGED;
  }

  /**
   * Looks for the record of `queueOffset` in the commit log between the records of the units around it
   * (records of one queue lie in queue order) and, found, rewrites the unit. Returns the record's bytes,
   * or null when no valid record of that queue offset lies there (then the record itself is damaged).
   */
  private rebuildUnit(cq: ConsumeQueue, queueOffset: number, window: ReadWindow): Buffer | null {
    const fileSize = this.o.mappedFileSizeCommitLog;
    const prev = queueOffset > cq.minOffset ? cq.unit(queueOffset - 1) : null;
    const next = queueOffset + 1 < cq.maxOffset ? cq.unit(queueOffset + 1) : null;
    const to = Math.min(next && next.size !== CQ_FILLER_SIZE ? next.offsetPy : Infinity, this.commitLog.maxOffset);
    let pos =
      prev && prev.size > 0 && prev.size !== CQ_FILLER_SIZE && prev.offsetPy + prev.size <= to
        ? prev.offsetPy + prev.size
        : to - (to % fileSize); // no usable unit before: the segment of the next one
    pos = Math.max(pos, this.commitLog.minOffset);
    const expected = { topic: cq.topic, queueId: cq.queueId, queueOffset };
    for (let walked = 0; pos < to && walked < REBUILD_SCAN_BYTES;) {
      const head = this.commitLog.viewSync(pos, 8, window, READ_AHEAD_BYTES);
      if (!head) return null;
      const len = head.readInt32BE(0);
      if (head.readInt32BE(4) === BLANK_MAGIC_CODE) {
        const segEnd = pos - (pos % fileSize) + fileSize;
        walked += segEnd - pos;
        pos = segEnd;
        continue;
      }
      if (len < MIN_RECORD_LENGTH || len > this.maxRecordBytes) return null; // lost the record boundaries
      const rec = this.commitLog.viewSync(pos, len, window, READ_AHEAD_BYTES);
      if (!rec) return null;
      if (recordProblem(rec, pos, this.o.checkCRCOnRead, isUtf8, expected) === null) {
        const f = peekRecordFields(rec, 0);
        cq.replaceUnit(queueOffset, pos, len, this.tagsCodeOf(f.topic, f.properties, f.storeTimestamp));
        this.o.logger.warn(
          { topic: cq.topic, queueId: cq.queueId, queueOffset, offset: pos, size: len },
          'consume queue: damaged unit rebuilt from the commit log',
        );
        return rec;
      }
      walked += len;
      pos += len;
    }
    return null;
  }

  /**
   * Whether the consume queue the record names (topic, queue id, queue offset) has a unit naming it: a
   * damaged topic, queue id or queue offset names another queue's unit or none. Records that take no
   * place in a queue (prepared or rolled-back transaction halves) and those whose unit retention already
   * passed have nothing to check against.
   */
  private matchesItsUnit(b: Buffer, offset: number): boolean {
    const f = peekRecordFields(b, 0);
    const tran = f.sysFlag & MessageSysFlag.TRANSACTION_MASK;
    if (tran === MessageSysFlag.TRANSACTION_PREPARED_TYPE || tran === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) {
      return true;
    }
    const cq = this.consumeQueue(f.topic, f.queueId, false);
    if (!cq || f.queueOffset >= cq.maxOffset) return false;
    if (f.queueOffset < cq.minOffset) return true;
    return cq.unit(f.queueOffset)?.offsetPy === offset;
  }

  /** True when `b` is one valid, self-consistent record that states it sits at `offset`. */
  private isValidRecordAt(b: Buffer, offset: number): boolean {
    return recordProblem(b, offset, this.o.checkCRCOnRead, isUtf8) === null;
  }

  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.consumeQueue(topic, queueId, false)?.minOffset ?? 0;
  }

  /** One past the last message of the queue; 0 for an unknown queue. */
  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.consumeQueue(topic, queueId, false)?.maxOffset ?? 0;
  }

  /** RocketMQ: getOffsetInQueueByTime: binary search over the records' store times. */
  async getOffsetInQueueByTime(
    topic: string,
    queueId: number,
    timestamp: number,
    boundary: BoundaryType = 'LOWER',
  ): Promise<number> {
    const cq = this.consumeQueue(topic, queueId, false);
    if (!cq || cq.maxOffset <= cq.minOffset) return cq?.maxOffset ?? 0;
    const storeTimeAt = async (queueOffset: number): Promise<number | null> => {
      const u = cq.unit(queueOffset);
      if (!u) return null;
      const b = this.commitLog.readCached(u.offsetPy, u.size) ?? (await this.commitLog.read(u.offsetPy, u.size));
      if (!b) return null;
      return peekRecordFields(b, 0).storeTimestamp;
    };
    return findOffsetByTime(cq.minOffset, cq.maxOffset, timestamp, boundary, storeTimeAt);
  }

  /**
   * RocketMQ: getMessageStoreTimeStamp — the store time of the message at a queue offset, or -1 when the
   * queue has no message there (or its record is gone).
   */
  async getMessageStoreTimeStamp(topic: string, queueId: number, queueOffset: number): Promise<number> {
    const cq = this.consumeQueue(topic, queueId, false);
    const u = cq?.unit(queueOffset);
    if (!u) return -1;
    const b = this.commitLog.readCached(u.offsetPy, u.size) ?? (await this.commitLog.read(u.offsetPy, u.size));
    return b ? peekRecordFields(b, 0).storeTimestamp : -1;
  }

  /**
   * Deletes the consume queues of a topic (its messages stay in the commit log until retention removes
   * them). RocketMQ: cleanUnusedTopic for one deleted topic. Returns how many queues were deleted.
   */
  deleteTopic(topic: string): number {
    const byId = this.queues.get(topic);
    this.queues.delete(topic);
    this.queueOffsets.delete(topic);
    if (!byId) return 0;
    for (const cq of byId.values()) cq.destroy();
    return byId.size;
  }

  /**
   * The stored bytes of the record at a commit-log offset, or null. The offset comes from a client (a
   * message id), so nothing is trusted: the size read there must frame a record no larger than the
   * largest one this store accepts, and the bytes must be a valid record that names this offset.
   */
  async lookMessageByOffsetRaw(commitLogOffset: number): Promise<Buffer | null> {
    if (!Number.isSafeInteger(commitLogOffset) || commitLogOffset < this.commitLog.minOffset) return null;
    const head = this.commitLog.readCached(commitLogOffset, 8) ?? (await this.commitLog.read(commitLogOffset, 8));
    if (!head) return null;
    const size = head.readInt32BE(0);
    const magic = head.readInt32BE(4);
    if (magic !== MAGIC_CODE_V1 && magic !== MAGIC_CODE_V2) return null;
    if (size < MIN_RECORD_LENGTH || size > this.maxRecordBytes) return null;
    const b = this.commitLog.readCached(commitLogOffset, size) ?? (await this.commitLog.read(commitLogOffset, size));
    if (!b || !this.isValidRecordAt(b, commitLogOffset) || !this.matchesItsUnit(b, commitLogOffset)) return null;
    return b;
  }

  /** The largest record this store accepts: maxMessageSize plus the largest header, topic and properties. */
  private get maxRecordBytes(): number {
    const v6 = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
    const largest = storedRecordLength(2, v6, this.o.maxMessageSize, MAX_TOPIC_BYTES_V2, MAX_PROPERTIES_BYTES);
    return Math.min(largest, this.commitLog.maxRecordSize);
  }

  /** The message at a commit-log offset (body as stored, not decompressed), or null. */
  async lookMessageByOffset(commitLogOffset: number): Promise<MessageExt | null> {
    const b = await this.lookMessageByOffsetRaw(commitLogOffset);
    return b ? decodeMessage(b, 0, { decompressBody: false }).message : null;
  }

  /** The message named by an offset message id (store host + commit-log offset), or null. */
  async lookMessageByMsgId(offsetMsgId: string): Promise<MessageExt | null> {
    let offset: number;
    try {
      offset = decodeMessageId(offsetMsgId).offset;
    } catch {
      return null;
    }
    return this.lookMessageByOffset(offset);
  }

  /** Consume-queue file descriptors open now (at most maxOpenConsumeQueueFiles, beyond while pinned). */
  get openConsumeQueueFiles(): number {
    return this.openFiles.size;
  }

  getCommitLogMinOffset(): number {
    return this.commitLog.minOffset;
  }

  getCommitLogMaxOffset(): number {
    return this.commitLog.maxOffset;
  }

  /**
   * RocketMQ: checkInMemByConsumeOffset — the unit at `consumeOffset` (or at `consumeOffset + batch`)
   * exists and its record is "in memory": in the read cache, or within the in-memory share of RAM
   * behind the commit-log head (where the page cache still holds it).
   */
  checkInMemByConsumeOffset(topic: string, queueId: number, consumeOffset: number, batchSize: number): boolean {
    const cq = this.consumeQueue(topic, queueId, false);
    if (!cq || consumeOffset < cq.minOffset) return false;
    const first = cq.unit(consumeOffset);
    if (!first) return false;
    const last = batchSize > 1 ? (cq.unit(consumeOffset + batchSize) ?? first) : first;
    if (last.offsetPy < this.commitLog.minOffset) return false;
    return this.commitLog.isCached(last.offsetPy, last.size) || this.inPageCache(last.offsetPy);
  }

  /**
   * Registers a listener called for each dispatched record, once the whole batch the record was written
   * with is dispatched (in a microtask after the write); returns the remover.
   */
  onMessageArriving(listener: (a: MessageArrival) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // ---------------------------------------------------------------- retention

  /**
   * Deletes expired commit-log segments (RocketMQ: CleanCommitLogService), then moves consume-queue
   * min offsets and deletes their files below (CleanConsumeQueueService). Returns segments deleted.
   */
  async deleteExpiredFiles(now: number = this.o.clock.now()): Promise<number> {
    const n = await this.cleanCommitLog(now);
    this.cleanConsumeQueues();
    return n;
  }

  /**
   * Deletes commit-log segments older than fileReservedTimeHours (never the newest, never while read).
   * While the disk is over diskSpaceCleanForciblyRatio, the oldest segments go even when young, at most
   * 10 per run (RocketMQ: cleanImmediately with DELETE_FILES_BATCH_MAX).
   */
  async cleanCommitLog(now: number = this.o.clock.now()): Promise<number> {
    if (!this.running) return 0;
    const forcibly = this.diskRatio > this.o.diskSpaceCleanForciblyRatio;
    const deleted = forcibly
      ? await this.commitLog.deleteExpired(now, 0, FORCED_DELETE_MAX)
      : await this.commitLog.deleteExpired(now, this.o.fileReservedTimeHours * 3_600_000);
    if (forcibly && deleted > 0) {
      this.o.logger.warn(
        { deleted, diskUsedPercent: this.diskRatio, limit: this.o.diskSpaceCleanForciblyRatio },
        'disk pressure: oldest commit-log segments deleted before they expired',
      );
    }
    return deleted;
  }

  /** Moves every consume queue's min offset past units whose segment is gone; returns CQ files deleted. */
  cleanConsumeQueues(): number {
    if (!this.running) return 0;
    let n = 0;
    const min = this.commitLog.minOffset;
    for (const cq of this.allQueues()) n += cq.correctMinOffset(min);
    return n;
  }

  private isTimeToDelete(): boolean {
    const hour = new Date(this.o.clock.now()).getHours();
    return this.o.deleteWhen.split(';').some((h) => Number(h) === hour);
  }

  // ---------------------------------------------------------------- flush, timers, shutdown

  private startTimers(): void {
    const c = this.o.clock;
    if (this.o.flushDiskType === 'ASYNC_FLUSH') {
      this.timers.push(
        c.setInterval(() => {
          this.commitLog.flush().catch((e: unknown) => this.o.logger.error({ err: e }, 'commit log flush failed'));
        }, this.o.flushIntervalCommitLogMs),
      );
    }
    this.timers.push(
      c.setInterval(() => {
        this.flushConsumeQueues().catch((e: unknown) => this.o.logger.error({ err: e }, 'consume queue flush failed'));
      }, this.o.flushIntervalConsumeQueueMs),
    );
    this.timers.push(
      c.setInterval(() => {
        this.checkDisk(true);
        if (!this.isTimeToDelete() && this.diskRatio <= this.o.diskMaxUsedSpaceRatio) return;
        if (this.diskRatio > this.o.diskMaxUsedSpaceRatio) {
          this.o.logger.warn(
            { diskUsedPercent: this.diskRatio, limit: this.o.diskMaxUsedSpaceRatio },
            'disk usage over diskMaxUsedSpaceRatio: deleting expired files now',
          );
        }
        this.deleteExpiredFiles().catch((e: unknown) => this.o.logger.error({ err: e }, 'retention failed'));
      }, this.o.cleanResourceIntervalMs),
    );
  }

  /**
   * Writes consume-queue units to their files, fsyncs them, then records the checkpoint: every record
   * below `dispatchedOffset` has its unit on disk. Concurrent calls share one run.
   */
  private flushConsumeQueues(): Promise<void> {
    if (this.cqFlushing) return this.cqFlushing;
    const run = async (): Promise<void> => {
      const dispatched = this.dispatchedOffset;
      const logicsTs = this.logicsMsgTimestamp;
      const files: OpenFile[] = [];
      for (const cq of this.allQueues()) files.push(...cq.writePending());
      // A few fsyncs at a time: each pins an open descriptor, and the open set stays within its cap.
      const parallel = Math.max(1, Math.min(FLUSH_PARALLEL, Math.floor(this.openFiles.max / 4)));
      let next = 0;
      const worker = async (): Promise<void> => {
        for (let f = files[next++]; f; f = files[next++]) {
          await this.openFiles.withFd(
            f,
            (fd) => new Promise<void>((res, rej) => fs.fdatasync(fd, (e) => (e ? rej(e) : res()))),
          );
        }
      };
      await Promise.all(Array.from({ length: Math.min(parallel, files.length) }, worker));
      const flushedOffset = this.commitLog.flushedOffset;
      const key = `${dispatched}/${flushedOffset}/${logicsTs}/${this.physicMsgTimestamp}`;
      if (key === this.lastCheckpoint && files.length === 0) return; // nothing changed: no write, no fsync
      await writeCheckpoint(this.storePath, {
        physicMsgTimestamp: this.physicMsgTimestamp,
        logicsMsgTimestamp: logicsTs,
        commitLogFlushedOffset: flushedOffset,
        dispatchedOffset: dispatched,
      });
      this.lastCheckpoint = key;
    };
    this.cqFlushing = run().finally(() => {
      this.cqFlushing = null;
    });
    return this.cqFlushing;
  }

  /** Stops timers, waits for writes, flushes everything, writes the checkpoint, removes the abort file
   * and releases the lock. Idempotent: every call returns the same promise. */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    this.running = false;
    for (const t of this.timers.splice(0)) this.o.clock.clearInterval(t);
    this.listeners.clear();
    let failure: unknown = null;
    const step = async (name: string, fn: () => unknown): Promise<void> => {
      try {
        await fn();
      } catch (e) {
        failure ??= e;
        this.o.logger.error({ err: e }, `shutdown: ${name} failed`);
      }
    };
    await step('commit log', () => this.commitLog.close());
    if (this.cqFlushing) await step('wait flush', () => this.cqFlushing);
    await step('consume queues', () => this.flushConsumeQueues());
    await step('close queues', () => {
      for (const cq of this.allQueues()) cq.close();
    });
    if (failure === null) await step('abort file', () => markClosed(this.storePath));
    await step('lock', () => this.releaseLock());
    if (failure !== null) throw failure;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }

  // ---------------------------------------------------------------- helpers

  private consumeQueue(topic: string, queueId: number, create: boolean): ConsumeQueue | null {
    let byId = this.queues.get(topic);
    let cq = byId?.get(queueId);
    if (cq || !create) return cq ?? null;
    if (!byId) this.queues.set(topic, (byId = new Map()));
    cq = new ConsumeQueue(
      topic,
      queueId,
      path.join(this.storePath, CONSUMEQUEUE_DIR),
      this.o.mappedFileSizeConsumeQueue / CQ_UNIT_SIZE,
      this.o.logger,
      this.openFiles,
    );
    byId.set(queueId, cq);
    return cq;
  }

  private queueOffsetTable(topic: string): Map<number, number> {
    let t = this.queueOffsets.get(topic);
    if (!t) this.queueOffsets.set(topic, (t = new Map()));
    return t;
  }

  private *allQueues(): Generator<ConsumeQueue> {
    for (const byId of this.queues.values()) yield* byId.values();
  }

  private queueCount(): number {
    let n = 0;
    for (const byId of this.queues.values()) n += byId.size;
    return n;
  }
}

function refusal(status: PutMessageStatus, remark: string): PutMessageResult {
  return { status, physicalOffset: -1, queueOffset: -1, storeTimestamp: 0, msgId: '', wroteBytes: 0, remark };
}

/** The bytes of `[offset, offset + size)` in the read window, or undefined when it does not hold them all. */
function windowView(window: ReadWindow, offset: number, size: number): Buffer | undefined {
  const buf = window.buf;
  if (!buf || offset < window.start || offset + size > window.start + buf.length) return undefined;
  return buf.subarray(offset - window.start, offset - window.start + size);
}

/** The commit-log offset unit `i` of `units` names. */
function unitOffset(units: Buffer, i: number): number {
  return units.readUInt32BE(i * CQ_UNIT_SIZE) * 0x1_0000_0000 + units.readUInt32BE(i * CQ_UNIT_SIZE + 4);
}

/**
 * Where the records named by the first `maxMsgNums` units end, counting only those that start at `from`
 * or later and end within `PULL_SPAN_BYTES` of it: the extent one read should cover for a pull. 0 for
 * no such unit.
 */
function unitsSpanEnd(units: Buffer, maxMsgNums: number, from: number): number {
  const count = Math.min(Math.floor(units.length / CQ_UNIT_SIZE), maxMsgNums);
  let end = 0;
  for (let i = 0; i < count; i++) {
    const offset = unitOffset(units, i);
    const recordEnd = offset + units.readInt32BE(i * CQ_UNIT_SIZE + 8);
    if (offset >= from && recordEnd - from <= PULL_SPAN_BYTES && recordEnd > end) end = recordEnd;
  }
  return end;
}

/**
 * The pull body: the records back to back. When they already lie so in the read window (one disk
 * read of a contiguous run, the common case for a backlog) that window is the body, with no copy;
 * otherwise (ring views, which later appends overwrite, or records from several reads) they are copied
 * into one new buffer and `r.messages` become views of it.
 */
function pullBody(r: { messages: Buffer[]; bufferTotalSize: number }, window: ReadWindow): Buffer {
  const msgs = r.messages;
  const win = window.buf;
  if (win && msgs.length > 0) {
    // Each record must lie inside this window (a small window can share its ArrayBuffer with another
    // from Node's buffer pool), right after the one before.
    let at = (msgs[0] as Buffer).byteOffset - win.byteOffset;
    const from = at;
    let inside = true;
    for (let i = 0; i < msgs.length && inside; i++) {
      const m = msgs[i] as Buffer;
      inside = m.buffer === win.buffer && m.byteOffset - win.byteOffset === at && at >= 0;
      at += m.length;
    }
    if (inside && at <= win.length) return win.subarray(from, at);
  }
  const arena = acquirePullBody(r.bufferTotalSize);
  let at = 0;
  r.messages = msgs.map((m) => {
    arena.set(m, at);
    at += m.length;
    return arena.subarray(at - m.length, at);
  });
  return arena;
}
