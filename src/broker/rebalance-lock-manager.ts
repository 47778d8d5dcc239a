/**
 * RebalanceLockManager (RocketMQ's broker class of the same name): the queue locks of orderly
 * consumption. A lock is held per (consumer group, queue) by one client id and lives
 * `lockMaxLiveTimeMs` (RocketMQ: rocketmq.broker.rebalance.lockMaxLiveTime, 60 s) after it was last
 * taken or renewed; an expired lock is free for any client of the group. The table lives in memory
 * only and survives nothing, as in RocketMQ: after a broker restart every client re-locks (it renews
 * every 20 s) and consumers stop consuming a queue until their lock is confirmed.
 * @pure
 */
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';

/** RocketMQ: REBALANCE_LOCK_MAX_LIVE_TIME default, 60 s. */
export const REBALANCE_LOCK_MAX_LIVE_TIME_MS = 60_000;

export interface LockedQueue {
  topic: string;
  brokerName: string;
  queueId: number;
}

interface LockEntry {
  clientId: string;
  lastUpdateTimestamp: number;
}

function queueKey(mq: LockedQueue): string {
  return `${mq.topic}\u0001${mq.brokerName}\u0001${mq.queueId}`;
}

export class RebalanceLockManager {
  /** group → queue key → lock. */
  readonly #table = new Map<string, Map<string, LockEntry>>();

  constructor(
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly lockMaxLiveTimeMs: number = REBALANCE_LOCK_MAX_LIVE_TIME_MS,
  ) {}

  #expired(entry: LockEntry, now: number): boolean {
    return now - entry.lastUpdateTimestamp > this.lockMaxLiveTimeMs;
  }

  /**
   * RocketMQ: tryLockBatch — locks (or renews) every queue of `mqs` that is free, expired or already
   * this client's, and returns those; a queue held by another live client is left out.
   */
  tryLockBatch(group: string, mqs: readonly LockedQueue[], clientId: string): LockedQueue[] {
    const now = this.clock.now();
    let groupTable = this.#table.get(group);
    if (!groupTable) this.#table.set(group, (groupTable = new Map()));
    const locked: LockedQueue[] = [];
    const seen = new Set<string>();
    for (const mq of mqs) {
      const key = queueKey(mq);
      if (seen.has(key)) continue;
      seen.add(key);
      const entry = groupTable.get(key);
      if (!entry) {
        groupTable.set(key, { clientId, lastUpdateTimestamp: now });
        this.logger.info({ group, mq, clientId }, 'queue lock taken');
        locked.push(mq);
      } else if (entry.clientId === clientId) {
        entry.lastUpdateTimestamp = now;
        locked.push(mq);
      } else if (this.#expired(entry, now)) {
        this.logger.warn(
          { group, mq, oldClientId: entry.clientId, newClientId: clientId },
          'expired queue lock taken over',
        );
        entry.clientId = clientId;
        entry.lastUpdateTimestamp = now;
        locked.push(mq);
      } else {
        this.logger.debug({ group, mq, holder: entry.clientId, clientId }, 'queue locked by another client');
      }
    }
    // Expired locks of the group are forgotten here, so the table never keeps more than live locks
    // plus those of groups that stopped locking (bounded by the groups and queues that exist).
    for (const [key, entry] of groupTable) if (this.#expired(entry, now)) groupTable.delete(key);
    if (groupTable.size === 0) this.#table.delete(group);
    return locked;
  }

  /** RocketMQ: unlockBatch — releases the queues of `mqs` that this client holds; others are left alone. */
  unlockBatch(group: string, mqs: readonly LockedQueue[], clientId: string): void {
    const groupTable = this.#table.get(group);
    if (!groupTable) return;
    for (const mq of mqs) {
      const key = queueKey(mq);
      const entry = groupTable.get(key);
      if (!entry) continue;
      if (entry.clientId === clientId) {
        groupTable.delete(key);
        this.logger.info({ group, mq, clientId }, 'queue lock released');
      } else {
        this.logger.warn({ group, mq, holder: entry.clientId, clientId }, 'unlock of a queue held by another client');
      }
    }
    if (groupTable.size === 0) this.#table.delete(group);
  }

  /** The client holding a live lock on `mq` for `group`, or undefined. */
  lockHolder(group: string, mq: LockedQueue): string | undefined {
    const entry = this.#table.get(group)?.get(queueKey(mq));
    return entry && !this.#expired(entry, this.clock.now()) ? entry.clientId : undefined;
  }
}
