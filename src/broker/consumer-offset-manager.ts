/**
 * ConsumerOffsetManager (RocketMQ's name): committed offsets `topic@group` → queueId → offset,
 * plus the pull-offset table (the last nextBeginOffset served per queue, not persisted).
 *
 * Persisted in `config/consumerOffset.json` every `flushConsumerOffsetIntervalMs` (when something
 * changed) and at shutdown, atomically (config-file.ts). The file is standard JSON — queue-id keys are
 * quoted, unlike RocketMQ's fastjson output:
 * `{"dataVersion": {"counter": n, "timestamp": ms}, "offsetTable": {"TopicTest@g1": {"0": 250, "1": 248}}}`.
 */
import path from 'node:path';
import type { Clock, TimerHandle } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { groupNameProblem, nameProblem } from '../common/names.js';
import { MAX_QUEUE_NUMS } from '../protocol/index.js';
import { ConfigFile, type ConfigLoadSource } from './config-file.js';
import { ConsumeTpsMeter } from './consume-tps-meter.js';

export const TOPIC_GROUP_SEPARATOR = '@';

export interface ConsumerOffsetManagerOptions {
  storePath: string;
  flushConsumerOffsetIntervalMs: number;
  clock: Clock;
  logger: Logger;
}

/** Why a `topic@group` key of the offset table is refused, or null. */
function offsetKeyProblem(key: string): string | null {
  const parts = key.split(TOPIC_GROUP_SEPARATOR);
  if (parts.length !== 2) return 'not <topic>@<group>';
  return nameProblem('topic', parts[0], 255) ?? groupNameProblem(parts[1]);
}

/** RocketMQ: consumerOffsetUpdateVersionStep. */
const VERSION_STEP = 500;

export class ConsumerOffsetManager {
  private readonly offsetTable = new Map<string, Map<number, number>>();
  private readonly pullOffsetTable = new Map<string, Map<number, number>>();
  /** Offsets reset by an administrator, not yet announced to the group's consumers (RocketMQ: resetOffsetTable). */
  private readonly resetOffsetTable = new Map<string, Map<number, number>>();
  private readonly tpsMeter = new ConsumeTpsMeter();
  private readonly file: ConfigFile;
  private readonly options: ConsumerOffsetManagerOptions;
  private dataVersion = { counter: 0, timestamp: 0 };
  private commits = 0;
  private dirty = false;
  private timer: TimerHandle | undefined;

  constructor(options: ConsumerOffsetManagerOptions) {
    this.options = options;
    this.file = new ConfigFile(path.join(options.storePath, 'config', 'consumerOffset.json'), options.logger);
    this.load();
  }

  /** Where the config file was loaded from at start ('none' for a new store, or when it and its .bak are lost). */
  get configLoadedFrom(): ConfigLoadSource {
    return this.file.loadedFrom;
  }

  private load(): void {
    const data = this.file.load();
    if (!data || typeof data !== 'object') return;
    const table = (data as { offsetTable?: unknown }).offsetTable;
    if (table && typeof table === 'object') {
      const dropped: string[] = [];
      for (const [key, queues] of Object.entries(table as Record<string, unknown>)) {
        const problem = offsetKeyProblem(key);
        if (problem !== null || !queues || typeof queues !== 'object') {
          dropped.push(`${key.slice(0, 300)}: ${problem ?? 'not an object'}`);
          continue;
        }
        const m = new Map<number, number>();
        for (const [q, off] of Object.entries(queues as Record<string, unknown>)) {
          const queueId = Number(q);
          // The limits UPDATE_CONSUMER_OFFSET applies: a queue id below MAX_QUEUE_NUMS, a Java long that fits a JS number.
          if (/^\d{1,4}$/.test(q) && queueId < MAX_QUEUE_NUMS && typeof off === 'number' && Number.isSafeInteger(off)) {
            m.set(queueId, off);
          } else {
            dropped.push(`${key.slice(0, 300)} queue ${q.slice(0, 20)}: invalid queue id or offset`);
          }
        }
        this.offsetTable.set(key, m);
      }
      if (dropped.length > 0) {
        this.options.logger.warn(
          { file: this.file.path, dropped: dropped.length, examples: dropped.slice(0, 5) },
          'ignoring invalid consumer offsets on load',
        );
      }
    }
    const dv = (data as { dataVersion?: { counter?: unknown; timestamp?: unknown } }).dataVersion;
    if (dv && typeof dv.counter === 'number') this.dataVersion.counter = dv.counter;
  }

