/**
 * PullMessageService (RocketMQ: PullMessageService): a FIFO of PullRequests drained into
 * the consumer's `pullMessage`. Java runs one thread taking from a blocking queue; here a request is
 * "executed" by starting the consumer's async `pullMessage(request)` — the I/O runs concurrently,
 * and the one-pull-per-queue rule holds because every path re-queues the same request exactly once.
 *
 * `executePullRequestLater` owns its timers and clears them at shutdown; a dropped queue's request is
 * never started again; after shutdown nothing is started at all.
 */
import type { Clock, TimerHandle } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { PullRequest } from './pull-request.js';

const UNEXPECTED_ERROR_DELAY_MS = 1000;

export class PullMessageService {
  private readonly queue: PullRequest[] = [];
  private readonly timers = new Set<TimerHandle>();
  /** Pulls started and not ended yet. */
  private running = 0;
  /** Resolved when the last running pull ends, while a shutdown waits for it. */
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;
  private drainScheduled = false;
  private stopped = false;

  constructor(
    private readonly pullMessage: (request: PullRequest) => Promise<void>,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** Queues `request` for a pull as soon as possible. */
  executePullRequestImmediately(request: PullRequest): void {
    if (this.stopped || request.processQueue.dropped) return;
    this.queue.push(request);
    if (!this.drainScheduled) {
      this.drainScheduled = true;
      setImmediate(() => this.drain());
    }
  }

  /** Queues `request` after `delayMs`. */
  executePullRequestLater(request: PullRequest, delayMs: number): void {
    if (this.stopped || request.processQueue.dropped) return;
    if (delayMs <= 0) return this.executePullRequestImmediately(request);
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(handle);
      this.executePullRequestImmediately(request);
    }, delayMs);
    this.timers.add(handle);
  }

  /** Runs `task` after `delayMs` unless the service stops first (RocketMQ: executeTaskLater). */
  executeTaskLater(task: () => void, delayMs: number): void {
    if (this.stopped) return;
    const handle = this.clock.setTimeout(() => {
      this.timers.delete(handle);
      if (!this.stopped) task();
    }, delayMs);
    this.timers.add(handle);
  }

  /** Number of requests waiting (queued or on a timer). */
  get pending(): number {
    return this.queue.length + this.timers.size;
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Stops starting pulls, clears every timer; resolves when the pulls already started have ended. */
  async shutdown(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) this.clock.clearTimeout(t);
    this.timers.clear();
    this.queue.length = 0;
    if (this.running === 0) return;
    if (this.idle === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.idle = { promise, resolve };
    }
    await this.idle.promise;
  }

  /**
   * Starts the pull for `request` in this very turn, without passing through the queue. The pull
   * callback uses it after FOUND so the next request is on the wire before the listener runs
   * (RocketMQ's PullMessageService thread takes it while the consume pool works); never call it
   * from inside a synchronous `pullMessage` path, only after that pull's I/O completed.
   */
  startPullRequestNow(request: PullRequest): void {
    if (this.stopped || request.processQueue.dropped) return;
    this.start(request);
  }

  private drain(): void {
    this.drainScheduled = false;
    const batch = this.queue.splice(0, this.queue.length);
    for (const request of batch) {
      if (this.stopped) return;
      if (request.processQueue.dropped) continue;
      this.start(request);
    }
  }

  private start(request: PullRequest): void {
    this.running++;
    void this.run(request);
  }

  /** One pull; one promise per pull, not a chain of catch and finally handlers. */
  private async run(request: PullRequest): Promise<void> {
    try {
      await this.pullMessage(request);
    } catch (err) {
      // pullMessage handles its own errors; this is a safety net so a queue never stalls silently.
      this.logger.error({ err, mq: request.messageQueue }, 'pullMessage failed unexpectedly; retrying in 1000 ms');
      this.executePullRequestLater(request, UNEXPECTED_ERROR_DELAY_MS);
    } finally {
      if (--this.running === 0 && this.idle !== undefined) {
        this.idle.resolve();
        this.idle = undefined;
      }
    }
  }
}
