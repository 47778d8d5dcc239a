/**
 * ConsumeMessageOrderlyService (RocketMQ's class of the same name): each queue's messages reach the
 * listener in queue-offset order, one batch at a time per queue, and only while this client holds the
 * queue's broker lock (CLUSTERING). Two modes:
 *
 * - **Per queue** (RocketMQ's behaviour): a queue runs one batch of up to `consumeMessageBatchMaxSize`
 *   messages at a time; queues run in parallel up to `consumeThreadMax`, taking turns batch by batch.
 * - **Per key** (`keyConcurrency: N`, beyond RocketMQ): messages are grouped by their sharding key
 *   (the `__SHARDINGKEY` property, else `KEYS`; messages with neither share one key). Each key's
 *   messages are delivered one at a time in offset order; up to N keys of one queue run at once. A
 *   message that fails holds back only its own key.
 *
 * In both modes the offset committed for a queue is the smallest offset not yet finished (the
 * ProcessQueue's rule), so a crash re-delivers a suffix and never skips. A listener that resolves with
 * nothing has succeeded; a throw, a rejection or a value that is not a status (`null` included) is
 * SUSPEND_CURRENT_QUEUE_A_MOMENT. A suspended batch is
 * consumed again after `suspendCurrentQueueTimeMillis`; after `maxReconsumeTimes` failures a message
 * is sent to the group's dead-letter queue and counts as consumed.
 */
import type { TimerHandle } from '../../../common/clock.js';
import { MessageConst, type MessageExt, type MessageQueue } from '../../../common/message.js';
import { MessageModel } from '../consumer-constants.js';
import type { ProcessQueue } from '../process-queue.js';
import {
  CONSUME_SLICE_MS,
  commitConsumed,
  prepareMessages,
  runListener,
  waitAtMost,
  yieldToIo,
  type ListenerRules,
} from './consume-core.js';
import {
  ConsumeOrderlyStatus,
  type ConsumeOrderlyContext,
  type ConsumeOrderlyServiceDeps,
  type OrderlySuspendEvent,
  type QueueState,
} from './consume-orderly-types.js';
import { OrderlyKeyLanes } from './orderly-key-lanes.js';

export {
  ConsumeOrderlyStatus,
  type ConsumeOrderlyContext,
  type ConsumeOrderlyServiceDeps,
  type MessageListenerOrderly,
  type OrderlyListenerOptions,
  type OrderlySuspendEvent,
} from './consume-orderly-types.js';
export { orderingKeyOf } from './orderly-key-lanes.js';

/** RocketMQ: a queue whose lock is missing is tried again after 10 ms when the lock was taken, else 3 s. */
const RECONSUME_AFTER_LOCKED_MS = 10;
const RECONSUME_AFTER_LOCK_FAILED_MS = 3000;
/** How the orderly service reads its listener's answers. */
const ORDERLY_RULES: ListenerRules<ConsumeOrderlyStatus> = {
  statuses: Object.values(ConsumeOrderlyStatus),
  success: ConsumeOrderlyStatus.SUCCESS,
  failure: ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT,
  what: 'orderly listener',
};

export class ConsumeMessageOrderlyService {
  readonly #d: ConsumeOrderlyServiceDeps;
  readonly #states = new Map<ProcessQueue, QueueState>();
  /** Per-queue mode: queues with work, taken in turn by up to consumeThreadMax workers. */
  readonly #readyQueues: QueueState[] = [];
  #workers = 0;
  readonly #timers = new Set<TimerHandle>();
  #stopped = false;
  #running = 0;
  readonly #allIdle: (() => void)[] = [];
  /** Per-key mode's lanes; undefined in per-queue mode. */
  readonly #keys: OrderlyKeyLanes | undefined;