  /** Starts the periodic persistence. */
  start(): void {
    if (this.timer !== undefined) return;
    this.timer = this.options.clock.setInterval(() => {
      if (!this.dirty) return;
      this.persist().catch((e: unknown) =>
        this.options.logger.error({ err: e }, 'persisting consumerOffset.json failed'),
      );
    }, this.options.flushConsumerOffsetIntervalMs);
  }

  /** Stops the timer and writes the table once more. */
  async shutdown(): Promise<void> {
    if (this.timer !== undefined) this.options.clock.clearInterval(this.timer);
    this.timer = undefined;
    await this.persist();
  }

  /**
   * RocketMQ: commitOffset — a plain overwrite; a decrease is only logged (ConsumerOffsetManager.java:200-223).
   * `increaseOnly` (the offset a pull carries): a decrease is ignored. A pull's offset is the consumer's
   * progress when it sent the pull; over HTTP a pull may reach the broker after the UPDATE_CONSUMER_OFFSET
   * with which that consumer handed the queue over, and must not move the group's offset back under the
   * next owner. RocketMQ overwrites here too, with the same race.
   */
  commitOffset(
    clientHost: string,
    group: string,
    topic: string,
    queueId: number,
    offset: number,
    increaseOnly = false,
  ): void {
    const key = topic + TOPIC_GROUP_SEPARATOR + group;
    let m = this.offsetTable.get(key);
    if (!m) {
      m = new Map();
      this.offsetTable.set(key, m);
    }
    const old = m.get(queueId);
    if (increaseOnly && old !== undefined && offset < old) return;
    // RocketMQ: while an administrator's reset is pending for the queue, the consumer's commits are ignored.
    if (this.resetOffsetTable.size > 0 && this.resetOffsetTable.get(key)?.has(queueId) === true) return;
    if (old !== undefined && offset > old) this.tpsMeter.add(group, offset - old, this.options.clock.now());
    if (old !== undefined && offset < old) {
      this.options.logger.warn(
        { clientHost, key, queueId, offset, storeOffset: old },
        '[NOTIFYME]update consumer offset less than store',
      );
    }
    m.set(queueId, offset);
    this.dirty = true;
    if (++this.commits % VERSION_STEP === 0) {
      this.dataVersion = { counter: this.dataVersion.counter + 1, timestamp: this.options.clock.now() };
    }
  }

  /**
   * Moves every committed offset past its queue's end back to the end (after the store's recovery cut
   * a queue short): left there, new messages would take those offsets and the group would skip them.
   * Each correction is logged; returns how many offsets were corrected.
   */
  correctOffsetsPastEnd(maxOffsetOf: (topic: string, queueId: number) => number): number {
    let corrected = 0;
    for (const [key, queues] of this.offsetTable) {
      const at = key.lastIndexOf(TOPIC_GROUP_SEPARATOR);
      const topic = key.slice(0, at);
      const group = key.slice(at + 1);
      for (const [queueId, offset] of queues) {
        const max = maxOffsetOf(topic, queueId);
        if (offset <= max) continue;
        queues.set(queueId, max);
        corrected++;
        this.options.logger.warn(
          { group, topic, queueId, committed: offset, queueMaxOffset: max },
          'consumer offset past the end of its queue corrected to the end',
        );
      }
    }
    if (corrected > 0) this.dirty = true;
    return corrected;
  }

  /** RocketMQ: queryOffset — the committed offset, or -1 when the group has none for the queue. */
  queryOffset(group: string, topic: string, queueId: number): number {
    return this.offsetTable.get(topic + TOPIC_GROUP_SEPARATOR + group)?.get(queueId) ?? -1;
  }

  /** RocketMQ: commitPullOffset — remembers the nextBeginOffset served to the group. */
  commitPullOffset(group: string, topic: string, queueId: number, offset: number): void {
    const key = topic + TOPIC_GROUP_SEPARATOR + group;
    let m = this.pullOffsetTable.get(key);
    if (!m) {
      m = new Map();
      this.pullOffsetTable.set(key, m);
    }
    m.set(queueId, offset);
  }

  /** RocketMQ: queryPullOffset — the pull table first, else the committed offset. */
  queryPullOffset(group: string, topic: string, queueId: number): number {
    return (
      this.pullOffsetTable.get(topic + TOPIC_GROUP_SEPARATOR + group)?.get(queueId) ??
      this.queryOffset(group, topic, queueId)
    );
  }

  /** Every committed offset of a group: topic → queueId → offset. */
  offsetsOfGroup(group: string): Map<string, Map<number, number>> {
    const out = new Map<string, Map<number, number>>();
    const suffix = TOPIC_GROUP_SEPARATOR + group;
    for (const [key, m] of this.offsetTable) {
      if (key.endsWith(suffix)) out.set(key.slice(0, -suffix.length), new Map(m));
    }
    return out;
  }

