/**
 * The offsets of a LitePullConsumer (RocketMQ: DefaultLitePullConsumerImpl's commit and seek side).
 * `poll` marks what it hands out consumed; auto-commit (at most every `autoCommitIntervalMs`, checked on
 * each poll and on the client's offset persistence) moves each held queue's committed offset in the
 * offset store to its consumed one, and `commit()` does it on demand and writes at once. `seek` moves a
 * held queue within its stored range: its buffer and pull in flight are dropped and it pulls again from
 * there, as it does when the broker resets the group's offsets. Where a queue with no committed offset
 * starts is `computePullFromWhere`, as for the push consumer.
 */
import { InvalidArgumentError, RocketMQError } from '../../../common/errors.js';
import { messageQueueKey, type MessageQueue } from '../../../common/message.js';
import { computePullFromWhere } from '../compute-pull-from-where.js';
import { MessageModel } from '../consumer-constants.js';
import { ReadOffsetType } from '../offset-store.js';
import { createPullRequest } from '../pull-request.js';
import type { LiteAssignment } from './lite-pull-assignment.js';
import type { ConsumeRequestCache, LiteQueue } from './lite-pull-cache.js';
import { OffsetOutOfRangeError } from './lite-pull-errors.js';
import { checkOffset, checkQueue, queueName, type LiteCore, type LiteRun } from './lite-pull-core.js';

/** Offsets for `commit(offsets)`: a Map or pairs of queue and offset (the next offset to consume). */
export type CommitOffsets = Iterable<readonly [MessageQueue, number]>;

export class LiteOffsets {
  #lastAutoCommit: number;
  readonly #core: LiteCore;
  readonly #cache: ConsumeRequestCache;
  readonly #assignment: LiteAssignment;

  constructor(core: LiteCore, cache: ConsumeRequestCache, assignment: LiteAssignment) {
    this.#core = core;
    this.#cache = cache;
    this.#assignment = assignment;
    this.#lastAutoCommit = core.options.clock.now();
  }

