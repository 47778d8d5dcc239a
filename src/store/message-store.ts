/**
 * MessageStore (RocketMQ's DefaultMessageStore): the CommitLog, one ConsumeQueue per topic-queue built
 * by dispatch right after each write, getMessage, lookups, recovery on open, flushing and retention.
 * Layout and durability are described in docs/storage.md.
 *
 * This class opens, wires and shuts down the parts, each in its own file: the put path (put-message.ts),
 * the read path (get-message.ts), lookups (look-message.ts), dispatch (reput-message-service.ts),
 * recovery (store-recovery.ts), retention (retention-service.ts) and the consume-queue flush
 * (flush-consume-queue-service.ts).
 */
import { isUtf8 } from 'node:buffer';
import fs from 'node:fs';
import path from 'node:path';
import type { TimerHandle } from '../common/clock.js';
import { SCHEDULE_TOPIC, type MessageExt } from '../common/message.js';
import { CommitLog } from './commit-log.js';
import { ConsumeQueueTable } from './consume-queue-table.js';
import { FlushConsumeQueueService } from './flush-consume-queue-service.js';
import { getMessage } from './get-message.js';
import { CONSUMEQUEUE_DIR, CQ_UNIT_SIZE } from './layout.js';
import * as look from './look-message.js';
import { OpenFiles } from './open-files.js';
import { resolveStoreOptions, type MessageStoreOptions, type ResolvedStoreOptions } from './options.js';
import { putMessage, putMessages, type PutContext } from './put-message.js';
import { recordProblem } from './record-check.js';
import { RetentionService } from './retention-service.js';
import { ReputMessageService } from './reput-message-service.js';
import { acquireLock, markClosed } from './store-files.js';
import { recoverStore } from './store-recovery.js';
import type {
  BoundaryType,
  GetMessageResult,
  MessageArrival,
  MessageFilter,
  MessageToStore,
  PutMessageResult,
} from './types.js';

/** Topics whose queue offsets a broker service keeps as its progress (schedule and transaction services). */
const PROGRESS_TOPICS = new Set([SCHEDULE_TOPIC, 'RMQ_SYS_TRANS_HALF_TOPIC', 'RMQ_SYS_TRANS_OP_HALF_TOPIC']);

export class MessageStore {
  readonly storePath: string;
  private readonly o: ResolvedStoreOptions;
  private readonly commitLog: CommitLog;
  private readonly queues: ConsumeQueueTable;
  private readonly reput: ReputMessageService;
  private readonly retention: RetentionService;
  private readonly flushCq: FlushConsumeQueueService;
  /** What the put, read and lookup paths work with. */
  private readonly parts: PutContext;
  private readonly timers: TimerHandle[] = [];
  private running = true;
  private shutdownPromise: Promise<void> | null = null;
  private releaseLock: () => void = () => {};

  private constructor(o: ResolvedStoreOptions) {
    this.o = o;
    this.storePath = o.storePath;
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
    this.queues = new ConsumeQueueTable(
      path.join(o.storePath, CONSUMEQUEUE_DIR),
      o.mappedFileSizeConsumeQueue / CQ_UNIT_SIZE,
      o.logger,
      new OpenFiles(o.maxOpenConsumeQueueFiles),
    );
    this.reput = new ReputMessageService(this.queues, o);
    const isRunning = (): boolean => this.running;
    this.retention = new RetentionService(o, this.commitLog, this.queues, isRunning);
    this.flushCq = new FlushConsumeQueueService(o.storePath, this.commitLog, this.queues, this.reput);
    const retention = this.retention;
    this.parts = {
      o,
      commitLog: this.commitLog,
      queues: this.queues,
      reput: this.reput,
      isRunning,
      isDiskFull: () => retention.isDiskFull(),
    };
  }

