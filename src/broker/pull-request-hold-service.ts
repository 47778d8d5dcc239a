/**
 * PullRequestHoldService (RocketMQ's name): long polling. A pull that found nothing and
 * carries the SUSPEND flag is held under `topic@queueId` and answered
 * - at once when a message arrives on that queue whose tags code (consume-queue stage) and properties
 *   (commit-log stage) match the request's filter — the store announces every dispatched record;
 * - at its suspend timeout (a timer per request; RocketMQ only notices timeouts on its 5 s check, so
 *   an answer could come up to 5 s late — ours comes on time);
 * - on the periodic check (every 5 s, or `shortPollingTimeMills` with long polling off) when the queue
 *   has grown past the request's offset, whatever the message — the safety net.
 * "Answered" means the whole request is run again with suspension disabled (RocketMQ:
 * executeRequestWhenWakeup), so it can neither be held again nor commit its offset a second time.
 * A held request whose client went away is dropped silently. At shutdown every held request is answered.
 */
import type { Clock, TimerHandle } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import { SlotSet } from '../common/slot-set.js';
import type { MessageFilter } from '../store/index.js';
import type { ClientGone } from './client-gone.js';

/** A suspended pull (RocketMQ: PullRequest). */
export interface HeldPullRequest {
  topic: string;
  queueId: number;
  /** The request's queueOffset: any message at or past it may answer the request. */
  pullFromThisOffset: number;
  /** When the request was suspended (clock ms). */
  suspendTimestamp: number;
  /** How long it may be held, ms. */
  timeoutMillis: number;
  filter: MessageFilter;
  /** The client's side: a request whose client went away is dropped, not answered. */
  client: ClientGone;
  /** Runs the request again (no suspension, no commit) and answers the client. Called at most once. */
  wake(): void;
  /** Ends the request without answering (its client is gone). Called at most once. */
  drop(): void;
}

export interface PullRequestHoldServiceOptions {
  /** The queue's current max offset (RocketMQ: store.getMaxOffsetInQueue). */
  maxOffsetInQueue(topic: string, queueId: number): number;
  longPollingEnable: boolean;
  shortPollingTimeMills: number;
  /** Period of the safety-net check when long polling is on, ms (RocketMQ: 5000). */
  checkIntervalMs: number;
  clock: Clock;
  logger: Logger;
}

interface Entry {
  req: HeldPullRequest;
  timer: TimerHandle;
  /** Cancels the client-gone listener. */
  unlisten: () => void;
  done: boolean;
  /** Where the entry sits in its key's SlotSet. */
  slot: number;
}

const TOPIC_QUEUE_SEPARATOR = '@';
const NO_OP = (): void => undefined;

export class PullRequestHoldService {
  /**
   * Held requests per `topic@queueId`. SlotSets, and a key stays while empty (dropped by the periodic
   * check): with long polling every pull is held and woken, and a Map or Set with that churn keeps
   * what passed through it alive across young collections (see SlotSet).
   */
  private readonly table = new Map<string, SlotSet<Entry>>();
  private readonly options: PullRequestHoldServiceOptions;
  private interval: TimerHandle | undefined;
  private stopped = false;

  constructor(options: PullRequestHoldServiceOptions) {
    this.options = options;
  }

  start(): void {
    if (this.interval !== undefined || this.stopped) return;
    const period = this.options.longPollingEnable ? this.options.checkIntervalMs : this.options.shortPollingTimeMills;
    this.interval = this.options.clock.setInterval(() => this.checkHoldRequest(), period);
  }

  /** Number of requests held now. */
  get size(): number {
    let n = 0;
    for (const set of this.table.values()) n += set.size;
    return n;
  }

