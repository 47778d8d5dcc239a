/**
 * ScheduleMessageService: delivers delay-level messages when due (RocketMQ: ScheduleMessageService).
 *
 * A delayed message is stored on SCHEDULE_TOPIC_XXXX, queue level-1 (the transform is in
 * schedule-rules.ts). One delivery task per level reads its queue in order from the level's progress
 * offset; a message is due at its store time plus the level's delay (RocketMQ keeps that time in the
 * consume-queue tags code; we recompute it from the record, so a table with our `ms` unit works whatever
 * table the store was given). A due message is rebuilt (messageTimeUp) and put through the store
 * directly (not through the delay transform again). The task sleeps until the next message is due, or,
 * when its queue is drained, until a new message arrives on it (store arrival listener) — RocketMQ polls
 * every 100 ms instead.
 *
 * Progress, `config/delayOffset.json` (atomic temp + rename + .bak): `offsetTable` level → next queue
 * offset to deliver. Neither loss nor duplicates across a crash: before a batch of due messages is put,
 * an `inflight` record (the batch's queue-offset range and, for every real queue it goes to, the queue's
 * max offset before the puts) is persisted; after the puts, the new offset without the record. On start,
 * a level with an `inflight` record re-reads the batch and the tails of its real queues from those max
 * offsets, and re-puts only the messages not found there (a message counts as found when a record with
 * the same topic, queue, born time and host, flag, reconsumeTimes, body CRC and properties is there).
 * What stays: a producer that sent that very same message twice into that window gets one copy.
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import { systemClock } from '../common/clock.js';
import { decodeMessage } from '../common/codec/index.js';
import { silentLogger, type Logger } from '../common/logger.js';
import { SCHEDULE_TOPIC, type MessageExt } from '../common/message.js';
import type { MessageStore, MessageToStore } from '../store/index.js';
import type { ScheduleMessageServiceApi } from './broker-context.js';
import { ConfigFile } from './config-file.js';
import {
  DEFAULT_MESSAGE_DELAY_LEVEL,
  correctDeliverTimestamp,
  delayLevel2QueueId,
  deliverTimestampOf,
  messageTimeUp,
  parseMessageDelayLevel,
  toScheduleMessage,
} from './schedule-rules.js';

/** What the service needs of the store. */
export type ScheduleStore = Pick<
  MessageStore,
  'getMessage' | 'putMessage' | 'onMessageArriving' | 'getMaxOffsetInQueue'
>;

export interface ScheduleMessageServiceOptions {
  store: ScheduleStore;
  /** Path of the progress file, e.g. `<storePath>/config/delayOffset.json`. */
  progressFile: string;
  /** The delay table. Default RocketMQ's `1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h`; units ms|s|m|h|d. */
  messageDelayLevel?: string;
  clock?: Clock;
  logger?: Logger;
  /** Messages read per step. Default 32. */
  batchSize?: number;
  /** Wait before retrying after a failed put or read, ms. Default 1000. */
  retryDelayMs?: number;
  /** Re-check of a drained level queue, in case an arrival was missed, ms. Default 10000 (RocketMQ's DELAY_FOR_A_PERIOD). */
  idleCheckMs?: number;
}

interface Inflight {
  from: number;
  to: number;
  /** Max offsets of the real queues before the puts. */
  floors: { topic: string; queueId: number; offset: number }[];
}

interface LevelTask {
  level: number;
  queueId: number;
  delayMs: number;
  offset: number;
  inflight: Inflight | undefined;
  timer: TimerHandle | undefined;
  timerAt: number;
  running: Promise<void> | undefined;
  again: boolean;
}

const GROUP = 'SCHEDULE_MESSAGE_SERVICE';

export class ScheduleMessageService implements ScheduleMessageServiceApi {
  /** Delay of each level, ms (index 0 = level 1). */
  readonly delayLevelsMs: readonly number[];
  private readonly store: ScheduleStore;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly file: ConfigFile;
  private readonly batchSize: number;
  private readonly retryDelayMs: number;
  private readonly idleCheckMs: number;
  private readonly tasks: LevelTask[];
  private unsubscribe: (() => void) | undefined;
  private started = false;
  private stopped = false;
  private shutdownPromise: Promise<void> | undefined;

