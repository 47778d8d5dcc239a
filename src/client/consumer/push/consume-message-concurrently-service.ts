/**
 * ConsumeMessageConcurrentlyService: pulled messages are cut into batches of
 * `consumeMessageBatchMaxSize`, each batch is one ConsumeRequest run by at most `consumeThreadMax`
 * workers (RocketMQ's fixed thread pool with an unbounded queue). The listener's answer
 * goes through processConsumeResult: failed messages are sent back (CONSUMER_SEND_MSG_BACK, with the
 * plain-SEND fallback inside `sendMessageBack`), and when that fails too they stay in the
 * ProcessQueue — holding the committed offset — and are consumed again locally after 5 s.
 */
import type { ConsumerTelemetry } from '../../telemetry/index.js';
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import { ConsumeConcurrentlyStatus, MessageModel } from '../consumer-constants.js';
import type { MsgTrace } from '../../trace/trace-hooks.js';
import type { OffsetStore } from '../offset-store.js';
import type { ProcessQueue } from '../process-queue.js';
import type { PulledBatch } from '../pulled-batch.js';
import {
  CONSUME_SLICE_MS,
  StartTimeText,
  commitConsumed,
  prepareMessages,
  runListener,
  waitAtMost,
  yieldToIo,
  type ListenerRules,
} from './consume-core.js';

/** RocketMQ: ConsumeConcurrentlyContext.ackIndex default, Integer.MAX_VALUE. */
export const ACK_INDEX_ALL = 2147483647;
/** RocketMQ: failed messages whose send-back also failed are consumed again after 5000 ms. */
export const LOCAL_RECONSUME_DELAY_MS = 5000;

/** How the concurrent service reads its listener's answers. */
export const CONCURRENT_RULES: ListenerRules<ConsumeConcurrentlyStatus> = {
  statuses: [ConsumeConcurrentlyStatus.CONSUME_SUCCESS, ConsumeConcurrentlyStatus.RECONSUME_LATER],
  success: ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
  failure: ConsumeConcurrentlyStatus.RECONSUME_LATER,
  what: 'listener',
};

/** RocketMQ's ConsumeConcurrentlyContext. */
export interface ConsumeConcurrentlyContext {
  readonly messageQueue: MessageQueue;
  /**
   * Delay level for the messages that failed: 0 (default) lets the broker use 3 + reconsumeTimes;
   * -1 sends them straight to the dead-letter queue; a positive level is used as given.
   */
  delayLevelWhenNextConsume: number;
  /**
   * With CONSUME_SUCCESS, messages `[0..ackIndex]` succeeded and the rest are retried. Default
   * 2147483647 (all of them).
   */
  ackIndex: number;
}

/**
 * The listener of a concurrently consuming PushConsumer. What it answers decides the batch:
 *
 * - returns or resolves with nothing (`undefined`): the batch succeeded, as in KafkaJS's `eachMessage`
 *   or Azure Service Bus's `processMessage`;
 * - throws, or returns a promise that rejects: `RECONSUME_LATER` (the batch is retried later through
 *   `%RETRY%<group>`, and lands in `%DLQ%<group>` after `maxReconsumeTimes`);
 * - returns or resolves with a `ConsumeConcurrentlyStatus`: that status (`context.ackIndex` applies to
 *   `CONSUME_SUCCESS`).
 *
 * Any other value (`null`, a string that is not a status) is a listener bug: it is logged and counts as
 * `RECONSUME_LATER`, so no message is lost because of it.
 */
export type MessageListenerConcurrently = (
  messages: MessageExt[],
  context: ConsumeConcurrentlyContext,
) => ConsumeConcurrentlyStatus | void | Promise<ConsumeConcurrentlyStatus | void>;

export interface ConsumeFailureEvent {
  messageQueue: MessageQueue;
  messages: MessageExt[];
  /** The status the listener gave (RECONSUME_LATER for a throw), or CONSUME_SUCCESS with a partial ackIndex. */
  status: ConsumeConcurrentlyStatus;
  /** What the listener threw or rejected with, if it did. */
  error?: unknown;
  /** Messages handed back to the broker for a later retry. */
  sentBack: number;
  /** Messages whose send-back failed: consumed again locally after 5 s. */
  retriedLocally: number;
  /** BROADCASTING: failures are dropped (RocketMQ only logs them). */
  dropped: number;
}

