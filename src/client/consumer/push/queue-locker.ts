/**
 * The client side of orderly consumption's broker locks (RocketMQ: RebalanceImpl.lock / lockAll /
 * unlock / unlockAll): a queue is consumed in order only while this client holds its lock on the
 * queue's master broker. Locks are taken when rebalance assigns a queue, renewed every 20 s for every
 * queue held (the broker frees a lock 60 s after its last renewal), and released when a queue is given
 * up — after its in-flight work has ended and its offset has been persisted — and at shutdown.
 */
import type { Logger } from '../../../common/logger.js';
import { messageQueueKey, type MessageQueue } from '../../../common/message.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { ProcessQueue } from '../process-queue.js';

/** RocketMQ: ConsumeMessageOrderlyService renews every lock every 20 s (REBALANCE_LOCK_INTERVAL). */
export const REBALANCE_LOCK_INTERVAL_MS = 20_000;
/** RocketMQ: lock and unlock calls use a 1 s timeout. */
const LOCK_TIMEOUT_MS = 1000;

export class QueueLocker {
  /** Lock calls on their way: an unlock waits for them, so a late lock cannot re-take a released queue. */
  readonly #locking = new Set<Promise<unknown>>();

  constructor(
    private readonly instance: MQClientInstance,
    private readonly consumerGroup: string,
    private readonly logger: Logger,
  ) {}

  /** Queues grouped by the master address of their broker; queues of unknown brokers are left out. */
  async #byBroker(mqs: readonly MessageQueue[]): Promise<Map<string, MessageQueue[]>> {
    const out = new Map<string, MessageQueue[]>();
    for (const mq of mqs) {
      let addr = this.instance.findBrokerAddressInPublish(mq.brokerName);
      if (addr === undefined) {
        try {
          addr = (await this.instance.findBrokerAddressForQueue(mq)).brokerAddr;
        } catch (err) {
          this.logger.warn({ err, mq }, 'no broker to lock the queue on');
          continue;
        }
      }
      let list = out.get(addr);
      if (!list) out.set(addr, (list = []));
      list.push(mq);
    }
    return out;
  }

  /** Locks `mqs` (one call per broker); resolves with the keys (messageQueueKey) this client now holds. */
  lockBatch(mqs: readonly MessageQueue[]): Promise<Set<string>> {
    const call = this.#lockBatch(mqs);
    this.#locking.add(call);
    void call.finally(() => this.#locking.delete(call)).catch(() => undefined);
    return call;
  }

  async #lockBatch(mqs: readonly MessageQueue[]): Promise<Set<string>> {
    const locked = new Set<string>();
    const clientId = this.instance.clientId;
    await Promise.all(
      [...(await this.#byBroker(mqs))].map(async ([addr, list]) => {
        try {
          const ok = await this.instance.api.lockBatchMQ(
            addr,
            { consumerGroup: this.consumerGroup, clientId, mqSet: list },
            { timeoutMs: LOCK_TIMEOUT_MS },
          );
          for (const mq of ok) locked.add(messageQueueKey(mq));
        } catch (err) {
          this.logger.warn({ err, addr, queues: list.length }, 'locking queues failed');
        }
      }),
    );
    return locked;
  }

  /** RocketMQ: RebalanceImpl.lock — one queue. */
  async lock(mq: MessageQueue): Promise<boolean> {
    return (await this.lockBatch([mq])).has(messageQueueKey(mq));
  }

  /**
   * RocketMQ: lockAll — renews the locks of every queue in `table`, marking each ProcessQueue locked
   * (with a fresh timestamp) or not. Queues being given up (dropped) are left out: renewing one could
   * re-take its lock after it was released, and the next owner would wait for it to expire.
   */
  async lockAll(table: Iterable<{ mq: MessageQueue; pq: ProcessQueue }>, now: () => number): Promise<void> {
    const entries = [...table].filter((e) => !e.pq.dropped);
    if (entries.length === 0) return;
    const locked = await this.lockBatch(entries.map((e) => e.mq));
    const at = now();
    for (const { mq, pq } of entries) {
      if (locked.has(messageQueueKey(mq))) {
        pq.locked = true;
        pq.lastLockTimestamp = at;
      } else if (pq.locked) {
        pq.locked = false;
        this.logger.warn({ mq }, 'the queue lock was lost: consumption of the queue pauses');
      }
    }
  }

  /**
   * RocketMQ: unlock / unlockAll — releases the locks of `mqs` (one call per broker), after the lock
   * calls already on their way have been answered: requests travel on several connections, and a lock
   * the broker handled after the unlock would keep the queue from its next owner until it expires.
   */
  async unlockBatch(mqs: readonly MessageQueue[]): Promise<void> {
    if (mqs.length === 0) return;
    await Promise.allSettled([...this.#locking]);
    const clientId = this.instance.clientId;
    await Promise.all(
      [...(await this.#byBroker(mqs))].map(async ([addr, list]) => {
        try {
          await this.instance.api.unlockBatchMQ(
            addr,
            { consumerGroup: this.consumerGroup, clientId, mqSet: list },
            { timeoutMs: LOCK_TIMEOUT_MS },
          );
        } catch (err) {
          this.logger.warn({ err, addr, queues: list.length }, 'unlocking queues failed (they expire on the broker)');
        }
      }),
    );
  }
}
