/**
 * The store's consume queues by topic and queue id (RocketMQ: DefaultMessageStore.consumeQueueTable),
 * with the next queue offset of each topic-queue, assigned at append time (RocketMQ: topicQueueTable).
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import { GROUP_MAX_LENGTH, nameProblem } from '../common/names.js';
import { ConsumeQueue } from './consume-queue.js';
import type { OpenFiles } from './open-files.js';

export class ConsumeQueueTable {
  private readonly queues = new Map<string, Map<number, ConsumeQueue>>();
  private readonly queueOffsets = new Map<string, Map<number, number>>();

  constructor(
    /** The consumequeue directory: one subdirectory per topic, one per queue id below it. */
    private readonly rootDir: string,
    private readonly unitsPerFile: number,
    private readonly logger: Logger,
    /** Descriptors of consume-queue files, at most maxOpenConsumeQueueFiles at once. */
    readonly openFiles: OpenFiles,
  ) {}

  /** The consume queue of a topic-queue, or null when the store has none. */
  get(topic: string, queueId: number): ConsumeQueue | null {
    return this.queues.get(topic)?.get(queueId) ?? null;
  }

  /** The consume queue of a topic-queue, created (empty, no file yet) when the store has none. */
  getOrCreate(topic: string, queueId: number): ConsumeQueue {
    let byId = this.queues.get(topic);
    let cq = byId?.get(queueId);
    if (cq) return cq;
    if (!byId) this.queues.set(topic, (byId = new Map()));
    cq = new ConsumeQueue(topic, queueId, this.rootDir, this.unitsPerFile, this.logger, this.openFiles);
    byId.set(queueId, cq);
    return cq;
  }

  /** The next queue offset of each queue of `topic`, by queue id. */
  queueOffsetTable(topic: string): Map<number, number> {
    let t = this.queueOffsets.get(topic);
    if (!t) this.queueOffsets.set(topic, (t = new Map()));
    return t;
  }

  *all(): Generator<ConsumeQueue> {
    for (const byId of this.queues.values()) yield* byId.values();
  }

  /** How many consume queues the store has. */
  count(): number {
    let n = 0;
    for (const byId of this.queues.values()) n += byId.size;
    return n;
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
   * RocketMQ: cleanExpiredConsumerQueue — deletes each queue (outside `keepTopic`) whose last unit points
   * below `commitLogMinOffset` (every message it indexed is gone), and forgets its next queue offset, so
   * the queue starts again at 0. Empty queues are kept. Returns the deleted queues as `topic@queueId`.
   */
  cleanExpired(commitLogMinOffset: number, keepTopic: (topic: string) => boolean): string[] {
    const deleted: string[] = [];
    for (const [topic, byId] of this.queues) {
      if (keepTopic(topic)) continue;
      for (const [queueId, cq] of byId) {
        if (cq.maxOffset <= 0) continue;
        // Retention may already have moved the queue's min offset past every unit (none left to read).
        const last = cq.minOffset >= cq.maxOffset ? null : cq.unit(cq.maxOffset - 1);
        if (last && last.offsetPy >= commitLogMinOffset) continue;
        if (!last && cq.minOffset < cq.maxOffset) continue;
        cq.destroy();
        byId.delete(queueId);
        this.queueOffsets.get(topic)?.delete(queueId);
        deleted.push(`${topic}@${queueId}`);
      }
      if (byId.size === 0) {
        this.queues.delete(topic);
        this.queueOffsets.delete(topic);
      }
    }
    return deleted;
  }

  /** The topics that have consume queues. */
  topics(): string[] {
    return [...this.queues.keys()];
  }

  /** Loads the consume queues found on disk; directories whose names are not a topic or queue id are skipped. */
  load(): void {
    const root = this.rootDir;
    if (!fs.existsSync(root)) return;
    for (const topic of fs.readdirSync(root)) {
      if (nameProblem('topic', topic, GROUP_MAX_LENGTH) !== null) {
        this.logger.warn({ dir: topic }, 'consume queue: directory with an invalid topic name ignored');
        continue;
      }
      for (const q of fs.readdirSync(path.join(root, topic))) {
        if (!/^\d{1,9}$/.test(q)) continue;
        this.getOrCreate(topic, Number(q)).load();
      }
    }
  }
}
