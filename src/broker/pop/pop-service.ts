/**
 * POP consumption's broker side that outlives one request (RocketMQ: PopMessageProcessor's queue locks
 * and PopLongPollingService, PopReviveService, MessageRequestModeManager):
 * - the persisted POP state (pop-state.ts);
 * - one lock per (group, topic, queue), so two pops never read the same offset;
 * - long polling: a pop that found nothing waits for a message arriving on its topic or its retry topic;
 * - the revive: a message not acknowledged within its invisible time is written again, with
 *   reconsumeTimes + 1, to the group's POP retry topic `%RETRY%<group>_<topic>`, or to `%DLQ%<group>` once
 *   it was consumed the group's retryMaxTimes times (RocketMQ 5 leaves the DLQ to its proxy; without one,
 *   the broker does it here so a poison message stops coming back).
 */
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { createMessageId } from '../../common/codec/index.js';
import { MessageConst, type MessageExt } from '../../common/message.js';
import { PermName, popRetryTopic } from '../../protocol/index.js';
import type { MessageArrival, MessageStore, MessageToStore } from '../../store/index.js';
import type { BrokerContext } from '../broker-context.js';
import { deadLetterQueueOf, pastMaxReconsumeTimes } from '../processors/dead-letter-queue.js';
import { PopState, entryKey, type InflightEntry } from './pop-state.js';

/** RocketMQ: MessageConst.PROPERTY_POP_CK / PROPERTY_FIRST_POP_TIME. */
export const PROPERTY_POP_CK = 'POP_CK';
export const PROPERTY_FIRST_POP_TIME = '1ST_POP_TIME';
/** RocketMQ: PopAckConstants.retryQueueNum — a POP retry topic has one queue. */
const POP_RETRY_QUEUE_NUMS = 1;

export interface PopServiceOptions {
  storePath: string;
  store: MessageStore;
  clock: Clock;
  logger: Logger;
  /** How often expired invisible times are looked for, ms. */
  reviveIntervalMs: number;
  /** The broker's parts, read when a message is revived. */
  context: () => BrokerContext;
}

interface Waiter {
  topics: ReadonlySet<string>;
  wake: () => void;
}

export class PopService {
  readonly state: PopState;
  private readonly o: PopServiceOptions;
  private readonly locks = new Map<string, Promise<void>>();
  private readonly waiters = new Set<Waiter>();
  /** Messages that arrived per topic since start: a pop compares it before and after looking. */
  private readonly arrivals = new Map<string, number>();
  private readonly unsubscribe: () => void;
  private timer: NodeJS.Timeout | undefined;
  private reviving: Promise<void> | undefined;
  private closed = false;
  private draining = false;

  constructor(options: PopServiceOptions) {
    this.o = options;
    this.state = new PopState(options.storePath, options.logger);
    this.unsubscribe = options.store.onMessageArriving((a) => this.onArrival(a));
  }

  start(): void {
    this.timer = setInterval(() => void this.revive(), this.o.reviveIntervalMs);
    this.timer.unref();
    // Entries that expired while the broker was down are revived at once.
    void this.revive();
  }

  /** Answers every held pop now and holds no new one (the first step of the broker's shutdown). */
  stopPolling(): void {
    this.draining = true;
    for (const w of [...this.waiters]) w.wake();
  }

