/**
 * Per-key orderly consumption (`keyConcurrency: N`, beyond RocketMQ): a queue's messages are grouped
 * by their sharding key (the `__SHARDINGKEY` property, else `KEYS`; messages with neither share one
 * key) into lanes. Each key's messages are delivered one at a time in offset order; up to N keys of one
 * queue run at once, taking turns message by message. A message that fails holds back only its own
 * key. The orderly service supplies locking, the listener call, dead-lettering and commits.
 */
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import { MessageConst, type MessageExt } from '../../../common/message.js';
import { CONSUME_SLICE_MS, yieldToIo } from './consume-core.js';
import {
  ConsumeOrderlyStatus,
  type ConsumeOrderlyContext,
  type Lane,
  type QueueState,
} from './consume-orderly-types.js';

/** The key a message is ordered by in per-key mode. */
export function orderingKeyOf(msg: MessageExt): string {
  const p = msg.properties;
  return p?.[MessageConst.SHARDING_KEY] ?? p?.[MessageConst.KEYS] ?? '';
}

/** What the orderly service does for the lanes. */
export interface KeyLaneHost {
  readonly keyConcurrency: number;
  readonly clock: Clock;
  readonly logger: Logger;
  stopped(): boolean;
  /** The queue may be consumed now (BROADCASTING, or its broker lock is held and fresh). */
  mayConsume(st: QueueState): boolean;
  /** Locks the queue, then resumes it. */
  lockLater(st: QueueState): void;
  /** Runs the listener on `msgs`; `then` gets its status. */
  callListener(
    st: QueueState,
    msgs: MessageExt[],
    context: ConsumeOrderlyContext,
    then: (status: ConsumeOrderlyStatus, error: unknown) => boolean | Promise<boolean>,
  ): boolean | Promise<boolean>;
  /**
   * A failed message: sent to the dead-letter queue when past maxReconsumeTimes (then true), else
   * counted one more failure; the suspension is reported either way.
   */
  deadLetterOrSuspend(
    st: QueueState,
    msg: MessageExt,
    context: ConsumeOrderlyContext,
    error: unknown,
  ): Promise<boolean>;
  /** Runs `fn` after the suspend time of `context`. */
  afterSuspend(context: ConsumeOrderlyContext, fn: () => void): void;
  commit(st: QueueState, done: readonly MessageExt[]): void;
  checkIdle(st: QueueState): void;
}

export class OrderlyKeyLanes {
  constructor(private readonly host: KeyLaneHost) {}

  /** New messages of the queue: each past the last one dispatched joins its key's lane. */
  add(st: QueueState, msgs: readonly MessageExt[]): void {
    for (const msg of msgs) {
      if (msg.queueOffset <= st.dispatchedUpTo) continue;
      st.dispatchedUpTo = msg.queueOffset;
      const key = orderingKeyOf(msg);
      let lane = st.lanes.get(key);
      if (!lane) st.lanes.set(key, (lane = { key, pending: [], head: 0, scheduled: false, waiting: false }));
      lane.pending.push(msg);
      this.#schedule(st, lane);
    }
    this.pump(st);
  }

  /** Starts workers for the ready lanes, up to keyConcurrency per queue. */
  pump(st: QueueState): void {
    const n = this.host.keyConcurrency;
    while (!this.host.stopped() && !st.pq.dropped && st.workers < n && st.workers < st.ready.length) {
      st.workers++;
      void this.#worker(st);
    }
  }

  #schedule(st: QueueState, lane: Lane): void {
    if (lane.scheduled || lane.waiting || lane.head >= lane.pending.length) return;
    lane.scheduled = true;
    st.ready.push(lane);
  }

  async #worker(st: QueueState): Promise<void> {
    const { clock, logger } = this.host;
    let sliceStart = clock.now();
    try {
      for (let lane = st.ready.shift(); lane; lane = st.ready.shift()) {
        if (this.host.stopped() || st.pq.dropped) {
          lane.scheduled = false;
          break;
        }
        if (!this.host.mayConsume(st)) {
          // Put it back; everything waits for the lock.
          st.ready.unshift(lane);
          this.host.lockLater(st);
          break;
        }
        let r: boolean | Promise<boolean>;
        try {
          r = this.#consumeHead(st, lane);
          if (r !== true && r !== false) r = await r;
        } catch (err) {
          logger.error({ err, mq: st.mq }, 'an orderly consume request failed unexpectedly');
          r = false;
        }
        lane.scheduled = false;
        // One message per turn: keys of the queue take turns.
        if (r) this.#schedule(st, lane);
        else if (lane.head >= lane.pending.length && !lane.waiting) st.lanes.delete(lane.key);
        if (st.ready.length > 0 && clock.now() - sliceStart >= CONSUME_SLICE_MS) {
          await yieldToIo();
          sliceStart = clock.now();
        }
      }
    } finally {
      st.workers--;
      this.host.checkIdle(st);
    }
  }

  /** The head message of one key. Returns whether the key has more to consume now. */
  #consumeHead(st: QueueState, lane: Lane): boolean | Promise<boolean> {
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
      this.host.commit(st, [msg]);
      return lane.head < lane.pending.length;
    };
    return this.host.callListener(st, [msg], context, (status, error) => {
      if (status !== ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT && status !== ConsumeOrderlyStatus.ROLLBACK)
        return done();
      return this.host.deadLetterOrSuspend(st, msg, context, error).then((deadLettered) => {
        if (deadLettered) return done();
        lane.waiting = true;
        this.host.afterSuspend(context, () => {
          lane.waiting = false;
          this.#schedule(st, lane);
          if (!this.host.stopped() && !st.pq.dropped) this.pump(st);
        });
        return false;
      });
    });
  }
}
