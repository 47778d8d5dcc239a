/**
 * LocalFileOffsetStore (BROADCASTING; RocketMQ's LocalFileOffsetStore): every member keeps
 * its own offsets in a JSON file `<offsetStoreDir>/<clientId>/<group>/offsets.json`.
 *
 * Differences from RocketMQ, on purpose:
 * - the directory is an option (`offsetStoreDir`); the default is `<os.tmpdir()>/rocketmq-ts-offsets`,
 *   never the user's home (RocketMQ writes `~/.rocketmq_offsets`, which breaks read-only containers).
 *   A consumer whose progress must survive a machine reboot should point it at a durable directory;
 * - the file is standard JSON (RocketMQ's fastjson output uses object keys):
 *   `{"offsets":[{"topic":…,"brokerName":…,"queueId":…,"offset":…}]}`;
 * - it is written atomically: temp file + fsync + rename, the previous file kept as `.bak`, which is
 *   read when the main file is missing or corrupt (as RocketMQ does).
 */
import { mkdir, readFile, rename, open, copyFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../common/logger.js';
import type { MessageQueue } from '../../common/message.js';
import { messageQueueKey } from '../../common/message.js';
import { OFFSET_NOT_FOUND, OffsetTableStore, type OffsetPersistedEvent } from './offset-store.js';

interface OffsetFile {
  offsets: { topic: string; brokerName: string; queueId: number; offset: number }[];
}

/** A path component made safe: anything outside `[A-Za-z0-9._@%|-]` becomes `_`, and dots-only names too. */
export function safePathComponent(s: string): string {
  const out = s.replace(/[^A-Za-z0-9._@%|-]/g, '_');
  return /^\.*$/.test(out) ? out.replace(/\./g, '_') || '_' : out;
}

export class LocalFileOffsetStore extends OffsetTableStore {
  readonly filePath: string;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    offsetStoreDir: string,
    clientId: string,
    group: string,
    private readonly logger: Logger,
    private readonly onPersisted: (e: OffsetPersistedEvent) => void = () => {},
  ) {
    super();
    this.filePath = path.join(offsetStoreDir, safePathComponent(clientId), safePathComponent(group), 'offsets.json');
  }

  /** RocketMQ: load — reads the file (or its .bak) into memory. */
  async load(): Promise<void> {
    const file = await this.readFileOffsets();
    for (const e of file?.offsets ?? []) {
      this.table.update({ topic: e.topic, brokerName: e.brokerName, queueId: e.queueId }, e.offset, false);
    }
  }

  /** RocketMQ: READ_FROM_STORE reads the file; no entry gives -1. */
  protected async readOffsetFromStore(mq: MessageQueue): Promise<number> {
    const file = await this.readFileOffsets();
    const key = messageQueueKey(mq);
    const e = file?.offsets.find((o) => messageQueueKey(o) === key);
    if (!e) return OFFSET_NOT_FOUND;
    this.table.update(mq, e.offset, false);
    return e.offset;
  }

  /** RocketMQ: persistAll writes the offsets of `mqs` (the others are left out of the file). */
  async persistAll(mqs: readonly MessageQueue[]): Promise<void> {
    if (mqs.length === 0) return;
    const wanted = new Set(mqs.map(messageQueueKey));
    const offsets: OffsetFile['offsets'] = [];
    for (const [key, e] of this.table.entries) {
      if (wanted.has(key)) offsets.push({ ...e.mq, offset: e.offset.offset });
    }
    await this.write({ offsets });
    for (const o of offsets) {
      this.onPersisted({
        messageQueue: { topic: o.topic, brokerName: o.brokerName, queueId: o.queueId },
        offset: o.offset,
      });
    }
  }

  /** Writes one queue's offset into the file, keeping the other entries. */
  async persist(mq: MessageQueue): Promise<void> {
    const c = this.table.get(mq);
    if (!c) return;
    const offset = c.offset;
    const key = messageQueueKey(mq);
    await this.enqueue(async () => {
      const file = (await this.readFileOffsets()) ?? { offsets: [] };
      const offsets = file.offsets.filter((o) => messageQueueKey(o) !== key);
      offsets.push({ topic: mq.topic, brokerName: mq.brokerName, queueId: mq.queueId, offset });
      await this.writeNow({ offsets });
    });
    this.onPersisted({ messageQueue: { ...mq }, offset });
  }

  /** The file store writes before it resolves: persistAll (a failed write rejects). */
  async flushAll(mqs: readonly MessageQueue[]): Promise<MessageQueue[]> {
    await this.persistAll(mqs);
    return [];
  }

  /** The file store writes before it resolves: persist (a failed write rejects). */
  async flush(mq: MessageQueue): Promise<boolean> {
    await this.persist(mq);
    return true;
  }

  removeOffset(): void {
    // RocketMQ: the local store keeps the entry (the queue may come back after a route change).
  }

  private async readFileOffsets(): Promise<OffsetFile | undefined> {
    const parsed = (await this.tryRead(this.filePath)) ?? (await this.tryRead(`${this.filePath}.bak`));
    return parsed;
  }

  private async tryRead(p: string): Promise<OffsetFile | undefined> {
    let text: string;
    try {
      text = await readFile(p, 'utf8');
    } catch {
      return undefined;
    }
    try {
      const v = JSON.parse(text) as unknown;
      if (!isOffsetFile(v)) throw new Error('unexpected shape');
      return v;
    } catch (err) {
      this.logger.warn({ err, file: p }, 'offset file unreadable; trying the backup');
      return undefined;
    }
  }

  /** Writes are serialized so two persists never interleave their renames. */
  private write(content: OffsetFile): Promise<void> {
    return this.enqueue(() => this.writeNow(content));
  }

  private enqueue(job: () => Promise<void>): Promise<void> {
    const next = this.writing.then(job);
    this.writing = next.catch(() => {});
    return next;
  }

  private async writeNow(content: OffsetFile): Promise<void> {
    await mkdir(path.dirname(this.filePath), { recursive: true });
    const tmp = `${this.filePath}.tmp`;
    const fh = await open(tmp, 'w');
    try {
      await fh.writeFile(JSON.stringify(content, null, 2));
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await copyFile(this.filePath, `${this.filePath}.bak`);
    } catch {
      // no previous file yet
    }
    await rename(tmp, this.filePath);
  }
}

function isOffsetFile(v: unknown): v is OffsetFile {
  if (typeof v !== 'object' || v === null) return false;
  const offsets = (v as { offsets?: unknown }).offsets;
  return (
    Array.isArray(offsets) &&
    offsets.every(
      (o: unknown) =>
        typeof o === 'object' &&
        o !== null &&
        typeof (o as Record<string, unknown>).topic === 'string' &&
        typeof (o as Record<string, unknown>).brokerName === 'string' &&
        Number.isInteger((o as Record<string, unknown>).queueId) &&
        Number.isInteger((o as Record<string, unknown>).offset),
    )
  );
}