  /** The topics on which the group has committed offsets (RocketMQ: whichTopicByConsumer). */
  whichTopicByConsumer(group: string): string[] {
    return [...this.offsetsOfGroup(group).keys()];
  }

  /** The groups with committed offsets on the topic (RocketMQ: whichGroupByTopic). */
  whichGroupByTopic(topic: string): string[] {
    const prefix = topic + TOPIC_GROUP_SEPARATOR;
    const groups: string[] = [];
    for (const key of this.offsetTable.keys()) if (key.startsWith(prefix)) groups.push(key.slice(prefix.length));
    return groups;
  }

  /** RocketMQ: removeOffset — forgets every offset of a deleted group; returns the topics affected. */
  removeOffsetsOfGroup(group: string): string[] {
    const suffix = TOPIC_GROUP_SEPARATOR + group;
    const topics: string[] = [];
    for (const table of [this.offsetTable, this.pullOffsetTable, this.resetOffsetTable]) {
      for (const key of [...table.keys()]) {
        if (!key.endsWith(suffix)) continue;
        table.delete(key);
        if (table === this.offsetTable) topics.push(key.slice(0, -suffix.length));
      }
    }
    if (topics.length > 0) this.dirty = true;
    return topics;
  }

  /** RocketMQ: cloneOffset — `destGroup` gets a copy of `srcGroup`'s committed offsets on `topic`. */
  cloneOffset(srcGroup: string, destGroup: string, topic: string): boolean {
    const src = this.offsetTable.get(topic + TOPIC_GROUP_SEPARATOR + srcGroup);
    if (!src) return false;
    this.offsetTable.set(topic + TOPIC_GROUP_SEPARATOR + destGroup, new Map(src));
    this.dirty = true;
    return true;
  }

  /** Forgets every committed offset (and pending reset) on a deleted topic; returns the groups affected. */
  removeOffsetsOfTopic(topic: string): string[] {
    const prefix = topic + TOPIC_GROUP_SEPARATOR;
    const groups: string[] = [];
    for (const table of [this.offsetTable, this.pullOffsetTable, this.resetOffsetTable]) {
      for (const key of [...table.keys()]) {
        if (!key.startsWith(prefix)) continue;
        table.delete(key);
        if (table === this.offsetTable) groups.push(key.slice(prefix.length));
      }
    }
    if (groups.length > 0) this.dirty = true;
    return groups;
  }

  /**
   * RocketMQ: assignResetOffset — commits `offset` for the queue at once and keeps it pending until the
   * group's next pull of the queue takes it (`queryThenEraseResetOffset`); until then the consumers'
   * own commits for the queue are ignored.
   */
  assignResetOffset(topic: string, group: string, queueId: number, offset: number): void {
    const key = topic + TOPIC_GROUP_SEPARATOR + group;
    let m = this.offsetTable.get(key);
    if (!m) this.offsetTable.set(key, (m = new Map()));
    m.set(queueId, offset);
    let r = this.resetOffsetTable.get(key);
    if (!r) this.resetOffsetTable.set(key, (r = new Map()));
    r.set(queueId, offset);
    this.pullOffsetTable.get(key)?.delete(queueId);
    this.dirty = true;
  }

  /** RocketMQ: queryThenEraseResetOffset — the pending reset of a queue, removed; undefined when none. */
  queryThenEraseResetOffset(topic: string, group: string, queueId: number): number | undefined {
    if (this.resetOffsetTable.size === 0) return undefined;
    const key = topic + TOPIC_GROUP_SEPARATOR + group;
    const r = this.resetOffsetTable.get(key);
    const offset = r?.get(queueId);
    if (r === undefined || offset === undefined) return undefined;
    r.delete(queueId);
    if (r.size === 0) this.resetOffsetTable.delete(key);
    return offset;
  }

  /** Messages per second the group committed over the last minute (RocketMQ: consumeTps). */
  consumeTps(group: string): number {
    return this.tpsMeter.tps(group, this.options.clock.now());
  }

  /** Writes the table (coalesced with a write in flight: the table as it is when the write starts). */
  persist(): Promise<void> {
    return this.file
      .persistLatest(() => {
        this.dirty = false;
        const offsetTable: Record<string, Record<string, number>> = {};
        for (const [key, m] of this.offsetTable) offsetTable[key] = Object.fromEntries(m);
        return {
          dataVersion: { ...this.dataVersion, timestamp: this.dataVersion.timestamp || this.options.clock.now() },
          offsetTable,
        };
      })
      .catch((e: unknown) => {
        this.dirty = true; // try again on the next period
        throw e;
      });
  }
}