  /** Stops the revive, refuses further requests and waits for the last write of the state. */
  async shutdown(): Promise<void> {
    this.stopPolling();
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.unsubscribe();
    await this.reviving;
    await this.state.idle();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Whether held pops are being answered for the shutdown. */
  get isDraining(): boolean {
    return this.draining;
  }

  /** Runs `fn` holding the lock of one (group, topic, queue). */
  async withQueueLock<T>(group: string, topic: string, queueId: number, fn: () => Promise<T>): Promise<T> {
    const key = `${group}@${topic}@${queueId}`;
    const before = this.locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chained = before.then(() => mine);
    this.locks.set(key, chained);
    await before;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(key) === chained) this.locks.delete(key);
    }
  }

  arrivalCount(topics: Iterable<string>): number {
    let n = 0;
    for (const t of topics) n += this.arrivals.get(t) ?? 0;
    return n;
  }

  /**
   * Resolves when a message arrives on one of `topics`, after `timeoutMs`, when `signal` aborts or at
   * shutdown; true only for an arrival.
   */
  waitForArrival(topics: ReadonlySet<string>, timeoutMs: number, signal: AbortSignal): Promise<boolean> {
    if (this.draining || signal.aborted || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      let arrived = false;
      const done = (): void => {
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        this.waiters.delete(waiter);
        resolve(arrived);
      };
      const waiter: Waiter = {
        topics,
        wake: () => {
          arrived = !this.draining;
          done();
        },
      };
      const timer = setTimeout(done, timeoutMs);
      signal.addEventListener('abort', done, { once: true });
      this.waiters.add(waiter);
    });
  }

  private onArrival(a: MessageArrival): void {
    this.arrivals.set(a.topic, (this.arrivals.get(a.topic) ?? 0) + 1);
    for (const w of [...this.waiters]) if (w.topics.has(a.topic)) w.wake();
  }

  /** Wakes the pops waiting on `topic` (more messages are left than the last pop took). */
  notify(topic: string): void {
    for (const w of [...this.waiters]) if (w.topics.has(topic)) w.wake();
  }

  /** One pass over the expired entries (RocketMQ: PopReviveService); never two at once. */
  revive(): Promise<void> {
    if (this.closed && !this.reviving) return Promise.resolve();
    this.reviving ??= this.reviveExpired().finally(() => (this.reviving = undefined));
    return this.reviving;
  }

  private async reviveExpired(): Promise<void> {
    const expired = this.state.expired(this.o.clock.now());
    if (expired.length === 0) return;
    let changed = false;
    for (const [key, entry] of expired) {
      if (this.closed) break;
      if (this.state.get(key) !== entry) continue;
      try {
        if (await this.reviveOne(entry)) {
          this.state.remove(key);
          changed = true;
        }
      } catch (e) {
        this.o.logger.warn({ err: e, group: entry.group, topic: entry.storeTopic }, 'pop revive failed; retried later');
      }
    }
    if (changed) await this.state.persist();
  }

  /** Writes the message again (retry topic or DLQ); true when it is done with (also when it is gone). */
  private async reviveOne(entry: InflightEntry): Promise<boolean> {
    const ctx = this.o.context();
    const msg = await this.o.store.lookMessageByOffset(entry.commitLogOffset);
    if (!msg) {
      this.o.logger.warn({ entry }, 'pop revive: the message is no longer in the store; dropped');
      return true;
    }
    const groupConfig = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(entry.group);
    const maxReconsumeTimes = groupConfig?.retryMaxTimes ?? 16;
    const toDlq = pastMaxReconsumeTimes(msg.reconsumeTimes, maxReconsumeTimes);
    const properties: Record<string, string> = { ...(msg.properties ?? {}) };
    delete properties[PROPERTY_POP_CK];
    if (msg.reconsumeTimes === 0 || properties[PROPERTY_FIRST_POP_TIME] === undefined) {
      properties[PROPERTY_FIRST_POP_TIME] = String(entry.popTime);
    }
    let topic: string;
    let queueId = 0;
    if (toDlq) {
      ({ topic, queueId } = deadLetterQueueOf(ctx, entry.group, entry.topic));
      properties[MessageConst.RETRY_TOPIC] ??= entry.topic;
      const origin = properties[MessageConst.ORIGIN_MESSAGE_ID];
      if (origin === undefined || origin.trim() === '') properties[MessageConst.ORIGIN_MESSAGE_ID] = offsetMsgIdOf(msg);
    } else {
      topic = popRetryTopic(entry.topic, entry.group);
      ctx.topicConfigManager.createTopicIfAbsent(topic, POP_RETRY_QUEUE_NUMS, PermName.READ | PermName.WRITE, 0);
    }
    const inner: MessageToStore = {
      topic,
      queueId,
      flag: msg.flag,
      body: msg.body ?? Buffer.alloc(0),
      properties,
      sysFlag: msg.sysFlag,
      bornTimestamp: msg.bornTimestamp,
      bornHost: { ...msg.bornHost },
      reconsumeTimes: msg.reconsumeTimes + 1,
      preparedTransactionOffset: 0,
    };
    const result = await this.o.store.putMessage(inner);
    if (result.status !== 'PUT_OK') {
      this.o.logger.warn({ topic, status: result.status }, 'pop revive: put failed; retried later');
      return false;
    }
    this.o.logger.info(
      { group: entry.group, topic: entry.topic, to: topic, reconsumeTimes: inner.reconsumeTimes },
      toDlq ? 'pop revive: sent to the DLQ' : 'pop revive: redelivered',
    );
    return true;
  }
}

function offsetMsgIdOf(msg: MessageExt): string {
  return msg.offsetMsgId ?? createMessageId(msg.storeHost, msg.commitLogOffset);
}

export { entryKey };

/** The POP service of each broker context (kept beside the context so the context's type needs no POP types). */
const services = new WeakMap<BrokerContext, PopService>();

export function attachPopService(ctx: BrokerContext, service: PopService): void {
  services.set(ctx, service);
}

export function findPopService(ctx: BrokerContext): PopService | undefined {
  return services.get(ctx);
}
