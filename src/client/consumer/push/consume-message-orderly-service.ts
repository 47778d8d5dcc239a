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
 * nothing has succeeded; a throw or a rejection is SUSPEND_CURRENT_QUEUE_A_MOMENT. A suspended batch is
 * consumed again after `suspendCurrentQueueTimeMillis`; after `maxReconsumeTimes` failures a message
 * is sent to the group's dead-letter queue and counts as consumed.
 */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import { MessageConst, retryTopic, type MessageExt, type MessageQueue } from '../../../common/message.js';
import { MessageModel } from '../consumer-constants.js';
import type { OffsetStore } from '../offset-store.js';
import type { ProcessQueue } from '../process-queue.js';

/** What an orderly listener returns (RocketMQ's ConsumeOrderlyStatus). */
export const ConsumeOrderlyStatus = Object.freeze({
  /** The batch was consumed; its offsets may be committed. */
  SUCCESS: 'SUCCESS',
  /** Consume the same batch again after `suspendCurrentQueueTimeMillis`, holding back the queue (or key). */
  SUSPEND_CURRENT_QUEUE_A_MOMENT: 'SUSPEND_CURRENT_QUEUE_A_MOMENT',
  /** With `context.autoCommit = false`: commit every message taken so far. */
  COMMIT: 'COMMIT',
  /** With `context.autoCommit = false`: give back every message taken since the last commit and retry them. */
  ROLLBACK: 'ROLLBACK',
} as const);
export type ConsumeOrderlyStatus = (typeof ConsumeOrderlyStatus)[keyof typeof ConsumeOrderlyStatus];

/** RocketMQ's ConsumeOrderlyContext. */
export interface ConsumeOrderlyContext {
  readonly messageQueue: MessageQueue;
  /**
   * true (default): SUCCESS commits the batch. false: SUCCESS keeps the batch taken and uncommitted;
   * COMMIT commits everything taken so far and ROLLBACK gives it back (per-queue mode only).
   */
  autoCommit: boolean;
  /** This batch's suspend time when it is suspended, ms; -1 (default) uses the consumer's option. */
  suspendCurrentQueueTimeMillis: number;
}

/** The orderly listener: resolving with nothing is SUCCESS; a throw or rejection is SUSPEND. */
export type MessageListenerOrderly = (
  messages: MessageExt[],
  context: ConsumeOrderlyContext,
) => ConsumeOrderlyStatus | void | Promise<ConsumeOrderlyStatus | void>;

export interface OrderlyListenerOptions {
  /**
   * Per-key ordering inside a queue: up to this many keys of one queue are consumed at once, each key
   * one message at a time in order. Unset: RocketMQ's per-queue ordering.
   */
  keyConcurrency?: number | undefined;
}

/** A batch that was suspended: it is consumed again later, or was sent to the dead-letter queue. */
export interface OrderlySuspendEvent {
  messageQueue: MessageQueue;
  messages: MessageExt[];
  /** What the listener threw or rejected with, if it did. */
  error?: unknown;
  /** Messages that reached `maxReconsumeTimes` and were sent to `%DLQ%<group>`. */
  deadLettered: number;
  /** When the remaining messages are consumed again, ms. */
  suspendMs: number;
}

export interface ConsumeOrderlyServiceDeps {
  consumerGroup: string;
  messageModel: MessageModel;
  consumeThreadMax: number;
  consumeMessageBatchMaxSize: number;
  /** RocketMQ: suspendCurrentQueueTimeMillis, default 1000. */
  suspendCurrentQueueTimeMillis: number;
  /** Failures after which a message goes to the dead-letter queue (RocketMQ orderly: -1 → never). */
  maxReconsumeTimes: number;
  listener: MessageListenerOrderly;
  keyConcurrency: number | undefined;
  /** A queue whose lock was not confirmed for this long is not consumed, ms (RocketMQ: 30 s). */
  lockMaxLiveTimeMs: number;
  offsetStore: OffsetStore;
  clock: Clock;
  logger: Logger;
  /** Locks one queue on its broker; resolves true when this client holds the lock. */
  lockOne(mq: MessageQueue): Promise<boolean>;
  /** Sends one message to the group's dead-letter queue; resolves true when it was stored. */
  sendToDeadLetterQueue(msg: MessageExt, mq: MessageQueue): Promise<boolean>;
  onSuspend(e: OrderlySuspendEvent): void;
}

/** RocketMQ: a queue whose lock is missing is tried again after 10 ms when the lock was taken, else 3 s. */
const RECONSUME_AFTER_LOCKED_MS = 10;
const RECONSUME_AFTER_LOCK_FAILED_MS = 3000;
/** Sync listeners run back to back; after this long a worker lets I/O in. */
const CONSUME_SLICE_MS = 5;