export interface ConsumeServiceDeps {
  consumerGroup: string;
  messageModel: MessageModel;
  consumeThreadMax: number;
  consumeMessageBatchMaxSize: number;
  listener: MessageListenerConcurrently;
  /** OpenTelemetry around each listener call (consume-core's runListener). */
  telemetry?: ConsumerTelemetry | undefined;
  offsetStore: OffsetStore;
  clock: Clock;
  logger: Logger;
  /** Hands one message back (CONSUMER_SEND_MSG_BACK, then the plain-SEND fallback); true when either worked. */
  sendMessageBack(msg: MessageExt, delayLevel: number, mq: MessageQueue): Promise<boolean>;
  onConsumeFailure(e: ConsumeFailureEvent): void;
  /** The consumer's message trace, when `enableMsgTrace` is on. */
  trace?: MsgTrace | undefined;
}

export interface ConsumeShutdownResult {
  /** Listener calls still running when the deadline passed. */
  unfinished: number;
  /** Consume requests queued but not started, dropped (their messages are re-delivered). */
  droppedRequests: number;
}

interface ConsumeRequest {
  msgs: MessageExt[];
  pq: ProcessQueue;
  mq: MessageQueue;
}

/**
 * The messages of one submit (one pull) waiting to be cut into ConsumeRequests. The requests are made
 * when a worker takes them, not at submit: a request made at submit waits in the queue as long as its
 * messages wait in the ProcessQueue (seconds behind a slow listener), long enough to reach V8's old
 * generation, so at batch size 1 every message left two such objects (about 100 bytes) for a full
 * collection to find. Made at take, they die young.
 */
interface PendingSubmit {
  /** The messages, or undefined when they wait raw in `batch` (decoded as they are taken). */
  readonly msgs: readonly MessageExt[] | undefined;
  readonly batch: PulledBatch | undefined;
  readonly count: number;
  /** Index of the first message not yet taken. */
  next: number;
  readonly pq: ProcessQueue;
  readonly mq: MessageQueue;
}

export class ConsumeMessageConcurrentlyService {
  /**
   * RocketMQ's consume pool is a fixed set of `consumeThreadMax` threads taking ConsumeRequests from
   * one unbounded queue. Here up to `consumeThreadMax` async workers are the "threads": each worker
   * takes requests from `requests` until it is empty. A listener that answers synchronously is run to
   * the end without a promise, so one worker serves a whole pull; a listener that returns a pending
   * promise parks its worker, and another worker is started for the requests still waiting. So async
   * listeners run up to `consumeThreadMax` at once, and a sync listener costs no promise, task or
   * microtask per message (at batch size 1 those dominate the consume path). The workers are
   * counted here rather than run as tasks of a p-queue: a queue task per pull (its promises and
   * bookkeeping) costs drain CPU for a pool that never queues.
   */
  private readonly requests: PendingSubmit[] = [];
  private head = 0;
  /** ConsumeRequests (batches) still to be taken from `requests`. */
  private waiting = 0;
  /** Workers started and not finished. */
  private workers = 0;
  /** Resolved when the last worker finishes (shutdown waits for it). */
  private idle: { promise: Promise<void>; resolve: () => void } | undefined;
  /** Workers waiting for an async listener (or its result processing): they take nothing meanwhile. */
  private parked = 0;
  /** Consume requests between take and done. */
  private busy = 0;
  private readonly timers = new Set<TimerHandle>();
  private stopped = false;
  private readonly startTime: StartTimeText;

  constructor(private readonly d: ConsumeServiceDeps) {
    this.startTime = new StartTimeText(d.clock);
  }

  /** Consume requests running now. */
  get running(): number {
    return this.busy;
  }

  /** Consume requests waiting for a slot. */
  get queued(): number {
    return this.waiting;
  }

  /** RocketMQ: submitConsumeRequest — one ConsumeRequest per batch of consumeMessageBatchMaxSize. */
  submitConsumeRequest(msgs: readonly MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    if (this.stopped) return;
    if (msgs.length === 0) return;
    this.requests.push({ msgs, batch: undefined, count: msgs.length, next: 0, pq, mq });
    this.waiting += Math.ceil(msgs.length / this.d.consumeMessageBatchMaxSize);
    this.ensureWorker();
  }

  /**
   * `submitConsumeRequest` for a pull answer kept raw (already put into `pq`): each message is decoded
   * from the ProcessQueue when a worker takes it, so it lives only as long as its consumption.
   */
  submitBatch(batch: PulledBatch, pq: ProcessQueue, mq: MessageQueue): void {
    if (this.stopped || batch.count === 0) return;
    this.requests.push({ msgs: undefined, batch, count: batch.count, next: 0, pq, mq });
    this.waiting += Math.ceil(batch.count / this.d.consumeMessageBatchMaxSize);
    this.ensureWorker();
  }