  /** Opens (creating if needed) the store at `options.storePath`: takes the lock, recovers, starts timers. */
  static async open(options: MessageStoreOptions): Promise<MessageStore> {
    const o = resolveStoreOptions(options);
    fs.mkdirSync(o.storePath, { recursive: true });
    const store = new MessageStore(o);
    store.releaseLock = acquireLock(o.storePath);
    try {
      recoverStore(store.parts);
      await store.commitLog.flush();
      await store.flushCq.flush();
      store.retention.checkDisk(true);
      store.startTimers();
    } catch (e) {
      store.running = false;
      store.commitLog.closeNow();
      for (const cq of store.queues.all()) cq.close();
      store.releaseLock();
      throw e;
    }
    return store;
  }

  // ---------------------------------------------------------------- put and get

  /** Appends one message; resolves once its bytes are in the file (and fsynced in SYNC_FLUSH). */
  putMessage(msg: MessageToStore): Promise<PutMessageResult> {
    return putMessage(this.parts, msg);
  }

  /**
   * Appends a batch, all or nothing: every message is checked and encoded first, and when one is
   * refused none is stored (each result then carries that refusal, so a producer that retries the
   * batch duplicates nothing). Accepted batches are written together, one record per message.
   */
  putMessages(msgs: MessageToStore[]): Promise<PutMessageResult[]> {
    return putMessages(this.parts, msgs);
  }

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
    void group;
    return getMessage(this.parts, topic, queueId, offset, maxMsgNums, filter);
  }

  /**
   * Registers a listener called for each dispatched record, once the whole batch the record was written
   * with is dispatched (in a microtask after the write); returns the remover.
   */
  onMessageArriving(listener: (a: MessageArrival) => void): () => void {
    return this.reput.onMessageArriving(listener);
  }

  // ---------------------------------------------------------------- queues and lookups

  /**
   * Up to `count` consume-queue units of a queue from `index` (RocketMQ: ConsumeQueue.getIndexBuffer, read
   * by mqadmin queryCq); null when the queue does not exist.
   */
  getConsumeQueueUnits(
    topic: string,
    queueId: number,
    index: number,
    count: number,
  ): { units: Array<{ offsetPy: number; size: number; tagsCode: number }>; min: number; max: number } | null {
    const cq = this.queues.get(topic, queueId);
    if (!cq) return null;
    const units = [];
    for (let i = index; i < index + count; i++) {
      const u = cq.unit(i);
      if (!u) break;
      units.push(u);
    }
    return { units, min: this.getMinOffsetInQueue(topic, queueId), max: this.getMaxOffsetInQueue(topic, queueId) };
  }

  getMinOffsetInQueue(topic: string, queueId: number): number {
    return this.queues.get(topic, queueId)?.minOffset ?? 0;
  }

  /** One past the last message of the queue; 0 for an unknown queue. */
  getMaxOffsetInQueue(topic: string, queueId: number): number {
    return this.queues.get(topic, queueId)?.maxOffset ?? 0;
  }

  /** RocketMQ: getOffsetInQueueByTime: binary search over the records' store times. */
  getOffsetInQueueByTime(
    topic: string,
    queueId: number,
    timestamp: number,
    boundary: BoundaryType = 'LOWER',
  ): Promise<number> {
    return look.getOffsetInQueueByTime(this.parts, topic, queueId, timestamp, boundary);
  }

  /** The store time of the message at a queue offset, or -1 (RocketMQ: getMessageStoreTimeStamp). */
  getMessageStoreTimeStamp(topic: string, queueId: number, queueOffset: number): Promise<number> {
    return look.getMessageStoreTimeStamp(this.parts, topic, queueId, queueOffset);
  }

  /**
   * Deletes the consume queues of a topic (its messages stay in the commit log until retention removes
   * them). RocketMQ: cleanUnusedTopic for one deleted topic. Returns how many queues were deleted.
   */
  deleteTopic(topic: string): number {
    return this.queues.deleteTopic(topic);
  }

  /** The stored bytes of the record at a commit-log offset, or null; nothing about the offset is trusted. */
  lookMessageByOffsetRaw(commitLogOffset: number): Promise<Buffer | null> {
    return look.lookMessageByOffsetRaw(this.parts, commitLogOffset);
  }

  /** The message at a commit-log offset (body as stored, not decompressed), or null. */
  lookMessageByOffset(commitLogOffset: number): Promise<MessageExt | null> {
    return look.lookMessageByOffset(this.parts, commitLogOffset);
  }

  /** The message named by an offset message id (store host + commit-log offset), or null. */
  lookMessageByMsgId(offsetMsgId: string): Promise<MessageExt | null> {
    return look.lookMessageByMsgId(this.parts, offsetMsgId);
  }

  /** Consume-queue file descriptors open now (at most maxOpenConsumeQueueFiles, beyond while pinned). */
  get openConsumeQueueFiles(): number {
    return this.queues.openFiles.size;
  }

  getCommitLogMinOffset(): number {
    return this.commitLog.minOffset;
  }

  getCommitLogMaxOffset(): number {
    return this.commitLog.maxOffset;
  }

  /** Whether the record at `consumeOffset` (or `+ batchSize`) is in memory (RocketMQ: checkInMemByConsumeOffset). */
  checkInMemByConsumeOffset(topic: string, queueId: number, consumeOffset: number, batchSize: number): boolean {
    return look.checkInMemByConsumeOffset(this.parts, topic, queueId, consumeOffset, batchSize);
  }

  // ---------------------------------------------------------------- retention

  /**
   * Deletes expired commit-log segments (RocketMQ: CleanCommitLogService), then moves consume-queue
   * min offsets and deletes their files below (CleanConsumeQueueService). Returns segments deleted.
   */
  deleteExpiredFiles(now: number = this.o.clock.now()): Promise<number> {
    return this.retention.deleteExpiredFiles(now);
  }

  /** Deletes commit-log segments older than fileReservedTimeHours, or the oldest under disk pressure. */
  cleanCommitLog(now: number = this.o.clock.now()): Promise<number> {
    return this.retention.cleanCommitLog(now);
  }

  /** Moves every consume queue's min offset past units whose segment is gone; returns CQ files deleted. */
  cleanConsumeQueues(): number {
    return this.retention.cleanConsumeQueues();
  }

  /**
   * RocketMQ: cleanExpiredConsumerQueue (mqadmin cleanExpiredCQ) — deletes the consume queues whose every
   * message has left the commit log; such a queue starts again at offset 0. The schedule and transaction
   * topics are kept: their services keep their progress as offsets in them, which a restart at 0 would
   * leave pointing past new messages. Returns the deleted queues as `topic@queueId`.
   */
  cleanExpiredConsumeQueues(): string[] {
    return this.queues.cleanExpired(this.commitLog.minOffset, (topic) => PROGRESS_TOPICS.has(topic));
  }

  /**
   * RocketMQ: cleanUnusedTopic (mqadmin cleanUnusedTopic) — deletes the consume queues of every topic that
   * `isUsed` refuses (SCHEDULE_TOPIC_XXXX and RMQ_SYS_TRANS_OP_HALF_TOPIC are always kept); the messages stay
   * in the commit log until retention removes them. Returns the topics cleaned.
   */
  cleanUnusedTopics(isUsed: (topic: string) => boolean): string[] {
    const unused = this.queues
      .topics()
      .filter((t) => !isUsed(t) && t !== SCHEDULE_TOPIC && t !== 'RMQ_SYS_TRANS_OP_HALF_TOPIC');
    for (const topic of unused) this.queues.deleteTopic(topic);
    return unused;
  }

  // ---------------------------------------------------------------- timers and shutdown

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
        this.flushCq.flush().catch((e: unknown) => this.o.logger.error({ err: e }, 'consume queue flush failed'));
      }, this.o.flushIntervalConsumeQueueMs),
    );
    this.timers.push(c.setInterval(() => this.retention.run(), this.o.cleanResourceIntervalMs));
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
    this.reput.clearListeners();
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
    const inFlight = this.flushCq.running;
    if (inFlight) await step('wait flush', () => inFlight);
    await step('consume queues', () => this.flushCq.flush());
    await step('close queues', () => {
      for (const cq of this.queues.all()) cq.close();
    });
    if (failure === null) await step('abort file', () => markClosed(this.storePath));
    await step('lock', () => this.releaseLock());
    if (failure !== null) throw failure;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