/** One key's messages in offset order (per-key mode), or the whole queue (per-queue mode: key ''). */
interface Lane {
  readonly key: string;
  pending: MessageExt[];
  head: number;
  /** In the ready list or being consumed. */
  scheduled: boolean;
  /** Waiting for a suspend timer. */
  waiting: boolean;
}

interface QueueState {
  readonly mq: MessageQueue;
  readonly pq: ProcessQueue;
  /** Per-key mode: key → lane. */
  readonly lanes: Map<string, Lane>;
  /** Per-key mode: lanes ready to run. */
  readonly ready: Lane[];
  /** Highest offset handed to a lane (per-key) — or taken and not yet committed (per-queue). */
  dispatchedUpTo: number;
  /** Per-queue mode: messages taken since the last commit (autoCommit false keeps them). */
  taken: MessageExt[];
  /** Per-queue mode: in the ready list of queues or being consumed. */
  scheduled: boolean;
  /** Listener calls running now for this queue. */
  inflight: number;
  workers: number;
  /** A lock retry is pending. */
  lockTimer: TimerHandle | undefined;
  readonly idleWaiters: (() => void)[];
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === 'object' || typeof v === 'function') &&
    v !== null &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

/** The key a message is ordered by in per-key mode. */
export function orderingKeyOf(msg: MessageExt): string {
  const p = msg.properties;
  return p?.[MessageConst.SHARDING_KEY] ?? p?.[MessageConst.KEYS] ?? '';
}

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

  constructor(deps: ConsumeOrderlyServiceDeps) {
    this.#d = deps;
  }

  /** Listener calls running now. */
  get running(): number {
    return this.#running;
  }

  /** RocketMQ: submitConsumeRequest — new messages were put into `pq`. */
  submitConsumeRequest(msgs: readonly MessageExt[], pq: ProcessQueue, mq: MessageQueue): void {
    if (this.#stopped || pq.dropped) return;
    const st = this.#state(pq, mq);
    if (this.#d.keyConcurrency !== undefined) {
      for (const msg of msgs) {
        if (msg.queueOffset <= st.dispatchedUpTo) continue;
        st.dispatchedUpTo = msg.queueOffset;
        const key = orderingKeyOf(msg);
        let lane = st.lanes.get(key);
        if (!lane) st.lanes.set(key, (lane = { key, pending: [], head: 0, scheduled: false, waiting: false }));
        lane.pending.push(msg);
        this.#scheduleLane(st, lane);
      }
      this.#pumpKeys(st);
    } else {
      this.#scheduleQueue(st);
    }
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
    if (this.#d.keyConcurrency !== undefined) this.#pumpKeys(st);
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
          await new Promise<void>((resolve) => setImmediate(resolve));
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
        this.#suspendLater(st, null, context);
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
    this.#suspendLater(st, null, context);
    return false;
  }

  #suspendLater(st: QueueState, lane: Lane | null, context: ConsumeOrderlyContext): void {
    if (lane) lane.waiting = true;
    this.#later(
      () => {
        if (lane) {
          lane.waiting = false;
          this.#scheduleLane(st, lane);
        }
        this.#resume(st);
      },
      this.#suspendMs(context),
      () => undefined,
    );
  }

  #suspendMs(context: ConsumeOrderlyContext): number {
    const t = context.suspendCurrentQueueTimeMillis;
    return Number.isFinite(t) && t >= 0 ? t : this.#d.suspendCurrentQueueTimeMillis;
  }

  // ---- per-key mode --------------------------------------------------------------------------

  #scheduleLane(st: QueueState, lane: Lane): void {
    if (lane.scheduled || lane.waiting || lane.head >= lane.pending.length) return;
    lane.scheduled = true;
    st.ready.push(lane);
  }

  #pumpKeys(st: QueueState): void {
    const n = this.#d.keyConcurrency ?? 1;
    while (!this.#stopped && !st.pq.dropped && st.workers < n && st.workers < st.ready.length) {
      st.workers++;
      void this.#keyWorker(st);
    }
  }

  async #keyWorker(st: QueueState): Promise<void> {
    let sliceStart = this.#d.clock.now();
    try {
      for (let lane = st.ready.shift(); lane; lane = st.ready.shift()) {
        if (this.#stopped || st.pq.dropped) {
          lane.scheduled = false;
          break;
        }
        if (!this.#mayConsume(st)) {
          // Put it back; everything waits for the lock.
          st.ready.unshift(lane);
          this.#lockLater(st);
          break;
        }
        let r: boolean | Promise<boolean>;
        try {
          r = this.#consumeKeyMessage(st, lane);
          if (r !== true && r !== false) r = await r;
        } catch (err) {
          this.#d.logger.error({ err, mq: st.mq }, 'an orderly consume request failed unexpectedly');
          r = false;
        }
        lane.scheduled = false;
        // One message per turn: keys of the queue take turns.
        if (r) this.#scheduleLane(st, lane);
        else if (lane.head >= lane.pending.length && !lane.waiting) st.lanes.delete(lane.key);
        if (st.ready.length > 0 && this.#d.clock.now() - sliceStart >= CONSUME_SLICE_MS) {
          await new Promise<void>((resolve) => setImmediate(resolve));
          sliceStart = this.#d.clock.now();
        }
      }
    } finally {
      st.workers--;
      this.#checkIdle(st);
    }
  }

  /** The head message of one key. Returns whether the key has more to consume now. */
  #consumeKeyMessage(st: QueueState, lane: Lane): boolean | Promise<boolean> {
    const msg = lane.pending[lane.head];
    if (!msg) return false;
    const context: ConsumeOrderlyContext = {
      messageQueue: st.mq,
      autoCommit: true,
      suspendCurrentQueueTimeMillis: -1,
    };
    const done = (): boolean => {
      lane.pending[lane.head++] = undefined as unknown as MessageExt;
      if (lane.head >= lane.pending.length) {
        lane.pending = [];
        lane.head = 0;
      }
      this.#commit(st, [msg]);
      return lane.head < lane.pending.length;
    };
    return this.#callListener(st, [msg], context, (status, error) => {
      if (status !== ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT && status !== ConsumeOrderlyStatus.ROLLBACK)
        return done();
      return this.#checkReconsumeTimes(st, [msg]).then(({ deadLettered }) => {
        const suspendMs = this.#suspendMs(context);
        this.#emitSuspend(st, [msg], error, deadLettered.length, suspendMs);
        if (deadLettered.length) return done();
        this.#suspendLater(st, lane, context);
        return false;
      });
    });
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
    this.#prepare(msgs);
    st.inflight++;
    this.#running++;
    let settled = false;
    const finish = (): void => {
      if (settled) return;
      settled = true;
      st.inflight--;
      this.#running--;
    };
    const onAnswer = (answer: unknown): boolean | Promise<boolean> => {
      finish();
      return then(this.#status(answer, st.mq), undefined);
    };
    const onError = (err: unknown): boolean | Promise<boolean> => {
      finish();
      this.#d.logger.warn(
        { err, mq: st.mq, group: this.#d.consumerGroup },
        'orderly listener threw: treated as SUSPEND_CURRENT_QUEUE_A_MOMENT',
      );
      return then(ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT, err);
    };
    let answer: unknown;
    try {
      answer = this.#d.listener(msgs.slice(), context);
    } catch (err) {
      return onError(err);
    }
    if (isThenable(answer)) return Promise.resolve(answer).then(onAnswer, onError);
    return onAnswer(answer);
  }

  /** A listener's answer as a status: nothing is SUCCESS, an unknown value is logged and SUSPEND. */
  #status(answer: unknown, mq: MessageQueue): ConsumeOrderlyStatus {
    if (answer === undefined || answer === null) return ConsumeOrderlyStatus.SUCCESS;
    if (Object.values(ConsumeOrderlyStatus).includes(answer as ConsumeOrderlyStatus))
      return answer as ConsumeOrderlyStatus;
    this.#d.logger.warn({ mq, returned: answer }, 'orderly listener returned an unknown status: treated as SUSPEND');
    return ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT;
  }

  /** RocketMQ: resetRetryAndNamespace and CONSUME_START_TIME. */
  #prepare(msgs: readonly MessageExt[]): void {
    const now = String(this.#d.clock.now());
    const groupTopic = retryTopic(this.#d.consumerGroup);
    for (const msg of msgs) {
      const props = (msg.properties ??= {});
      const realTopic = props[MessageConst.RETRY_TOPIC];
      if (realTopic !== undefined && msg.topic === groupTopic) msg.topic = realTopic;
      props[MessageConst.CONSUME_START_TIME] = now;
    }
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
    const offset = st.pq.removeMessage(done, this.#d.clock.now());
    if (offset >= 0) this.#d.offsetStore.updateOffset(st.mq, offset, true);
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
    let timer: TimerHandle | undefined;
    const idle = await Promise.race([
      this.whenIdle(pq).then(() => true),
      new Promise<boolean>((resolve) => {
        timer = this.#d.clock.setTimeout(() => resolve(false), timeoutMs);
      }),
    ]);
    if (timer !== undefined) this.#d.clock.clearTimeout(timer);
    return idle;
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
    if ((this.#running > 0 || this.#workers > 0) && left > 0) {
      let timer: TimerHandle | undefined;
      await Promise.race([
        new Promise<void>((resolve) => this.#allIdle.push(resolve)),
        new Promise<void>((resolve) => {
          timer = this.#d.clock.setTimeout(resolve, left);
        }),
      ]);
      if (timer !== undefined) this.#d.clock.clearTimeout(timer);
    }
    return { unfinished: this.#running, droppedRequests };
  }
}