  constructor(options: ScheduleMessageServiceOptions) {
    this.store = options.store;
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.file = new ConfigFile(options.progressFile, this.logger);
    this.batchSize = options.batchSize ?? 32;
    this.retryDelayMs = options.retryDelayMs ?? 1000;
    this.idleCheckMs = options.idleCheckMs ?? 10_000;
    this.delayLevelsMs = Object.freeze(
      parseMessageDelayLevel(options.messageDelayLevel ?? DEFAULT_MESSAGE_DELAY_LEVEL),
    );
    this.tasks = this.delayLevelsMs.map((delayMs, i) => ({
      level: i + 1,
      queueId: delayLevel2QueueId(i + 1),
      delayMs,
      offset: 0,
      inflight: undefined,
      timer: undefined,
      timerAt: Infinity,
      running: undefined,
      again: false,
    }));
  }

  get maxDelayLevel(): number {
    return this.delayLevelsMs.length;
  }

  transformDelayedMessage(msg: MessageToStore): MessageToStore {
    return toScheduleMessage(msg, this.maxDelayLevel);
  }

  /** The next queue offset a level delivers from (tests, stats). */
  getOffset(level: number): number | undefined {
    return this.tasks[level - 1]?.offset;
  }

  /** Loads the progress, finishes a batch a crash interrupted, then starts delivering. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.load();
    this.unsubscribe = this.store.onMessageArriving((a) => {
      if (a.topic !== SCHEDULE_TOPIC) return;
      const task = this.tasks[a.queueId];
      if (task) this.schedule(task, deliverTimestampOf(this.delayLevelsMs, task.level, a.storeTimestamp));
    });
    for (const task of this.tasks) {
      if (task.inflight) await this.recoverInflight(task);
    }
    for (const task of this.tasks) this.schedule(task, this.clock.now());
  }

  /** Stops the tasks, waits for the step in progress, persists the progress. Idempotent. */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= (async () => {
      this.stopped = true;
      this.unsubscribe?.();
      for (const task of this.tasks) {
        if (task.timer !== undefined) this.clock.clearTimeout(task.timer);
        task.timer = undefined;
      }
      await Promise.allSettled(this.tasks.map((t) => t.running));
      if (this.started) await this.persist().catch((e) => this.logger.error({ err: e }, 'delayOffset persist failed'));
    })();
    return this.shutdownPromise;
  }

  // ------------------------------------------------------------------ progress file

  private load(): void {
    const raw = this.file.load();
    if (raw === undefined || raw === null || typeof raw !== 'object') return;
    const { offsetTable, inflight } = raw as { offsetTable?: unknown; inflight?: unknown };
    for (const task of this.tasks) {
      const off = (offsetTable as Record<string, unknown> | undefined)?.[String(task.level)];
      if (typeof off === 'number' && Number.isSafeInteger(off) && off >= 0) task.offset = off;
      const inf = (inflight as Record<string, unknown> | undefined)?.[String(task.level)];
      if (isInflight(inf)) task.inflight = inf;
    }
  }

  private persist(): Promise<void> {
    const offsetTable: Record<string, number> = {};
    const inflight: Record<string, Inflight> = {};
    for (const t of this.tasks) {
      offsetTable[String(t.level)] = t.offset;
      if (t.inflight) inflight[String(t.level)] = t.inflight;
    }
    return this.file.persist({ offsetTable, inflight });
  }

  // ------------------------------------------------------------------ scheduling

  /** Runs the level's task at `at` (or now), unless it is already due to run earlier. */
  private schedule(task: LevelTask, at: number): void {
    if (this.stopped || !this.started) return;
    if (task.running) {
      if (at <= this.clock.now()) task.again = true;
      else if (at < task.timerAt) this.arm(task, at);
      return;
    }
    if (at >= task.timerAt && task.timer !== undefined) return;
    this.arm(task, at);
  }

  private arm(task: LevelTask, at: number): void {
    if (task.timer !== undefined) this.clock.clearTimeout(task.timer);
    task.timerAt = at;
    task.timer = this.clock.setTimeout(
      () => {
        task.timer = undefined;
        task.timerAt = Infinity;
        this.run(task);
      },
      Math.max(0, at - this.clock.now()),
    );
  }

  private run(task: LevelTask): void {
    if (this.stopped) return;
    if (task.running) {
      task.again = true;
      return;
    }
    task.running = this.step(task)
      .then(
        (next) => next,
        (e: unknown) => {
          this.logger.error({ err: e, level: task.level }, 'delayed message delivery failed');
          return this.clock.now() + this.retryDelayMs;
        },
      )
      .then((next) => {
        task.running = undefined;
        if (this.stopped) return;
        if (task.again) {
          task.again = false;
          this.run(task);
        } else if (next !== undefined) this.schedule(task, next);
      });
  }

  /** Delivers what is due; returns when to look again. */
  private async step(task: LevelTask): Promise<number> {
    for (;;) {
      if (this.stopped) return Infinity;
      const res = await this.store.getMessage(GROUP, SCHEDULE_TOPIC, task.queueId, task.offset, this.batchSize, null);
      if (res.status === 'NO_MESSAGE_IN_QUEUE' || res.status === 'OFFSET_OVERFLOW_ONE') {
        return this.clock.now() + this.idleCheckMs;
      }
      if (res.status !== 'FOUND') {
        // RocketMQ: an offset outside the queue is corrected to the queue's bounds and logged.
        if (res.nextBeginOffset === task.offset) return this.clock.now() + this.retryDelayMs;
        this.logger.warn(
          { level: task.level, offset: task.offset, status: res.status, next: res.nextBeginOffset },
          'delay offset corrected',
        );
        task.offset = res.nextBeginOffset;
        await this.persist();
        continue;
      }
      const now = this.clock.now();
      const due: { queueOffset: number; msg: MessageExt }[] = [];
      let nextAt: number | undefined;
      for (let i = 0; i < res.messages.length; i++) {
        const msg = decodeMessage(res.messages[i] as Buffer, 0, { decompressBody: false }).message;
        const at = correctDeliverTimestamp(
          now,
          deliverTimestampOf(this.delayLevelsMs, task.level, msg.storeTimestamp),
          task.delayMs,
        );
        if (at > now) {
          nextAt = at;
          break;
        }
        due.push({ queueOffset: res.queueOffsets[i] ?? msg.queueOffset, msg });
      }
      const end = nextAt === undefined ? res.nextBeginOffset : (due.at(-1)?.queueOffset ?? task.offset - 1) + 1;
      if (due.length > 0 || end !== task.offset) {
        const ok = await this.deliver(task, due, end);
        if (!ok) return this.clock.now() + this.retryDelayMs;
      }
      if (nextAt !== undefined) return nextAt;
    }
  }

  /** Puts `due` (in queue order), moving the level's offset to `end`; false when a put failed. */
  private async deliver(
    task: LevelTask,
    due: { queueOffset: number; msg: MessageExt }[],
    end: number,
  ): Promise<boolean> {
    const rebuilt = due.map((d) => ({ queueOffset: d.queueOffset, inner: messageTimeUp(d.msg) }));
    const floors = new Map<string, { topic: string; queueId: number; offset: number }>();
    for (const { inner } of rebuilt) {
      if (!inner) continue;
      const key = `${inner.topic}\u0000${inner.queueId}`;
      if (!floors.has(key)) {
        floors.set(key, {
          topic: inner.topic,
          queueId: inner.queueId,
          offset: this.store.getMaxOffsetInQueue(inner.topic, inner.queueId),
        });
      }
    }
    if (floors.size > 0) {
      task.inflight = { from: task.offset, to: end, floors: [...floors.values()] };
      await this.persist();
    }
    let reached = end;
    for (const { queueOffset, inner } of rebuilt) {
      if (!inner) {
        this.logger.error({ level: task.level, queueOffset }, 'delayed message without REAL_TOPIC/REAL_QID dropped');
        continue;
      }
      const r = await this.store.putMessage(inner).catch((e: unknown) => {
        this.logger.error({ err: e }, 'delayed message put failed');
        return null;
      });
      if (!r || (r.status !== 'PUT_OK' && r.status !== 'FLUSH_DISK_TIMEOUT')) {
        this.logger.warn(
          { level: task.level, queueOffset, status: r?.status, remark: r?.remark },
          'delayed message not delivered; will retry',
        );
        reached = queueOffset;
        break;
      }
    }
    task.offset = reached;
    task.inflight = undefined;
    await this.persist();
    return reached === end;
  }

  /** Finishes a batch a crash interrupted: re-puts only what its real queues do not hold yet. */
  private async recoverInflight(task: LevelTask): Promise<void> {
    const inflight = task.inflight as Inflight;
    const present = new Map<string, number>();
    for (const f of inflight.floors) {
      const max = this.store.getMaxOffsetInQueue(f.topic, f.queueId);
      for (let off = f.offset; off < max;) {
        const r = await this.store.getMessage(GROUP, f.topic, f.queueId, off, this.batchSize, null);
        if (r.status !== 'FOUND') break;
        for (const b of r.messages) {
          const k = identity(decodeMessage(b, 0, { decompressBody: false }).message);
          present.set(k, (present.get(k) ?? 0) + 1);
        }
        if (r.nextBeginOffset <= off) break;
        off = r.nextBeginOffset;
      }
    }
    const due: { queueOffset: number; msg: MessageExt }[] = [];
    for (let off = inflight.from; off < inflight.to;) {
      const r = await this.store.getMessage(GROUP, SCHEDULE_TOPIC, task.queueId, off, this.batchSize, null);
      if (r.status !== 'FOUND') break;
      r.messages.forEach((b, i) => {
        const queueOffset = r.queueOffsets[i] ?? -1;
        if (queueOffset >= inflight.to) return;
        const msg = decodeMessage(b, 0, { decompressBody: false }).message;
        const inner = messageTimeUp(msg);
        const k = inner ? identity(inner) : '';
        const n = present.get(k) ?? 0;
        if (n > 0) present.set(k, n - 1);
        else if (inner) due.push({ queueOffset, msg });
      });
      if (r.nextBeginOffset <= off) break;
      off = r.nextBeginOffset;
    }
    this.logger.info(
      { level: task.level, ...inflight, redelivered: due.length },
      'interrupted delayed delivery recovered',
    );
    task.inflight = undefined;
    await this.deliver(task, due, inflight.to);
  }
}

function isInflight(v: unknown): v is Inflight {
  if (v === null || typeof v !== 'object') return false;
  const o = v as Record<string, unknown>;
  return (
    Number.isSafeInteger(o.from) &&
    Number.isSafeInteger(o.to) &&
    Array.isArray(o.floors) &&
    o.floors.every(
      (f: unknown) =>
        f !== null &&
        typeof f === 'object' &&
        typeof (f as Record<string, unknown>).topic === 'string' &&
        Number.isSafeInteger((f as Record<string, unknown>).queueId) &&
        Number.isSafeInteger((f as Record<string, unknown>).offset),
    )
  );
}

/** What makes a delivered copy recognisable in its real queue. */
function identity(m: {
  topic: string;
  queueId: number;
  flag: number;
  bornTimestamp: number;
  bornHost: { ip: string; port: number };
  reconsumeTimes: number;
  properties: Record<string, string> | null;
  body: Buffer | null;
}): string {
  const props = Object.entries(m.properties ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return JSON.stringify([
    m.topic,
    m.queueId,
    m.flag,
    m.bornTimestamp,
    m.bornHost.ip,
    m.bornHost.port,
    m.reconsumeTimes,
    props,
    m.body ? m.body.toString('base64') : '',
  ]);
}
