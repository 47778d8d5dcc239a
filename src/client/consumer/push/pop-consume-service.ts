/**
 * ConsumeMessagePopConcurrentlyService: popped messages are cut into batches of
 * `consumeMessageBatchMaxSize`, each batch runs the concurrent listener (through the consume core, with
 * the concurrent service's reading of its answers) on at most `consumeThreadMax` workers. Successes are
 * acknowledged together once the listener calls of the moment have answered (one BATCH_ACK_MESSAGE
 * per broker instead of an ACK_MESSAGE per message); a failure changes the message's invisible time to the retry delay of its
 * level, so the broker's revive delivers it again with reconsumeTimes + 1, and a message that has
 * failed `maxReconsumeTimes` times is sent to `%DLQ%<group>` and acknowledged. A batch whose invisible
 * time ran out before its listener ended is left alone: the broker has already handed it out again.
 */
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import { ConsumeConcurrentlyStatus } from '../consumer-constants.js';
import type { PoppedMessage } from '../pop-api-wrapper.js';
import {
  ACK_INDEX_ALL,
  CONCURRENT_RULES,
  type ConsumeConcurrentlyContext,
  type ConsumeFailureEvent,
  type MessageListenerConcurrently,
} from './consume-message-concurrently-service.js';
import { StartTimeText, prepareMessages, runListener, waitAtMost } from './consume-core.js';

/** One POP assignment (RocketMQ's PopProcessQueue): a topic's queue, or all of them (-1), on one broker. */
export interface PopProcessQueue {
  readonly mq: MessageQueue;
  /** Set when the assignment is given up or the consumer stops: its pop loop ends. */
  dropped: boolean;
  /** Messages popped and neither acknowledged nor handed back yet (the flow-control count). */
  waitAckCount: number;
  lastPopTimestamp: number;
}

export interface PopConsumeServiceDeps {
  consumerGroup: string;
  consumeThreadMax: number;
  consumeMessageBatchMaxSize: number;
  /** Failures after which a message goes to the dead-letter queue. */
  maxReconsumeTimes: number;
  /** The retry delay of each level, ms; levels past the end take the last one. */
  retryDelaysMs: readonly number[];
  listener: MessageListenerConcurrently;
  clock: Clock;
  logger: Logger;
  /** Acknowledges messages (from any brokers: ACK_MESSAGE for one, BATCH_ACK_MESSAGE for several). */
  ack(popped: readonly PoppedMessage[]): Promise<void>;
  changeInvisibleTime(popped: PoppedMessage, invisibleTimeMs: number): Promise<void>;
  /** CONSUMER_SEND_MSG_BACK with delay level -1. */
  sendToDeadLetterQueue(msg: MessageExt, mq: MessageQueue): Promise<void>;
  onConsumeFailure(e: ConsumeFailureEvent): void;
}

export interface PopConsumeShutdownResult {
  /** Listener calls still running when the deadline passed. */
  unfinished: number;
  /** Batches queued but not started: the broker delivers them again after their invisible time. */
  droppedRequests: number;
  /** Acknowledgements and invisible-time changes still in flight when the deadline passed. */
  unsettledAcks: number;
}

interface ConsumeRequest {
  popped: PoppedMessage[];
  pq: PopProcessQueue;
}

/** The receipt handle's pop time plus invisible time: after it the broker may deliver the message again. */
function visibleAgainAt(p: PoppedMessage): number {
  return p.handle.popTime + p.handle.invisibleTime;
}

