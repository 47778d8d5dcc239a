/**
 * FlushConsumeQueueService (RocketMQ's, with StoreCheckpoint): writes consume-queue units to their
 * files, fsyncs them, then records the checkpoint that recovery starts from.
 */
import fs from 'node:fs';
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueueTable } from './consume-queue-table.js';
import type { OpenFile } from './open-files.js';
import type { ReputMessageService } from './reput-message-service.js';
import { writeCheckpoint } from './store-files.js';

/** Consume-queue fsyncs in flight at once during a flush. */
const FLUSH_PARALLEL = 16;

export class FlushConsumeQueueService {
  private flushing: Promise<void> | null = null;
  private lastCheckpoint = '';

  constructor(
    private readonly storePath: string,
    private readonly commitLog: CommitLog,
    private readonly queues: ConsumeQueueTable,
    private readonly reput: ReputMessageService,
  ) {}

  /** The flush running now, or null. */
  get running(): Promise<void> | null {
    return this.flushing;
  }

  /**
   * Writes consume-queue units to their files, fsyncs them, then records the checkpoint: every record
   * below `dispatchedOffset` has its unit on disk. Concurrent calls share one run.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing;
    this.flushing = this.run().finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async run(): Promise<void> {
    const reput = this.reput;
    const dispatched = reput.dispatchedOffset;
    const logicsTs = reput.logicsMsgTimestamp;
    const files: OpenFile[] = [];
    for (const cq of this.queues.all()) files.push(...cq.writePending());
    // A few fsyncs at a time: each pins an open descriptor, and the open set stays within its cap.
    const openFiles = this.queues.openFiles;
    const parallel = Math.max(1, Math.min(FLUSH_PARALLEL, Math.floor(openFiles.max / 4)));
    let next = 0;
    const worker = async (): Promise<void> => {
      for (let f = files[next++]; f; f = files[next++]) {
        await openFiles.withFd(
          f,
          (fd) => new Promise<void>((res, rej) => fs.fdatasync(fd, (e) => (e ? rej(e) : res()))),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(parallel, files.length) }, worker));
    const flushedOffset = this.commitLog.flushedOffset;
    const key = `${dispatched}/${flushedOffset}/${logicsTs}/${reput.physicMsgTimestamp}`;
    if (key === this.lastCheckpoint && files.length === 0) return; // nothing changed: no write, no fsync
    await writeCheckpoint(this.storePath, {
      physicMsgTimestamp: reput.physicMsgTimestamp,
      logicsMsgTimestamp: logicsTs,
      commitLogFlushedOffset: flushedOffset,
      dispatchedOffset: dispatched,
    });
    this.lastCheckpoint = key;
  }
}
