/**
 * The push consumer's periodic tasks, started once it runs and stopped first at shutdown:
 * - RocketMQ's cleanExpiredMsg, for concurrent consumption only: messages consumed for longer than
 *   `consumeTimeoutMinutes` are sent back for a retry (delay level 3) and removed from their
 *   ProcessQueue. An orderly queue's messages stay with their running batch, however long it runs;
 * - the stall watch (`stallTimeoutMs`, ours): a queue that holds messages with no consume progress, or
 *   holds none and is not pulled, is logged and reported once with a `stall` event until it recovers.
 */
import type { TimerHandle } from '../../../common/clock.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import type { ProcessQueue } from '../process-queue.js';
import { cleanExpiredMessages } from './consume-core.js';
import { ConsumeMessageConcurrentlyService } from './consume-message-concurrently-service.js';
import type { StallEvent } from './push-consumer-events.js';
import type { PushConsumerHost } from './push-consumer-run.js';

/** Which queues newly stalled; each is reported once until it moves again. */
export class StallDetector {
  readonly #since = new WeakMap<ProcessQueue, number>();
  readonly #stalled = new WeakSet<ProcessQueue>();

  constructor(readonly stallTimeoutMs: number) {}

  check(queues: Iterable<{ mq: MessageQueue; pq: ProcessQueue }>, now: number): StallEvent[] {
    const out: StallEvent[] = [];
    for (const { mq, pq } of queues) {
      if (pq.dropped) continue;
      let reason: StallEvent['reason'] | undefined;
      let idleMs = 0;
      if (pq.msgCount > 0) {
        let since = this.#since.get(pq);
        if (since === undefined) this.#since.set(pq, (since = now));
        idleMs = now - Math.max(since, pq.lastConsumeTimestamp);
        if (idleMs > this.stallTimeoutMs) reason = 'noConsumeProgress';
      } else {
        this.#since.delete(pq);
        idleMs = now - pq.lastPullTimestamp;
        if (idleMs > this.stallTimeoutMs) reason = 'noPull';
      }
      if (!reason) {
        this.#stalled.delete(pq);
        continue;
      }
      if (this.#stalled.has(pq)) continue;
      this.#stalled.add(pq);
      out.push({ messageQueue: mq, reason, msgCount: pq.msgCount, idleMs });
    }
    return out;
  }
}

export class PushConsumerTasks {
  readonly #timers: TimerHandle[] = [];

  constructor(
    private readonly host: PushConsumerHost,
    /** Resolves false when the message could not be sent back. */
    private readonly sendMessageBack: (msg: MessageExt, delayLevel: number, mq: MessageQueue) => Promise<boolean>,
  ) {}

  start(): void {
    const { clock, consumeTimeoutMinutes, stallTimeoutMs } = this.host.options;
    const consumeTimeoutMs = consumeTimeoutMinutes * 60_000;
    // RocketMQ: ConsumeMessageConcurrentlyService (and only it) runs cleanExpireMsg every consumeTimeout
    // minutes, first after the same delay. Sent back from an orderly queue, a message still being
    // consumed would be consumed again out of order, alongside its running batch.
    if (this.host.run()?.consume instanceof ConsumeMessageConcurrentlyService)
      this.#timers.push(clock.setInterval(() => void this.#cleanExpiredMsg(consumeTimeoutMs), consumeTimeoutMs));
    const locker = this.host.run()?.orderly?.locker;
    if (locker) {
      // RocketMQ: ConsumeMessageOrderlyService renews every queue lock every 20 s (rebalanceLockIntervalMs).
      this.#timers.push(
        clock.setInterval(() => {
          const run = this.host.run();
          if (!run || !this.host.isRunning()) return;
          void locker.lockAll(run.rebalance.processQueueTable.values(), () => clock.now());
        }, this.host.options.rebalanceLockIntervalMs),
      );
    }
    if (stallTimeoutMs > 0) {
      const stalls = new StallDetector(stallTimeoutMs);
      const every = Math.max(1000, Math.floor(stallTimeoutMs / 4));
      this.#timers.push(clock.setInterval(() => this.#checkStalls(stalls), every));
    }
  }

  stop(): void {
    for (const t of this.#timers.splice(0)) this.host.options.clock.clearInterval(t);
  }

  async #cleanExpiredMsg(consumeTimeoutMs: number): Promise<void> {
    const run = this.host.run();
    if (!run || !this.host.isRunning()) return;
    await cleanExpiredMessages(
      run.rebalance.processQueueTable.values(),
      consumeTimeoutMs,
      this.host.options.clock,
      this.sendMessageBack,
      this.host.logger,
    );
  }

  #checkStalls(stalls: StallDetector): void {
    const run = this.host.run();
    if (!run || !this.host.isRunning() || this.host.isPaused()) return;
    const now = this.host.options.clock.now();
    for (const e of stalls.check(run.rebalance.processQueueTable.values(), now)) {
      this.host.logger.warn(
        { mq: e.messageQueue, reason: e.reason, idleMs: e.idleMs, msgCount: e.msgCount },
        'queue stalled',
      );
      this.host.events.emit('stall', e);
    }
  }
}