  maybeAutoCommit(): void {
    const now = this.#core.options.clock.now();
    if (now - this.#lastAutoCommit < this.#core.options.autoCommitIntervalMs) return;
    this.#lastAutoCommit = now;
    this.commitAll();
  }

  /** RocketMQ: commitAll — every assigned queue's consumed offset into the offset store (memory). */
  commitAll(): void {
    const store = this.#core.run()?.offsetStore;
    if (!store) return;
    for (const q of this.#assignment.queues.values())
      if (q.consumeOffset >= 0) store.updateOffset(q.mq, q.consumeOffset, false);
  }

  async commit(offsets: CommitOffsets | undefined): Promise<void> {
    const run = this.#core.running('commit');
    let queues: MessageQueue[];
    if (offsets === undefined) {
      this.commitAll();
      queues = this.#assignment.assignedQueues();
    } else {
      const list = [...offsets].map(([mq, offset], i) => {
        checkQueue(mq, `offsets[${i}]`);
        checkOffset(offset, `offsets[${i}]`);
        return [mq, offset] as const;
      });
      for (const [mq, offset] of list) run.offsetStore.updateOffset(mq, offset, false);
      queues = list.map(([mq]) => mq);
    }
    await this.persistNow(run, queues);
  }

  /** Writes the offsets of `queues` to the broker now (BROADCASTING: every held queue's, to the local file). */
  async persistNow(run: LiteRun, queues: readonly MessageQueue[]): Promise<void> {
    const o = this.#core.options;
    if (o.messageModel === MessageModel.BROADCASTING) {
      await run.offsetStore.persistAll(this.#assignment.assignedQueues());
      return;
    }
    const { instance, offsetStore } = run;
    await Promise.all(
      queues.map(async (mq) => {
        const offset = offsetStore.readOffsetFromMemory(mq);
        if (offset < 0) return;
        const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
        await instance.api.updateConsumerOffset(brokerAddr, {
          consumerGroup: o.consumerGroup,
          topic: mq.topic,
          queueId: mq.queueId,
          commitOffset: offset,
          bname: mq.brokerName,
        });
        this.#core.events.emit('offsetPersisted', { messageQueue: { ...mq }, offset });
      }),
    );
  }

  async committed(mq: MessageQueue): Promise<number> {
    checkQueue(mq);
    const run = this.#core.running('committed');
    const offset = await run.offsetStore.readOffset(mq, ReadOffsetType.MEMORY_FIRST_THEN_STORE);
    if (offset === -2)
      throw new RocketMQError('ERR_OFFSET_READ', `reading the committed offset of ${queueName(mq)} failed`, {
        retriable: true,
      });
    return offset;
  }

  /** Where a queue with no offset of this consumer starts: its committed offset, else `consumeFromWhere`. */
  async computePullFromWhere(mq: MessageQueue): Promise<number> {
    const { instance, offsetStore } = this.#core.running('computePullFromWhere');
    const o = this.#core.options;
    return computePullFromWhere(mq, {
      consumeFromWhere: o.consumeFromWhere,
      consumeTimestamp: o.consumeTimestamp,
      readOffsetFromStore: (q) => offsetStore.readOffset(q, ReadOffsetType.READ_FROM_STORE),
      maxOffset: async (q) => instance.api.getMaxOffset((await instance.findBrokerAddressForQueue(q)).brokerAddr, q),
      searchOffset: async (q, ts) =>
        instance.api.searchOffset((await instance.findBrokerAddressForQueue(q)).brokerAddr, q, ts),
    });
  }

  async seek(mq: MessageQueue, offset: number): Promise<void> {
    checkQueue(mq);
    checkOffset(offset);
    const q = this.#assignment.heldQueue(mq, 'seek');
    const [min, max] = await Promise.all([this.#minOffset(mq), this.#maxOffset(mq)]);
    if (offset < min || offset > max) throw new OffsetOutOfRangeError(mq, offset, min, max);
    this.#seekTo(this.#assignment.heldQueue(mq, 'seek', q), offset);
  }

  async seekToBegin(mq: MessageQueue): Promise<void> {
    checkQueue(mq);
    const q = this.#assignment.heldQueue(mq, 'seekToBegin');
    const min = await this.#minOffset(mq);
    this.#seekTo(this.#assignment.heldQueue(mq, 'seekToBegin', q), min);
  }

  async seekToEnd(mq: MessageQueue): Promise<void> {
    checkQueue(mq);
    const q = this.#assignment.heldQueue(mq, 'seekToEnd');
    const max = await this.#maxOffset(mq);
    this.#seekTo(this.#assignment.heldQueue(mq, 'seekToEnd', q), max);
  }

  async offsetForTimestamp(mq: MessageQueue, timestamp: number): Promise<number> {
    checkQueue(mq);
    if (!Number.isSafeInteger(timestamp))
      throw new InvalidArgumentError('timestamp', 'must be an integer (ms since the epoch)');
    const { instance } = this.#core.running('offsetForTimestamp');
    const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
    return instance.api.searchOffset(brokerAddr, mq, timestamp);
  }

  async #minOffset(mq: MessageQueue): Promise<number> {
    const { instance } = this.#core.running('seek');
    return instance.api.getMinOffset((await instance.findBrokerAddressForQueue(mq)).brokerAddr, mq);
  }

  async #maxOffset(mq: MessageQueue): Promise<number> {
    const { instance } = this.#core.running('seek');
    return instance.api.getMaxOffset((await instance.findBrokerAddressForQueue(mq)).brokerAddr, mq);
  }

  /**
   * RESET_CONSUMER_CLIENT_OFFSET: each held queue of the broker's table seeks to its new offset, which
   * is its committed offset too (what is buffered or on its way for it is dropped).
   */
  resetOffset(topic: string, offsetTable: ReadonlyArray<readonly [MessageQueue, number]>): void {
    const run = this.#core.run();
    if (!run) return;
    for (const [mq, offset] of offsetTable) {
      const q = mq.topic === topic ? this.#assignment.queues.get(messageQueueKey(mq)) : undefined;
      if (!q || q.pq.dropped) continue;
      run.offsetStore.updateOffset(q.mq, offset, false);
      this.#seekTo(q, offset);
    }
  }

  /** Drops the queue's buffer and in-flight pull, and pulls again from `offset`. */
  #seekTo(q: LiteQueue, offset: number): void {
    const run = this.#core.running('seek');
    this.#cache.removeQueue(q);
    q.pq.clear();
    const req = createPullRequest(this.#core.options.consumerGroup, q.mq, q.pq, offset);
    this.#assignment.replaceRequest(q, req);
    q.consumeOffset = offset;
    run.pulls.executePullRequestImmediately(req);
  }
}
