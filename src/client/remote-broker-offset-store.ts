/**
 * RemoteBrokerOffsetStore (CLUSTERING; RocketMQ's RemoteBrokerOffsetStore): offsets live
 * in memory and on the broker. Updates only move forward (`increaseOnly` from the consume path); the
 * broker copy is written every 5 s (persistAll), on queue removal and at shutdown, and also rides on
 * each pull (commit-offset flag). A failed write is logged and retried at the next persist: it is an
 * ordinary call here (RocketMQ sends it oneway), so failures are visible.
 */
import type { Logger } from '../common/logger.js';
import type { MessageQueue } from '../common/message.js';
import { messageQueueKey } from '../common/message.js';
import { OFFSET_NOT_FOUND, OFFSET_READ_ERROR, OffsetTableStore, type OffsetPersistedEvent } from './offset-store.js';

/** The broker calls the store needs; the push consumer adapts MQClientAPI/MQClientInstance to it. */
export interface RemoteOffsetBackend {
  /** QUERY_CONSUMER_OFFSET to the queue's master: the offset, or -1 on QUERY_NOT_FOUND; throws otherwise. */
  queryConsumerOffset(mq: MessageQueue): Promise<number>;
  /** UPDATE_CONSUMER_OFFSET to the queue's master. */
  updateConsumerOffset(mq: MessageQueue, offset: number): Promise<void>;
}

export class RemoteBrokerOffsetStore extends OffsetTableStore {
  constructor(
    private readonly backend: RemoteOffsetBackend,
    private readonly logger: Logger,
    private readonly onPersisted: (e: OffsetPersistedEvent) => void = () => {},
    private readonly onPersistError: (mq: MessageQueue, err: unknown) => void = () => {},
  ) {
    super();
  }

  async load(): Promise<void> {
    // RocketMQ: nothing to load; offsets are read from the broker per queue.
  }

  protected async readOffsetFromStore(mq: MessageQueue): Promise<number> {
    try {
      const brokerOffset = await this.backend.queryConsumerOffset(mq);
      if (brokerOffset < 0) return OFFSET_NOT_FOUND;
      // RocketMQ: a successful store read also caches the value (overwrite).
      this.table.update(mq, brokerOffset, false);
      return brokerOffset;
    } catch (err) {
      this.logger.warn({ err, mq }, 'QUERY_CONSUMER_OFFSET failed');
      return OFFSET_READ_ERROR;
    }
  }

  async persistAll(mqs: readonly MessageQueue[]): Promise<void> {
    const wanted = new Set(mqs.map(messageQueueKey));
    const jobs: Promise<void>[] = [];
    for (const [key, e] of [...this.table.entries]) {
      if (wanted.has(key)) jobs.push(this.send(e.mq, e.offset.offset));
      else this.table.deleteKey(key); // RocketMQ: cached queues not in mqs are forgotten
    }
    await Promise.all(jobs);
  }

  async persist(mq: MessageQueue): Promise<void> {
    const c = this.table.get(mq);
    if (c) await this.send(mq, c.offset);
  }

  removeOffset(mq: MessageQueue): void {
    this.table.remove(mq);
  }

  /** Never rejects: a failed update is logged and reported, and retried by the next persistAll. */
  private async send(mq: MessageQueue, offset: number): Promise<void> {
    try {
      await this.backend.updateConsumerOffset(mq, offset);
      this.onPersisted({ messageQueue: mq, offset });
    } catch (err) {
      this.logger.warn({ err, mq, offset }, 'UPDATE_CONSUMER_OFFSET failed');
      this.onPersistError(mq, err);
    }
  }
}