  /** Starts a worker when requests wait and every started worker is parked (up to consumeThreadMax). */
  private ensureWorker(): void {
    if (this.queued > 0 && this.workers === this.parked && this.workers < this.d.consumeThreadMax) {
      this.workers++;
      void this.worker();
    }
  }

  /** The next ConsumeRequest: up to consumeMessageBatchMaxSize messages of the oldest submit. */
  private take(): ConsumeRequest | undefined {
    const size = this.d.consumeMessageBatchMaxSize;
    while (this.head < this.requests.length) {
      const p = this.requests[this.head] as PendingSubmit;
      const from = p.next;
      const to = Math.min(from + size, p.count);
      p.next = from + size;
      this.waiting--;
      if (p.next >= p.count) {
        this.requests[this.head++] = undefined as unknown as PendingSubmit;
        if (this.head === this.requests.length || this.head > 4096) {
          this.requests.splice(0, this.head);
          this.head = 0;
        }
      }
      if (p.msgs !== undefined)
        return { msgs: size === 1 ? [p.msgs[from] as MessageExt] : p.msgs.slice(from, to), pq: p.pq, mq: p.mq };
      // A dropped queue's messages are not decoded: they would not be consumed.
      if (p.pq.dropped) continue;
      const msgs: MessageExt[] = [];
      const batch = p.batch as PulledBatch;
      for (let i = from; i < to; i++) {
        const m = p.pq.handOut(batch.offsetAt(i));
        if (m !== undefined) msgs.push(m);
      }
      if (msgs.length > 0) return { msgs, pq: p.pq, mq: p.mq };
    }
    return undefined;
  }

  private async worker(): Promise<void> {
    try {
      let sliceStart = this.d.clock.now();
      for (let r = this.take(); r !== undefined && !this.stopped; r = this.take()) {
        this.busy++;
        r.pq.listenerCalls++;
        try {
          const pending = this.consume(r.msgs, r.pq, r.mq);
          if (pending !== undefined) {
            this.parked++;
            this.ensureWorker();
            try {
              await pending;
            } finally {
              this.parked--;
            }
            sliceStart = this.d.clock.now();
          }
        } catch (err) {
          this.d.logger.error({ err, mq: r.mq }, 'a consume request failed unexpectedly');
        } finally {
          this.busy--;
          r.pq.listenerCallEnded();
        }
        // Sync listeners run back to back; after a slice of that, let I/O (pull answers, timers) in.
        if (this.queued > 0 && this.d.clock.now() - sliceStart >= CONSUME_SLICE_MS) {
          await yieldToIo();
          sliceStart = this.d.clock.now();
        }
      }
    } finally {
      if (--this.workers === 0 && this.idle) {
        this.idle.resolve();
        this.idle = undefined;
      }
    }
  }

  /** RocketMQ: submitConsumeRequestLater — after 5 s. */
  private submitConsumeRequestLater(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    if (this.stopped) return;
    const h = this.d.clock.setTimeout(() => {
      this.timers.delete(h);
      this.submitConsumeRequest(msgs, pq, mq);
    }, LOCAL_RECONSUME_DELAY_MS);
    this.timers.add(h);
  }

  /**
   * RocketMQ: ConsumeRequest.run. Never throws. Returns undefined when the request is done, or a
   * promise when the listener (or the handling of a failure) is still running.
   */
  private consume(msgs: MessageExt[], pq: ProcessQueue, mq: MessageQueue): Promise<void> | undefined {
    if (pq.dropped) return undefined;
    prepareMessages(msgs, this.d.consumerGroup, this.startTime.now());
    const context: ConsumeConcurrentlyContext = {
      messageQueue: mq,
      delayLevelWhenNextConsume: 0,
      ackIndex: ACK_INDEX_ALL,
    };
    return runListener(this.d.listener, msgs, context, CONCURRENT_RULES, this.d, mq, (status, error) =>
      this.consumed(status, error, context, msgs, pq, mq),
    );
  }

