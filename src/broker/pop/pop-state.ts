/**
 * What POP consumption must not lose across a restart (RocketMQ keeps it as checkpoint and ack records in
 * its revive topic; here one JSON file, `config/popState.json`, written atomically by ConfigFile):
 * - one in-flight entry per popped, unacknowledged message: where it is stored, when it was popped and
 *   how long it stays invisible;
 * - the POP consume offset of every (group, topic, queue): the next offset a pop reads;
 * - the message request mode of every (topic, group) set by SET_MESSAGE_REQUEST_MODE.
 *
 * Every change is persisted before the request that made it is answered, so a receipt handle a client
 * holds is known after a restart, and a revived message is not revived again.
 */
import path from 'node:path';
import type { Logger } from '../../common/logger.js';
import type { MessageRequestMode } from '../../protocol/index.js';
import { ConfigFile } from '../config-file.js';

/** One popped, unacknowledged message (RocketMQ: a PopCheckPoint of one message). */
export interface InflightEntry {
  group: string;
  /** The topic the message is stored in (the topic itself or its POP retry topic). */
  storeTopic: string;
  /** The topic the consumer popped. */
  topic: string;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  /** The checkpoint start offset written into the receipt handle. */
  ckOffset: number;
  popTime: number;
  invisibleTime: number;
}

export interface RequestModeEntry {
  topic: string;
  consumerGroup: string;
  mode: MessageRequestMode;
  popShareQueueNum: number;
}

interface Persisted {
  version: 1;
  inflight: InflightEntry[];
  offsets: Record<string, number>;
  requestModes: RequestModeEntry[];
}

const SEP = '\u0001';
export const entryKey = (group: string, storeTopic: string, queueId: number, queueOffset: number): string =>
  `${group}${SEP}${storeTopic}${SEP}${queueId}${SEP}${queueOffset}`;
const offsetKey = (group: string, storeTopic: string, queueId: number): string =>
  `${group}${SEP}${storeTopic}${SEP}${queueId}`;

export class PopState {
  private readonly file: ConfigFile;
  private readonly inflight = new Map<string, InflightEntry>();
  private readonly offsets = new Map<string, number>();
  private readonly modes = new Map<string, RequestModeEntry>();

  constructor(storePath: string, logger: Logger) {
    this.file = new ConfigFile(path.join(storePath, 'config', 'popState.json'), logger);
    const loaded = this.file.load() as Partial<Persisted> | undefined | null;
    for (const e of loaded?.inflight ?? []) {
      this.inflight.set(entryKey(e.group, e.storeTopic, e.queueId, e.queueOffset), e);
    }
    for (const [k, v] of Object.entries(loaded?.offsets ?? {})) this.offsets.set(k, v);
    for (const m of loaded?.requestModes ?? []) this.modes.set(`${m.topic}${SEP}${m.consumerGroup}`, m);
  }

  get(key: string): InflightEntry | undefined {
    return this.inflight.get(key);
  }

  add(e: InflightEntry): void {
    this.inflight.set(entryKey(e.group, e.storeTopic, e.queueId, e.queueOffset), e);
  }

  remove(key: string): boolean {
    return this.inflight.delete(key);
  }

  /** Entries whose invisible time ended at or before `now`, oldest first. */
  expired(now: number): Array<[string, InflightEntry]> {
    const out: Array<[string, InflightEntry]> = [];
    for (const kv of this.inflight) if (kv[1].popTime + kv[1].invisibleTime <= now) out.push(kv);
    return out.sort((a, b) => a[1].popTime + a[1].invisibleTime - (b[1].popTime + b[1].invisibleTime));
  }

  /** Whether another group holds the message at this place (for a clear remark on a foreign handle). */
  heldByOtherGroup(group: string, storeTopic: string, queueId: number, queueOffset: number): boolean {
    const tail = `${SEP}${storeTopic}${SEP}${queueId}${SEP}${queueOffset}`;
    for (const [k, e] of this.inflight) if (e.group !== group && k.endsWith(tail)) return true;
    return false;
  }

  get inflightCount(): number {
    return this.inflight.size;
  }

  /** The POP consume offset, or undefined when the group never popped the queue. */
  popOffset(group: string, storeTopic: string, queueId: number): number | undefined {
    return this.offsets.get(offsetKey(group, storeTopic, queueId));
  }

  setPopOffset(group: string, storeTopic: string, queueId: number, offset: number): void {
    this.offsets.set(offsetKey(group, storeTopic, queueId), offset);
  }

  requestMode(topic: string, group: string): RequestModeEntry | undefined {
    return this.modes.get(`${topic}${SEP}${group}`);
  }

  setRequestMode(m: RequestModeEntry): void {
    this.modes.set(`${m.topic}${SEP}${m.consumerGroup}`, { ...m });
  }

  /** Writes the current state; resolves once it is on disk. */
  persist(): Promise<void> {
    return this.file.persistLatest((): Persisted => ({
      version: 1,
      inflight: [...this.inflight.values()],
      offsets: Object.fromEntries(this.offsets),
      requestModes: [...this.modes.values()],
    }));
  }

  idle(): Promise<void> {
    return this.file.idle();
  }
}
