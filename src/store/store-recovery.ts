/**
 * MessageStore recovery on open (RocketMQ: DefaultMessageStore.recover): loads the consume queues,
 * cuts their damaged units, verifies the commit log from the checkpoint (or further back when a queue
 * needs it) and re-dispatches the records the consume queues miss.
 */
import { MIN_RECORD_LENGTH } from '../common/codec/index.js';
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueueTable } from './consume-queue-table.js';
import type { ResolvedStoreOptions } from './options.js';
import type { ReputMessageService } from './reput-message-service.js';
import { markOpen, readCheckpoint } from './store-files.js';

/** Segments verified on open after a clean shutdown (RocketMQ: recoverNormally checks the last 3). */
const NORMAL_RECOVERY_SEGMENTS = 3;

/** What recovery works on: the store's parts, before any append or read. */
export interface RecoveryParts {
  o: ResolvedStoreOptions;
  commitLog: CommitLog;
  queues: ConsumeQueueTable;
  reput: ReputMessageService;
}

/**
 * Recovers the store at `o.storePath`: afterwards the commit log ends at its last valid record, every
 * consume queue holds a unit for each of its records and none past the log, and `reput` knows where
 * dispatch stands.
 */
export function recoverStore({ o, commitLog, queues, reput }: RecoveryParts): void {
  const abnormal = markOpen(o.storePath);
  const checkpoint = readCheckpoint(o.storePath);
  queues.load();
  const haveQueues = queues.count() > 0;
  let dispatchFrom = 0;
  let scanFrom = 0;
  let tailSegments = 0;
  if (checkpoint && haveQueues) {
    dispatchFrom = checkpoint.dispatchedOffset;
    scanFrom = Math.min(checkpoint.commitLogFlushedOffset, dispatchFrom);
    // After a clean shutdown RocketMQ re-verifies the last segments; after a crash it starts at the
    // last checkpoint (everything below it was fsynced).
    if (!abnormal) tailSegments = NORMAL_RECOVERY_SEGMENTS;
  }
  const bounds = commitLog.peekBounds();
  if (checkpoint && !haveQueues) {
    // A store that never held a message has no consume queue, and nothing is missing.
    if (bounds.end > bounds.min) o.logger.warn({}, 'consume queues missing: rebuilding them from the commit log');
    else o.logger.debug({}, 'no consume queue and an empty commit log: nothing to rebuild');
  }
  // Consume queues damaged or cut short (by whole units) are rebuilt from the commit log: cut at the
  // first unit that does not fit the log, then re-dispatched from the end of the last unit kept.
  let rebuildFrom = Infinity;
  for (const cq of queues.all()) {
    const cut = cq.validate(bounds.min, bounds.end, commitLog.maxRecordSize, MIN_RECORD_LENGTH);
    if (cut > 0) {
      o.logger.warn(
        { topic: cq.topic, queueId: cq.queueId, unitsCut: cut, keptUnits: cq.maxOffset - cq.minOffset },
        'consume queue: damaged units cut; rebuilding them from the commit log',
      );
      rebuildFrom = Math.min(rebuildFrom, Math.max(bounds.min, cq.maxPhysicOffset));
    } else if (cq.maxPhysicOffset >= bounds.min && cq.maxOffset > cq.minOffset) {
      rebuildFrom = Math.min(rebuildFrom, cq.maxPhysicOffset);
    } else if (cq.maxOffset === 0 && cq.fileCount > 0) {
      // Files without a single unit (cut to nothing): the queue is rebuilt from the start of the log.
      o.logger.warn(
        { topic: cq.topic, queueId: cq.queueId },
        'consume queue: files hold no unit; rebuilding the queue from the commit log',
      );
      rebuildFrom = Math.min(rebuildFrom, bounds.min);
    }
  }
  if (checkpoint && haveQueues && rebuildFrom < dispatchFrom) {
    o.logger.info(
      { from: rebuildFrom, checkpoint: dispatchFrom },
      'recovery: checking consume queues from the end of the oldest',
    );
    dispatchFrom = rebuildFrom;
    scanFrom = Math.min(scanFrom, rebuildFrom);
  }
  o.logger.info({ abnormal, checkpoint, scanFrom, dispatchFrom }, 'message store: recovering');
  const report = commitLog.recover(scanFrom, tailSegments, dispatchFrom, (buf, at, offset) =>
    reput.redispatch(buf, at, offset),
  );
  const end = report.validEnd;
  for (const cq of queues.all()) {
    const cut = cq.truncateDirty(end);
    if (cut > 0)
      o.logger.warn(
        { topic: cq.topic, queueId: cq.queueId, unitsCut: cut, maxOffset: cq.maxOffset },
        'consume queue: units past the commit log cut',
      );
    cq.correctMinOffset(commitLog.minOffset);
    queues.queueOffsetTable(cq.topic).set(cq.queueId, cq.maxOffset);
  }
  if (reput.unitsRedispatched > 0) {
    o.logger.warn({ units: reput.unitsRedispatched, abnormal }, 'consume queues: units restored from the commit log');
  }
  reput.dispatchedOffset = end;
  o.logger.info({ ...report, queues: queues.count() }, 'message store: recovered');
}