  /** The listener's status (and what it threw) → processConsumeResult; sync unless something failed. */
  private consumed(
    status: ConsumeConcurrentlyStatus,
    error: unknown,
    context: ConsumeConcurrentlyContext,
    msgs: MessageExt[],
    pq: ProcessQueue,
    mq: MessageQueue,
  ): Promise<void> | undefined {
    // A queue being handed over still takes its results: its final offset is written after them.
    if (pq.dropped && !pq.handingOver) {
      this.d.logger.warn({ mq }, 'queue dropped while consuming: result discarded');
      return undefined;
    }
    try {
      const p = this.processConsumeResult(status, context, msgs, pq, mq, error);
      return p?.catch((err: unknown) => this.d.logger.error({ err, mq }, 'processConsumeResult failed'));
    } catch (err) {
      this.d.logger.error({ err, mq }, 'processConsumeResult failed');
      return undefined;
    }
  }

  /**
   * RocketMQ: processConsumeResult. Done synchronously (undefined) when every message
   * succeeded; a promise while failed messages are being sent back.
   */
  processConsumeResult(
    status: ConsumeConcurrentlyStatus,
    context: ConsumeConcurrentlyContext,
    msgs: MessageExt[],
    pq: ProcessQueue,
    mq: MessageQueue,
    error?: unknown,
  ): Promise<void> | undefined {
    if (msgs.length === 0) return undefined;
    let ackIndex = context.ackIndex;
    if (status === ConsumeConcurrentlyStatus.CONSUME_SUCCESS) {
      if (ackIndex >= msgs.length) ackIndex = msgs.length - 1;
    } else {
      ackIndex = -1;
    }
    const failedFrom = Math.max(ackIndex + 1, 0);
    if (failedFrom >= msgs.length) {
      this.commit(msgs, pq, mq);
      return undefined;
    }
    return this.handleFailures(status, context, msgs, failedFrom, pq, mq, error);
  }

  /** The messages from `failedFrom` on failed: send them back (or drop them in BROADCASTING), then commit. */
  private async handleFailures(
    status: ConsumeConcurrentlyStatus,
    context: ConsumeConcurrentlyContext,
    msgs: MessageExt[],
    failedFrom: number,
    pq: ProcessQueue,
    mq: MessageQueue,
    error: unknown,
  ): Promise<void> {
    let remaining = msgs;
    const failed = msgs.slice(failedFrom);
    const event: ConsumeFailureEvent = {
      messageQueue: mq,
      messages: failed,
      status,
      sentBack: 0,
      retriedLocally: 0,
      dropped: 0,
    };
    if (error !== undefined) event.error = error;
    if (this.d.messageModel === MessageModel.BROADCASTING) {
      for (const msg of failed) this.d.logger.warn({ msgId: msg.msgId, mq }, 'BROADCASTING: consume failed, dropped');
      event.dropped = failed.length;
    } else {
      const backFailed: MessageExt[] = [];
      const results = await Promise.all(
        failed.map(async (msg) => {
          // RocketMQ: skip a message no longer held (expired and already sent back by cleanExpiredMsg).
          if (!pq.containsMessage(msg)) return true;
          return this.d.sendMessageBack(msg, context.delayLevelWhenNextConsume, mq);
        }),
      );
      failed.forEach((msg, i) => {
        if (results[i]) return;
        msg.reconsumeTimes++;
        backFailed.push(msg);
      });
      event.sentBack = failed.length - backFailed.length;
      event.retriedLocally = backFailed.length;
      if (backFailed.length) {
        const back = new Set(backFailed);
        remaining = msgs.filter((m) => !back.has(m));
        this.submitConsumeRequestLater(backFailed, pq, mq);
      }
    }
    this.d.onConsumeFailure(event);
    this.commit(remaining, pq, mq);
  }

  /** Takes the finished messages out of the ProcessQueue and moves the offset to its smallest held one. */
  private commit(done: readonly MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    commitConsumed(pq, mq, done, this.d.clock.now(), this.d.offsetStore, pq.handingOver);
  }

  /**
   * Stops taking work: queued requests are dropped (their messages stay uncommitted and are
   * re-delivered), local-retry timers cleared, and the running listeners are awaited until `deadline`.
   */
  async shutdown(deadline: number): Promise<ConsumeShutdownResult> {
    this.stopped = true;
    for (const t of this.timers) this.d.clock.clearTimeout(t);
    this.timers.clear();
    const droppedRequests = this.queued;
    this.requests.length = 0;
    this.head = 0;
    this.waiting = 0;
    const left = deadline - this.d.clock.now();
    if (this.workers > 0 && left > 0) {
      if (!this.idle) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        this.idle = { promise, resolve };
      }
      await waitAtMost(this.idle.promise, left, this.d.clock);
    }
    return { unfinished: this.busy, droppedRequests };
  }
}
