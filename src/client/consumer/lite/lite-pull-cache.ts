/**
 * The LitePullConsumer's buffer (RocketMQ's consumeRequestCache): what the background pulls found, one
 * ConsumeRequest per pull, in arrival order, waiting for `poll` or the async iterator. A request whose
 * queue was sought, paused-and-dropped or taken away is stale and skipped. Callers wait on it with a
 * deadline and an AbortSignal; every push wakes them.
 * @pure
 */
import { onAbort } from '../../../common/abort.js';
import type { Clock } from '../../../common/clock.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import type { ProcessQueue } from '../process-queue.js';
import type { PulledBatch } from '../pulled-batch.js';
import type { PullRequest } from '../pull-request.js';

/** One assigned queue of a LitePullConsumer. */
export interface LiteQueue {
  readonly mq: MessageQueue;
  /** `messageQueueKey(mq)` */
  readonly key: string;
  /** Every message pulled and not yet consumed (buffered or handed out): flow control and the commit offset. */
  readonly pq: ProcessQueue;
  /** The live pull request; a seek replaces it, and results of an older one are dropped. */
  request: PullRequest;
  /** Where consumption has got to: the offset auto-commit and `commit()` commit; -1 while unknown. */
  consumeOffset: number;
  /** A paused queue's pull request, waiting for `resume`. */
  parked: PullRequest | undefined;
}

/** The messages of one pull (RocketMQ's ConsumeRequest). */
export interface ConsumeRequest {
  readonly queue: LiteQueue;
  /** The pull request that fetched them: stale once `queue.request` has moved on (seek). */
  readonly request: PullRequest;
  /** The messages; empty while `batch` holds them raw. */
  readonly messages: MessageExt[];
  /**
   * The pull answer, kept raw in the queue's ProcessQueue until the request is taken: its messages are
   * decoded then, so a message waiting in the buffer costs no object of its own.
   */
  readonly batch?: PulledBatch | undefined;
}

const countOf = (r: ConsumeRequest): number => (r.batch === undefined ? r.messages.length : r.batch.count);

/** `r` with its messages decoded (from its queue's ProcessQueue), or undefined when none is held any more. */
function decoded(r: ConsumeRequest): ConsumeRequest | undefined {
  const batch = r.batch;
  if (batch === undefined) return r;
  const messages: MessageExt[] = [];
  for (let i = 0; i < batch.count; i++) {
    const m = r.queue.pq.handOut(batch.offsetAt(i));
    if (m !== undefined) messages.push(m);
  }
  return messages.length > 0 ? { queue: r.queue, request: r.request, messages } : undefined;
}

/** Whether `r` still belongs to its queue (not sought past, not dropped). */
export function isLive(r: ConsumeRequest): boolean {
  return r.request === r.queue.request && !r.queue.pq.dropped;
}

export class ConsumeRequestCache {
  #items: ConsumeRequest[] = [];
  #messageCount = 0;
  readonly #waiters = new Set<() => void>();

  /** Messages buffered (not yet handed out). */
  get messageCount(): number {
    return this.#messageCount;
  }

  push(r: ConsumeRequest): void {
    this.#items.push(r);
    this.#messageCount += countOf(r);
    this.wakeAll();
  }

  /** Puts messages handed out but not consumed back in front, so they come out next. */
  unshift(r: ConsumeRequest): void {
    this.#items.unshift(r);
    this.#messageCount += countOf(r);
    this.wakeAll();
  }

  /**
   * Takes the oldest live request whose queue `available` accepts, its messages decoded; stale requests
   * met on the way are dropped.
   */
  take(available: (q: LiteQueue) => boolean): ConsumeRequest | undefined {
    const items = this.#items;
    for (let i = 0; i < items.length; i++) {
      const r = items[i] as ConsumeRequest;
      if (!isLive(r)) {
        items.splice(i--, 1);
        this.#messageCount -= countOf(r);
        continue;
      }
      if (!available(r.queue)) continue;
      if (i === 0) items.shift();
      else items.splice(i, 1);
      i--;
      this.#messageCount -= countOf(r);
      const taken = decoded(r);
      if (taken !== undefined) return taken;
    }
    return undefined;
  }

  /** Drops every buffered request of `q`. */
  removeQueue(q: LiteQueue): void {
    this.#items = this.#items.filter((r) => {
      if (r.queue !== q) return true;
      this.#messageCount -= countOf(r);
      return false;
    });
  }

  clear(): void {
    this.#items = [];
    this.#messageCount = 0;
  }

  /** Wakes every waiter (new messages, a resume, shutdown). */
  wakeAll(): void {
    for (const w of [...this.#waiters]) w();
  }

  /** Resolves at the next wake-up, after `timeoutMs`, or when `signal` aborts, whichever is first. */
  wait(timeoutMs: number, clock: Clock, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal?.aborted || timeoutMs <= 0) return resolve();
      const done = (): void => {
        this.#waiters.delete(done);
        clock.clearTimeout(timer);
        unlisten();
        resolve();
      };
      const timer = clock.setTimeout(done, timeoutMs);
      const unlisten = signal ? onAbort(signal, done) : () => {};
      this.#waiters.add(done);
    });
  }
}