  constructor(deps: ConsumeOrderlyServiceDeps) {
    this.#d = deps;
    if (deps.keyConcurrency !== undefined)
      this.#keys = new OrderlyKeyLanes({
        keyConcurrency: deps.keyConcurrency,
        clock: deps.clock,
        logger: deps.logger,
        stopped: () => this.#stopped,
        mayConsume: (st) => this.#mayConsume(st),
        lockLater: (st) => this.#lockLater(st),
        callListener: (st, msgs, context, then) => this.#callListener(st, msgs, context, then),
        deadLetterOrSuspend: async (st, msg, context, error) => {
          const { deadLettered } = await this.#checkReconsumeTimes(st, [msg]);
          this.#emitSuspend(st, [msg], error, deadLettered.length, this.#suspendMs(context));
          return deadLettered.length > 0;
        },
        afterSuspend: (context, fn) => this.#later(fn, this.#suspendMs(context), () => undefined),
        commit: (st, done) => this.#commit(st, done),
        checkIdle: (st) => this.#checkIdle(st),
      });
  }

  /** Listener calls running now. */
  get running(): number {
    return this.#running;
  }

  /** RocketMQ: submitConsumeRequest — new messages were put into `pq`. */
  submitConsumeRequest(msgs: readonly MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    if (this.#stopped || pq.dropped) return;
    const st = this.#state(pq, mq);
    if (this.#keys) this.#keys.add(st, msgs);
    else this.#scheduleQueue(st);
  }

  #state(pq: ProcessQueue, mq: MessageQueue): QueueState {
    let st = this.#states.get(pq);
    if (!st) {
      st = {
        mq,
        pq,
        lanes: new Map(),
        ready: [],
        dispatchedUpTo: -1,
        taken: [],
        scheduled: false,
        inflight: 0,
        workers: 0,
        lockTimer: undefined,
        idleWaiters: [],
      };
      this.#states.set(pq, st);
    }
    return st;
  }

  /** The queue may be consumed now: BROADCASTING, or its broker lock is held and fresh. */
  #mayConsume(st: QueueState): boolean {
    if (this.#d.messageModel === MessageModel.BROADCASTING) return true;
    return st.pq.locked && !st.pq.isLockExpired(this.#d.clock.now(), this.#d.lockMaxLiveTimeMs);
  }

  /** RocketMQ: tryLockLaterAndReconsume — lock the queue, then consume again soon (or in 3 s). */
  #lockLater(st: QueueState): void {
    if (st.lockTimer !== undefined || this.#stopped || st.pq.dropped) return;
    const run = (): void => {
      // A queue dropped meanwhile is being released: locking it now could re-take its lock.
      if (this.#stopped || st.pq.dropped) return;
      void this.#d.lockOne(st.mq).then(
        (locked) => this.#retryAfterLock(st, locked),
        () => this.#retryAfterLock(st, false),
      );
    };
    st.lockTimer = this.#later(run, 0, () => (st.lockTimer = undefined));
  }

  #retryAfterLock(st: QueueState, locked: boolean): void {
    if (this.#stopped || st.pq.dropped) return;
    if (locked) {
      // RocketMQ: RebalanceImpl.lock marks the ProcessQueue locked with a fresh timestamp. Without it a
      // queue whose lock lapsed on this side would wait for the next periodic renewal.
      st.pq.locked = true;
      st.pq.lastLockTimestamp = this.#d.clock.now();
    }
    const delay = locked ? RECONSUME_AFTER_LOCKED_MS : RECONSUME_AFTER_LOCK_FAILED_MS;
    st.lockTimer = this.#later(
      () => this.#resume(st),
      delay,
      () => (st.lockTimer = undefined),
    );
  }

  /** Starts whatever the queue has waiting (after a lock or a suspend). */
  #resume(st: QueueState): void {
    if (this.#stopped || st.pq.dropped) return;
    if (this.#keys) this.#keys.pump(st);
    else this.#scheduleQueue(st);
  }

  #later(fn: () => void, ms: number, onFire: () => void): TimerHandle {
    const h = this.#d.clock.setTimeout(() => {
      this.#timers.delete(h);
      onFire();
      fn();
    }, ms);
    this.#timers.add(h);
    return h;
  }

  // ---- per-queue mode ------------------------------------------------------------------------

  #scheduleQueue(st: QueueState): void {
    if (st.scheduled || this.#stopped || st.pq.dropped) return;
    st.scheduled = true;
    this.#readyQueues.push(st);
    while (this.#workers < this.#d.consumeThreadMax && this.#workers < this.#readyQueues.length) {
      this.#workers++;
      void this.#queueWorker();
    }
  }

  async #queueWorker(): Promise<void> {
    let sliceStart = this.#d.clock.now();
    try {
      for (let st = this.#readyQueues.shift(); st; st = this.#readyQueues.shift()) {
        st.workers++;
        let more = false;
        try {
          const r = this.#consumeQueueBatch(st);
          more = r === true ? true : r === false ? false : await r;
        } catch (err) {
          this.#d.logger.error({ err, mq: st.mq }, 'an orderly consume request failed unexpectedly');
        } finally {
          st.workers--;
          st.scheduled = false;
          this.#checkIdle(st);
        }
        if (more) this.#scheduleQueue(st);
        if (this.#readyQueues.length > 0 && this.#d.clock.now() - sliceStart >= CONSUME_SLICE_MS) {
          await yieldToIo();
          sliceStart = this.#d.clock.now();
        }
      }
    } finally {
      this.#workers--;
      this.#signalAllIdle();
    }
  }

  /**
   * One batch of one queue (RocketMQ: ConsumeRequest.run, one turn of its loop). Returns whether the
   * queue has more to consume now — synchronously when the listener answered synchronously.
   */
  #consumeQueueBatch(st: QueueState): boolean | Promise<boolean> {
    if (this.#stopped || st.pq.dropped) return false;
    if (!this.#mayConsume(st)) {
      this.#lockLater(st);
      return false;
    }
    const after = st.taken.length > 0 ? st.dispatchedUpTo : -1;
    const msgs = st.pq.messagesAfter(after, this.#d.consumeMessageBatchMaxSize);
    if (msgs.length === 0) return false;
    st.taken.push(...msgs);
    st.dispatchedUpTo = msgs[msgs.length - 1]!.queueOffset;
    const context: ConsumeOrderlyContext = {
      messageQueue: st.mq,
      autoCommit: true,
      suspendCurrentQueueTimeMillis: -1,
    };
    return this.#callListener(st, msgs, context, (status, error) =>
      this.#processQueueResult(st, msgs, context, status, error),
    );
  }

  /** RocketMQ: processConsumeResult (orderly). Returns whether the queue may go on now. */
  #processQueueResult(
    st: QueueState,
    msgs: MessageExt[],
    context: ConsumeOrderlyContext,
    status: ConsumeOrderlyStatus,
    error: unknown,
  ): boolean | Promise<boolean> {
    const S = ConsumeOrderlyStatus;
    if (context.autoCommit) {
      if (status === S.SUSPEND_CURRENT_QUEUE_A_MOMENT || status === S.ROLLBACK)
        return this.#suspendQueue(st, msgs, context, error);
      this.#commitTaken(st);
      return true;
    }
    switch (status) {
      case S.COMMIT:
        this.#commitTaken(st);
        return true;
      case S.ROLLBACK:
        this.#rollback(st);
        this.#suspendLater(st, context);
        return false;
      case S.SUSPEND_CURRENT_QUEUE_A_MOMENT:
        return this.#suspendQueue(st, msgs, context, error);
      default:
        // RocketMQ: SUCCESS without autoCommit keeps the batch taken until a COMMIT.
        return true;
    }
  }

  /** Every taken message is done: out of the ProcessQueue, and the offset moves to the smallest held. */
  #commitTaken(st: QueueState): void {
    const done = st.taken;
    st.taken = [];
    this.#commit(st, done);
  }

  #rollback(st: QueueState): void {
    st.taken = [];
    st.dispatchedUpTo = -1;
  }

  /**
   * RocketMQ: checkReconsumeTimes then makeMessageToConsumeAgain — messages past maxReconsumeTimes go
   * to the dead-letter queue (and count as consumed); if any other remains, the batch is given back and
   * consumed again after the suspend time.
   */
  async #suspendQueue(
    st: QueueState,
    msgs: MessageExt[],
    context: ConsumeOrderlyContext,
    error: unknown,
  ): Promise<boolean> {
    const { retry, deadLettered } = await this.#checkReconsumeTimes(st, msgs);
    const suspendMs = this.#suspendMs(context);
    this.#emitSuspend(st, msgs, error, deadLettered.length, suspendMs);
    if (retry.length === 0) {
      // Everything left was dead-lettered: the batch is done.
      this.#commitTaken(st);
      return true;
    }
    // The dead-lettered messages are done; the rest (and anything taken before) is consumed again.
    if (deadLettered.length) this.#commit(st, deadLettered);
    this.#rollback(st);
    this.#suspendLater(st, context);
    return false;
  }

  #suspendLater(st: QueueState, context: ConsumeOrderlyContext): void {
    this.#later(
      () => this.#resume(st),
      this.#suspendMs(context),
      () => undefined,
    );
  }

  #suspendMs(context: ConsumeOrderlyContext): number {
    const t = context.suspendCurrentQueueTimeMillis;
    return Number.isFinite(t) && t >= 0 ? t : this.#d.suspendCurrentQueueTimeMillis;
  }

  // ---- shared --------------------------------------------------------------------------------

  /**
   * Runs the listener on `msgs` and hands its status (a throw is SUSPEND) to `then`. Synchronous when
   * the listener answers synchronously.
   */
  #callListener(
    st: QueueState,
    msgs: MessageExt[],
    context: ConsumeOrderlyContext,
    then: (status: ConsumeOrderlyStatus, error: unknown) => boolean | Promise<boolean>,
  ): boolean | Promise<boolean> {
    prepareMessages(msgs, this.#d.consumerGroup, String(this.#d.clock.now()));
    st.inflight++;
    this.#running++;
    return runListener(this.#d.listener, msgs, context, ORDERLY_RULES, this.#d, st.mq, then, () => {
      st.inflight--;
      this.#running--;
    });
  }

  /**
   * RocketMQ: checkReconsumeTimes — a message that has failed `maxReconsumeTimes` times goes to the
   * dead-letter queue (when that works it counts as consumed); every other one counts one more failure.
   */
  async #checkReconsumeTimes(
    st: QueueState,
    msgs: readonly MessageExt[],
  ): Promise<{ retry: MessageExt[]; deadLettered: MessageExt[] }> {
    const retry: MessageExt[] = [];
    const deadLettered: MessageExt[] = [];
    for (const msg of msgs) {
      if (this.#d.messageModel === MessageModel.CLUSTERING && msg.reconsumeTimes >= this.#d.maxReconsumeTimes) {
        const props = (msg.properties ??= {});
        props[MessageConst.RECONSUME_TIME] = String(msg.reconsumeTimes);
        let ok = false;
        try {
          ok = await this.#d.sendToDeadLetterQueue(msg, st.mq);
        } catch (err) {
          this.#d.logger.warn({ err, msgId: msg.msgId }, 'sending to the dead-letter queue failed');
        }
        if (ok) {
          deadLettered.push(msg);
          continue;
        }
      }
      msg.reconsumeTimes++;
      retry.push(msg);
    }
    return { retry, deadLettered };
  }

  #emitSuspend(st: QueueState, msgs: MessageExt[], error: unknown, deadLettered: number, suspendMs: number): void {
    const e: OrderlySuspendEvent = { messageQueue: st.mq, messages: msgs, deadLettered, suspendMs };
    if (error !== undefined) e.error = error;
    this.#d.onSuspend(e);
  }

  /**
   * Takes finished messages out of the ProcessQueue and moves the queue's offset to its smallest held
   * one. Also while the queue is being released (dropped with work in flight): the release persists the
   * offset after that work ends and before it gives up the broker lock.
   */
  #commit(st: QueueState, done: readonly MessageExt[]): void {
    if (done.length === 0) return;
    commitConsumed(st.pq, st.mq, done, this.#d.clock.now(), this.#d.offsetStore, true);
  }

  #checkIdle(st: QueueState): void {
    if (st.inflight > 0 || st.workers > 0) return;
    for (const w of st.idleWaiters.splice(0)) w();
    if (st.pq.dropped) this.#states.delete(st.pq);
    this.#signalAllIdle();
  }

  #signalAllIdle(): void {
    if (this.#running === 0 && this.#workers === 0) for (const w of this.#allIdle.splice(0)) w();
  }

  /** Whether a listener call is running for `pq` now. */
  isConsuming(pq: ProcessQueue): boolean {
    const st = this.#states.get(pq);
    return st !== undefined && (st.inflight > 0 || st.workers > 0);
  }

  /**
   * Waits up to `timeoutMs` for the queue's running listener calls to end (RocketMQ's tryLock of the
   * queue's consume lock before a dropped queue is unlocked); true when none is running.
   */
  async waitIdle(pq: ProcessQueue, timeoutMs: number): Promise<boolean> {
    if (!this.isConsuming(pq)) return true;
    return waitAtMost(this.whenIdle(pq), timeoutMs, this.#d.clock);
  }

  /** Resolves when no listener call is running for `pq` (no timer: it waits as long as that takes). */
  whenIdle(pq: ProcessQueue): Promise<void> {
    const st = this.#states.get(pq);
    if (!st || (st.inflight === 0 && st.workers === 0)) return Promise.resolve();
    return new Promise<void>((resolve) => st.idleWaiters.push(resolve));
  }

  /**
   * Stops taking work and waits for running listener calls until `deadline`. Messages not consumed stay
   * uncommitted and are delivered again. Returns how many calls were still running.
   */
  async shutdown(deadline: number): Promise<{ unfinished: number; droppedRequests: number }> {
    this.#stopped = true;
    for (const t of this.#timers) this.#d.clock.clearTimeout(t);
    this.#timers.clear();
    const droppedRequests = this.#readyQueues.length;
    this.#readyQueues.length = 0;
    for (const st of this.#states.values()) st.ready.length = 0;
    const left = deadline - this.#d.clock.now();
    if ((this.#running > 0 || this.#workers > 0) && left > 0)
      await waitAtMost(new Promise<void>((resolve) => this.#allIdle.push(resolve)), left, this.#d.clock);
    return { unfinished: this.#running, droppedRequests };
  }
}
