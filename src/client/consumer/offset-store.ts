/**
 * The consumer offset store contract (RocketMQ's OffsetStore), shared by
 * RemoteBrokerOffsetStore (CLUSTERING) and LocalFileOffsetStore (BROADCASTING).
 *
 * readOffset results: ≥ 0 an offset; -1 no offset is known (RocketMQ: QUERY_NOT_FOUND / no entry);
 * -2 the store could not be read (an error other than "not found").
 * @pure
 */
import type { MessageQueue } from '../../common/message.js';
import { messageQueueKey } from '../../common/message.js';

export const ReadOffsetType = Object.freeze({
  READ_FROM_MEMORY: 'READ_FROM_MEMORY',
  READ_FROM_STORE: 'READ_FROM_STORE',
  MEMORY_FIRST_THEN_STORE: 'MEMORY_FIRST_THEN_STORE',
} as const);
export type ReadOffsetType = (typeof ReadOffsetType)[keyof typeof ReadOffsetType];

/** readOffset result: no offset known. */
export const OFFSET_NOT_FOUND = -1;
/** readOffset result: the store could not be read. */
export const OFFSET_READ_ERROR = -2;

/** What `offsetPersisted` reports: a queue's offset written to the broker or the local file. */
export interface OffsetPersistedEvent {
  messageQueue: MessageQueue;
  offset: number;
}

export interface OffsetStore {
  load(): Promise<void>;
  /** Moves the in-memory offset (never backwards with `increaseOnly`); ignored while frozen. */
  updateOffset(mq: MessageQueue, offset: number, increaseOnly: boolean): void;
  /** Sets the offset and blocks later updates until `removeOffset`. */
  updateAndFreezeOffset(mq: MessageQueue, offset: number): void;
  /** The in-memory offset or -1, without I/O. */
  readOffsetFromMemory(mq: MessageQueue): number;
  readOffset(mq: MessageQueue, type: ReadOffsetType): Promise<number>;
  /**
   * Persists the offsets of `mqs`; forgets cached queues not in `mqs`. The broker store sends them
   * oneway (resolves once sent); the file store resolves once the file is written.
   */
  persistAll(mqs: readonly MessageQueue[]): Promise<void>;
  persist(mq: MessageQueue): Promise<void>;
  /**
   * As persistAll, resolving only once the store has the offsets (the broker answered, the file is
   * written), with the queues whose offsets it could not take (the broker store logs and reports each
   * failure; the file store rejects instead).
   */
  flushAll(mqs: readonly MessageQueue[]): Promise<MessageQueue[]>;
  /** As persist, resolving only once the store has the offset: `true`, or `false` when it could not take it. */
  flush(mq: MessageQueue): Promise<boolean>;
  removeOffset(mq: MessageQueue): void;
  /** A copy of the in-memory offsets (all topics, or one topic). */
  cloneOffsetTable(topic?: string): Map<string, { mq: MessageQueue; offset: number }>;
}

/** RocketMQ: ControllableOffset — a value that can be frozen against later updates. */
export class ControllableOffset {
  private frozen = false;
  constructor(private value: number) {}

  get offset(): number {
    return this.value;
  }

  update(target: number, increaseOnly = false): void {
    if (this.frozen) return;
    this.value = increaseOnly ? Math.max(this.value, target) : target;
  }

  updateAndFreeze(target: number): void {
    this.value = target;
    this.frozen = true;
  }
}

/** The in-memory table both stores share. */
export class OffsetTable {
  readonly #entries = new Map<string, { mq: MessageQueue; offset: ControllableOffset }>();
  /**
   * The queue updated last and its offset: a pull's messages commit one after another on one queue,
   * so most updates skip building the key string, which is a visible share of a drain's client CPU.
   */
  #lastMq: MessageQueue | undefined;
  #lastOffset: ControllableOffset | undefined;

  /** Every queue's offset by `messageQueueKey` (change it through the methods, which keep the cache right). */
  get entries(): ReadonlyMap<string, { readonly mq: MessageQueue; readonly offset: ControllableOffset }> {
    return this.#entries;
  }

  get(mq: MessageQueue): ControllableOffset | undefined {
    return this.#entries.get(messageQueueKey(mq))?.offset;
  }

  update(mq: MessageQueue, offset: number, increaseOnly: boolean): void {
    this.entry(mq, offset).update(offset, increaseOnly);
  }

  updateAndFreeze(mq: MessageQueue, offset: number): void {
    this.entry(mq, offset).updateAndFreeze(offset);
  }

  remove(mq: MessageQueue): void {
    this.deleteKey(messageQueueKey(mq));
  }

  /** Forgets the queue stored under `key` (a `messageQueueKey`). */
  deleteKey(key: string): void {
    this.#entries.delete(key);
    this.#lastMq = undefined;
    this.#lastOffset = undefined;
  }

  read(mq: MessageQueue): number {
    return this.get(mq)?.offset ?? OFFSET_NOT_FOUND;
  }

  /** The queue's offset, created at `initial` when the queue has none yet. */
  private entry(mq: MessageQueue, initial: number): ControllableOffset {
    if (mq === this.#lastMq && this.#lastOffset !== undefined) return this.#lastOffset;
    const key = messageQueueKey(mq);
    let e = this.#entries.get(key);
    if (!e) this.#entries.set(key, (e = { mq: { ...mq }, offset: new ControllableOffset(initial) }));
    this.#lastMq = mq;
    this.#lastOffset = e.offset;
    return e.offset;
  }

  clone(topic?: string): Map<string, { mq: MessageQueue; offset: number }> {
    const out = new Map<string, { mq: MessageQueue; offset: number }>();
    for (const [k, e] of this.#entries) {
      if (topic === undefined || e.mq.topic === topic) out.set(k, { mq: { ...e.mq }, offset: e.offset.offset });
    }
    return out;
  }
}

/**
 * The part both stores share: the in-memory offsets and the memory side of readOffset. A subclass
 * says only where offsets are persisted and read from (the broker, or a local file).
 */
export abstract class OffsetTableStore implements OffsetStore {
  protected readonly table = new OffsetTable();

  abstract load(): Promise<void>;
  abstract persistAll(mqs: readonly MessageQueue[]): Promise<void>;
  abstract persist(mq: MessageQueue): Promise<void>;
  abstract flushAll(mqs: readonly MessageQueue[]): Promise<MessageQueue[]>;
  abstract flush(mq: MessageQueue): Promise<boolean>;
  abstract removeOffset(mq: MessageQueue): void;
  /** READ_FROM_STORE: the persisted offset (cached in memory when found), -1 or -2. */
  protected abstract readOffsetFromStore(mq: MessageQueue): Promise<number>;

  updateOffset(mq: MessageQueue, offset: number, increaseOnly: boolean): void {
    this.table.update(mq, offset, increaseOnly);
  }

  updateAndFreezeOffset(mq: MessageQueue, offset: number): void {
    this.table.updateAndFreeze(mq, offset);
  }

  readOffsetFromMemory(mq: MessageQueue): number {
    return this.table.read(mq);
  }

  async readOffset(mq: MessageQueue, type: ReadOffsetType): Promise<number> {
    if (type === ReadOffsetType.READ_FROM_MEMORY) return this.table.read(mq);
    if (type === ReadOffsetType.MEMORY_FIRST_THEN_STORE) {
      const c = this.table.get(mq);
      if (c) return c.offset;
    }
    return this.readOffsetFromStore(mq);
  }

  cloneOffsetTable(topic?: string): Map<string, { mq: MessageQueue; offset: number }> {
    return this.table.clone(topic);
  }
}
