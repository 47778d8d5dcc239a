/**
 * ReputMessageService: turns records written to the CommitLog into consume-queue units (RocketMQ:
 * CommitLogDispatcherBuildConsumeQueue) and announces their arrival to held pulls (RocketMQ:
 * MessageArrivingListener). RocketMQ runs it as a thread that follows the log; here a batch is
 * dispatched right after it is written, and recovery re-dispatches the records the consume queues miss.
 */
import { MessageSysFlag, peekRecordFields, tagsHashCode } from '../common/codec/index.js';
import type { Logger } from '../common/logger.js';
import { MessageConst, SCHEDULE_TOPIC } from '../common/message.js';
import { GROUP_MAX_LENGTH, nameProblem } from '../common/names.js';
import type { ConsumeQueueTable } from './consume-queue-table.js';
import { computeDeliverTimestamp } from './delay-levels.js';
import type { MessageArrival, MessageToStore } from './types.js';

export class ReputMessageService {
  /** Every record below this commit-log offset is dispatched (RocketMQ: reputFromOffset). */
  dispatchedOffset = 0;
  /** Store time of the last record written (RocketMQ: StoreCheckpoint.physicMsgTimestamp). */
  physicMsgTimestamp = 0;
  /** Store time of the last record dispatched (RocketMQ: StoreCheckpoint.logicsMsgTimestamp). */
  logicsMsgTimestamp = 0;
  /** Consume-queue units recovery added from the commit log (logged once recovered). */
  unitsRedispatched = 0;
  private readonly listeners = new Set<(a: MessageArrival) => void>();
  /** Arrivals of the batch being written, announced together once it is dispatched. */
  private arrivals: MessageArrival[] = [];

  constructor(
    private readonly queues: ConsumeQueueTable,
    private readonly o: { logger: Logger; delayLevelsMs: readonly number[] },
  ) {}

  /**
   * Called once a record is in the file: moves the dispatched offset past it and, when it takes a place
   * in its queue (`dispatched`), builds its unit.
   */
  written(
    msg: MessageToStore,
    offset: number,
    size: number,
    queueOffset: number,
    storeTimestamp: number,
    dispatched: boolean,
  ): void {
    this.physicMsgTimestamp = storeTimestamp;
    this.dispatchedOffset = offset + size;
    if (dispatched) this.dispatch(msg, offset, size, queueOffset, storeTimestamp);
  }

  /** Builds the consume-queue unit and announces the arrival (RocketMQ: CommitLogDispatcherBuildConsumeQueue). */
  private dispatch(
    msg: MessageToStore,
    offset: number,
    size: number,
    queueOffset: number,
    storeTimestamp: number,
  ): void {
    const cq = this.queues.getOrCreate(msg.topic, msg.queueId);
    const tagsCode = tagsCodeOf(this.o.delayLevelsMs, msg.topic, msg.properties, storeTimestamp);
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

  /** Recovery: puts the unit of the record at `buf[at..]` (commit-log `offset`) back in its queue. */
  redispatch(buf: Buffer, at: number, offset: number): void {
    const f = peekRecordFields(buf, at);
    this.physicMsgTimestamp = f.storeTimestamp;
    const tran = f.sysFlag & MessageSysFlag.TRANSACTION_MASK;
    if (tran === MessageSysFlag.TRANSACTION_PREPARED_TYPE || tran === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) return;
    if (nameProblem('topic', f.topic, GROUP_MAX_LENGTH) !== null) {
      this.o.logger.warn({ offset, topic: f.topic }, 'recovery: record with an invalid topic name not dispatched');
      return;
    }
    const cq = this.queues.getOrCreate(f.topic, f.queueId);
    const tagsCode = tagsCodeOf(this.o.delayLevelsMs, f.topic, f.properties, f.storeTimestamp);
    if (cq.putUnit(f.queueOffset, offset, f.size, tagsCode)) this.unitsRedispatched++;
    this.logicsMsgTimestamp = f.storeTimestamp;
  }

  /**
   * Registers a listener called for each dispatched record, once the whole batch the record was written
   * with is dispatched (in a microtask after the write); returns the remover.
   */
  onMessageArriving(listener: (a: MessageArrival) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Forgets every listener (the store shuts down). */
  clearListeners(): void {
    this.listeners.clear();
  }
}

/**
 * The consume-queue tags code: the delivery time for SCHEDULE_TOPIC_XXXX records with a DELAY level,
 * else Java's hashCode of TAGS (0 without a tag). RocketMQ: CommitLog.checkMessageAndReturnSize.
 */
export function tagsCodeOf(
  delayLevelsMs: readonly number[],
  topic: string,
  props: Record<string, string> | null,
  storeTimestamp: number,
): number {
  const tags = props?.[MessageConst.TAGS];
  if (topic === SCHEDULE_TOPIC && props) {
    const level = Number.parseInt(props[MessageConst.DELAY] ?? '', 10);
    if (level > 0) return computeDeliverTimestamp(delayLevelsMs, level, storeTimestamp);
  }
  return tagsHashCode(tags);
}