  /**
   * RocketMQ: suspendPullRequest. When the queue already grew past the request's offset (a message
   * arrived between the read and now), the request is answered at once instead.
   */
  suspendPullRequest(req: HeldPullRequest): void {
    if (this.stopped) {
      req.wake();
      return;
    }
    if (req.client.gone) {
      req.drop();
      return;
    }
    const key = req.topic + TOPIC_QUEUE_SEPARATOR + req.queueId;
    const entry: Entry = {
      req,
      done: false,
      slot: -1,
      unlisten: NO_OP,
      timer: this.options.clock.setTimeout(
        () => this.finish(key, entry, 'wake'),
        Math.max(0, req.suspendTimestamp + req.timeoutMillis - this.options.clock.now()),
      ),
    };
    let set = this.table.get(key);
    if (!set) {
      set = new SlotSet();
      this.table.set(key, set);
    }
    entry.slot = set.add(entry);
    entry.unlisten = req.client.onGone(() => this.finish(key, entry, 'drop'));
    if (this.options.longPollingEnable && this.safeMaxOffset(req.topic, req.queueId) > req.pullFromThisOffset) {
      this.finish(key, entry, 'wake');
    }
  }

  /**
   * RocketMQ: notifyMessageArriving. `tagsCode` and `properties` are null on the periodic check, which
   * matches any filter.
   */
  notifyMessageArriving(
    topic: string,
    queueId: number,
    maxOffset: number,
    tagsCode: number | null,
    properties: Record<string, string> | null,
  ): void {
    const key = topic + TOPIC_QUEUE_SEPARATOR + queueId;
    const set = this.table.get(key);
    if (!set || set.size === 0) return;
    const now = this.options.clock.now();
    for (const entry of set.toArray()) {
      const { req } = entry;
      let newest = maxOffset;
      if (newest <= req.pullFromThisOffset) newest = this.safeMaxOffset(topic, queueId);
      if (newest > req.pullFromThisOffset && this.matches(req.filter, tagsCode, properties)) {
        this.finish(key, entry, 'wake');
      } else if (now >= req.suspendTimestamp + req.timeoutMillis) {
        this.finish(key, entry, 'wake');
      }
    }
  }

  /** The store's arrival announcement (called synchronously right after dispatch). */
  onMessageArriving(
    topic: string,
    queueId: number,
    maxOffset: number,
    tagsCode: number,
    properties: Record<string, string> | null,
  ): void {
    // RocketMQ: the store calls the listener only when long polling is enabled.
    if (!this.options.longPollingEnable) return;
    this.notifyMessageArriving(topic, queueId, maxOffset, tagsCode, properties);
  }

  /** RocketMQ: checkHoldRequest — every key is checked against the queue's current max offset. */
  checkHoldRequest(): void {
    for (const [key, set] of [...this.table]) {
      const first = set.any();
      if (!first) {
        this.table.delete(key);
        continue;
      }
      const { topic, queueId } = first.req;
      this.notifyMessageArriving(topic, queueId, this.safeMaxOffset(topic, queueId), null, null);
    }
  }

  /** Answers every held request and stops the timer. */
  shutdown(): void {
    this.stopped = true;
    if (this.interval !== undefined) this.options.clock.clearInterval(this.interval);
    this.interval = undefined;
    for (const [key, set] of [...this.table]) {
      for (const entry of set.toArray()) this.finish(key, entry, entry.req.client.gone ? 'drop' : 'wake');
    }
  }

  private finish(key: string, entry: Entry, how: 'wake' | 'drop'): void {
    if (entry.done) return;
    entry.done = true;
    this.options.clock.clearTimeout(entry.timer);
    entry.unlisten();
    this.table.get(key)?.delete(entry.slot, entry);
    try {
      if (how === 'wake' && !entry.req.client.gone) entry.req.wake();
      else entry.req.drop();
    } catch (e) {
      this.options.logger.error({ err: e, key }, 'answering a held pull failed');
    }
  }

  private matches(filter: MessageFilter, tagsCode: number | null, properties: Record<string, string> | null): boolean {
    try {
      let match = filter.isMatchedByConsumeQueue(tagsCode);
      if (match && properties !== null) match = filter.isMatchedByCommitLog(null, properties);
      return match;
    } catch (e) {
      this.options.logger.warn({ err: e }, 'filter failed on arrival; answering the held pull');
      return true;
    }
  }

  private safeMaxOffset(topic: string, queueId: number): number {
    try {
      return this.options.maxOffsetInQueue(topic, queueId);
    } catch {
      return 0;
    }
  }
}
