/**
 * Retention and disk pressure (RocketMQ: DefaultMessageStore.CleanCommitLogService and
 * CleanConsumeQueueService): deletes expired commit-log segments at `deleteWhen` or when the disk is
 * full enough, the oldest ones even when young under pressure, moves the consume queues past what is
 * gone, and tells the put path when the disk is too full to append.
 */
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueueTable } from './consume-queue-table.js';
import type { ResolvedStoreOptions } from './options.js';

/** Segments deleted at most per run under disk pressure (RocketMQ: DELETE_FILES_BATCH_MAX). */
const FORCED_DELETE_MAX = 10;

export class RetentionService {
  private diskFull = false;
  /** Disk usage (percent) at the last check. */
  private diskRatio = 0;
  private diskCheckedAt = -Infinity;

  constructor(
    private readonly o: ResolvedStoreOptions,
    private readonly commitLog: CommitLog,
    private readonly queues: ConsumeQueueTable,
    private readonly isRunning: () => boolean,
  ) {}

  /** Whether appends are refused for a full disk (the usage is re-read at most every diskCheckIntervalMs). */
  isDiskFull(): boolean {
    this.checkDisk(false);
    return this.diskFull;
  }

  /** Re-reads the disk usage at most every diskCheckIntervalMs (always when `force`). */
  checkDisk(force: boolean): void {
    const now = this.o.clock.now();
    if (!force && now - this.diskCheckedAt < this.o.diskCheckIntervalMs) return;
    this.diskCheckedAt = now;
    let ratio = 0;
    try {
      ratio = this.o.diskUsedRatio(this.o.storePath);
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

  /** One run of the cleanResourceIntervalMs timer: deletes expired files at deleteWhen, or at once on a full disk. */
  run(): void {
    this.checkDisk(true);
    if (!this.isTimeToDelete() && this.diskRatio <= this.o.diskMaxUsedSpaceRatio) return;
    if (this.diskRatio > this.o.diskMaxUsedSpaceRatio) {
      this.o.logger.warn(
        { diskUsedPercent: this.diskRatio, limit: this.o.diskMaxUsedSpaceRatio },
        'disk usage over diskMaxUsedSpaceRatio: deleting expired files now',
      );
    }
    this.deleteExpiredFiles().catch((e: unknown) => this.o.logger.error({ err: e }, 'retention failed'));
  }

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
    if (!this.isRunning()) return 0;
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
    if (!this.isRunning()) return 0;
    let n = 0;
    const min = this.commitLog.minOffset;
    for (const cq of this.queues.all()) n += cq.correctMinOffset(min);
    return n;
  }

  private isTimeToDelete(): boolean {
    const hour = new Date(this.o.clock.now()).getHours();
    return this.o.deleteWhen.split(';').some((h) => Number(h) === hour);
  }
}