export class PopConsumeService {
  readonly #d: PopConsumeServiceDeps;
  readonly #requests: ConsumeRequest[] = [];
  #workers = 0;
  #busy = 0;
  #stopped = false;
  /** Acknowledgements, invisible-time changes and dead-letter sends in flight. */
  readonly #settling = new Set<Promise<void>>();
  readonly #startTime: StartTimeText;
  /** Successes waiting for the next acknowledgement flush. */
  #acks: Array<{ p: PoppedMessage; mq: MessageQueue }> = [];
  #ackFlushScheduled = false;
  #idle: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(deps: PopConsumeServiceDeps) {
    this.#d = deps;
    this.#startTime = new StartTimeText(deps.clock);
  }

  /** Listener calls running now. */
  get running(): number {
    return this.#busy;
  }

  /** RocketMQ: submitPopConsumeRequest — one request per batch of consumeMessageBatchMaxSize. */
  submit(popped: readonly PoppedMessage[], pq: PopProcessQueue): void {
    if (this.#stopped || popped.length === 0) return;
    const size = this.#d.consumeMessageBatchMaxSize;
    for (let i = 0; i < popped.length; i += size) this.#requests.push({ popped: popped.slice(i, i + size), pq });
    while (this.#workers < this.#d.consumeThreadMax && this.#workers < this.#requests.length + this.#busy) {
      this.#workers++;
      void this.#worker();
    }
  }

  async #worker(): Promise<void> {
    try {
      for (let r = this.#requests.shift(); r !== undefined && !this.#stopped; r = this.#requests.shift()) {
        this.#busy++;
        try {
          await this.#consume(r);
        } catch (err) {
          this.#d.logger.error({ err, mq: r.pq.mq }, 'a POP consume request failed unexpectedly');
        } finally {
          this.#busy--;
        }
      }
    } finally {
      if (--this.#workers === 0 && this.#idle) this.#idle.resolve();
    }
  }

  /** RocketMQ: ConsumeMessagePopConcurrentlyService.ConsumeRequest.run. */
  async #consume({ popped, pq }: ConsumeRequest): Promise<void> {
    const d = this.#d;
    const first = popped[0] as PoppedMessage;
    if (d.clock.now() >= visibleAgainAt(first)) {
      pq.waitAckCount -= popped.length;
      d.logger.info(
        { mq: pq.mq, count: popped.length },
        'popped messages expired before consumption: left to the broker',
      );
      return;
    }
    const msgs = popped.map((p) => p.message);
    prepareMessages(msgs, d.consumerGroup, this.#startTime.now());
    const mq: MessageQueue = {
      topic: first.message.topic,
      brokerName: pq.mq.brokerName,
      queueId: first.message.queueId,
    };
    const context: ConsumeConcurrentlyContext = {
      messageQueue: mq,
      delayLevelWhenNextConsume: 0,
      ackIndex: ACK_INDEX_ALL,
    };
    const [status, error] = await runListener(d.listener, msgs, context, CONCURRENT_RULES, d, mq, (s, e) => [s, e]);
    if (d.clock.now() >= visibleAgainAt(first)) {
      // RocketMQ: a pop timeout discards the result; the broker has revived the batch already.
      pq.waitAckCount -= popped.length;
      d.logger.warn(
        { mq, count: popped.length, invisibleTimeMs: first.handle.invisibleTime },
        'the listener outlived the invisible time: the messages are delivered again',
      );
      return;
    }
    this.#processConsumeResult(status, error, context, popped, pq, mq);
  }

  /** RocketMQ: processConsumeResult — acknowledge what succeeded, hand back what failed. */
  #processConsumeResult(
    status: ConsumeConcurrentlyStatus,
    error: unknown,
    context: ConsumeConcurrentlyContext,
    popped: PoppedMessage[],
    pq: PopProcessQueue,
    mq: MessageQueue,
  ): void {
    let ackIndex = -1;
    if (status === ConsumeConcurrentlyStatus.CONSUME_SUCCESS) ackIndex = Math.min(context.ackIndex, popped.length - 1);
    for (let i = 0; i <= ackIndex; i++) this.#queueAck(popped[i] as PoppedMessage, mq);
    const failed = popped.slice(ackIndex + 1);
    for (const p of failed) this.#track(this.#retryLater(p, context.delayLevelWhenNextConsume, mq));
    pq.waitAckCount -= popped.length;
    if (failed.length === 0) return;
    const event: ConsumeFailureEvent = {
      messageQueue: mq,
      messages: failed.map((p) => p.message),
      status,
      sentBack: failed.length,
      retriedLocally: 0,
      dropped: 0,
    };
    if (error !== undefined) event.error = error;
    this.#d.onConsumeFailure(event);
  }

  #track(p: Promise<void>): void {
    this.#settling.add(p);
    void p.finally(() => this.#settling.delete(p));
  }

  #queueAck(p: PoppedMessage, mq: MessageQueue): void {
    this.#acks.push({ p, mq });
    if (this.#ackFlushScheduled) return;
    this.#ackFlushScheduled = true;
    setImmediate(() => this.#flushAcks());
  }

  #flushAcks(): void {
    this.#ackFlushScheduled = false;
    const batch = this.#acks;
    if (batch.length === 0) return;
    this.#acks = [];
    this.#track(this.#sendAcks(batch));
  }

  async #sendAcks(batch: ReadonlyArray<{ p: PoppedMessage; mq: MessageQueue }>): Promise<void> {
    try {
      await this.#d.ack(batch.map((a) => a.p));
    } catch (err) {
      // Not lost: what was not acknowledged is delivered again after its invisible time.
      this.#d.logger.warn(
        { err, mqs: [...new Set(batch.map((a) => a.mq))], count: batch.length },
        'POP acknowledgement failed',
      );
    }
  }

  /**
   * RocketMQ: changePopInvisibleTime with the delay of the message's level (level 0: its reconsumeTimes);
   * past maxReconsumeTimes (or at level -1) the message goes to the dead-letter queue instead, where
   * RocketMQ's client would only acknowledge it.
   */
  async #retryLater(p: PoppedMessage, delayLevel: number, mq: MessageQueue): Promise<void> {
    const d = this.#d;
    const msg = p.message;
    if (delayLevel < 0 || msg.reconsumeTimes >= d.maxReconsumeTimes) {
      try {
        await d.sendToDeadLetterQueue(msg, mq);
        await d.ack([p]);
        return;
      } catch (err) {
        d.logger.warn({ err, mq, msgId: msg.msgId }, 'sending to the dead-letter queue failed; retried later');
      }
    }
    const level = delayLevel === 0 ? msg.reconsumeTimes : delayLevel < 0 ? Infinity : delayLevel;
    const delays = d.retryDelaysMs;
    const delayMs = delays[Math.min(level, delays.length - 1)] as number;
    try {
      await d.changeInvisibleTime(p, delayMs);
    } catch (err) {
      // The broker still delivers it again, after the invisible time it was popped with.
      d.logger.warn({ err, mq, msgId: msg.msgId }, 'changing the invisible time of a failed message failed');
    }
  }

  /**
   * Stops taking work (queued batches are left to the broker, which delivers them again after their
   * invisible time) and waits until `deadline` for the running listeners, then for the acknowledgements
   * they started.
   */
  async shutdown(deadline: number): Promise<PopConsumeShutdownResult> {
    const d = this.#d;
    this.#stopped = true;
    const droppedRequests = this.#requests.length;
    for (const r of this.#requests.splice(0)) r.pq.waitAckCount -= r.popped.length;
    if (this.#workers > 0) {
      if (!this.#idle) {
        let resolve!: () => void;
        const promise = new Promise<void>((r) => (resolve = r));
        this.#idle = { promise, resolve };
      }
      await waitAtMost(this.#idle.promise, Math.max(0, deadline - d.clock.now()), d.clock);
    }
    this.#flushAcks();
    if (this.#settling.size > 0)
      await waitAtMost(Promise.allSettled([...this.#settling]), Math.max(0, deadline - d.clock.now()), d.clock);
    return { unfinished: this.#busy, droppedRequests, unsettledAcks: this.#settling.size };
  }
}
