/**
 * RocketMQ's producer latency fault tolerance (MQFaultStrategy + LatencyFaultToleranceImpl): after each
 * send attempt the producer records how long the broker took; a slow broker, or one that failed, is
 * "not available" for a while, and queue selection skips it while another broker is available.
 *
 * | send latency at least (ms) | 0 | 50 | 100 | 550 | 1000 | 2000 | 3000 | 15000 |
 * |---|---|---|---|---|---|---|---|---|
 * | broker avoided for (ms)    | 0 | 0  | 0   | 30000 | 60000 | 120000 | 180000 | 600000 |
 *
 * A failed attempt counts as a 30 s latency (isolation), so the broker is avoided for 10 minutes, or
 * until a later successful send to it (a retry that found no other broker) clears the mark.
 * @pure
 */
import type { MessageQueue } from '../../common/message.js';

/** RocketMQ's latencyMax, ms. */
export const LATENCY_MAX_MS: readonly number[] = Object.freeze([50, 100, 550, 1000, 2000, 3000, 15000]);
/** RocketMQ's notAvailableDuration, ms, one per latencyMax step. */
export const NOT_AVAILABLE_DURATION_MS: readonly number[] = Object.freeze([
  0, 0, 30_000, 60_000, 120_000, 180_000, 600_000,
]);
/** The latency a failed attempt is recorded with (RocketMQ's isolation). */
export const ISOLATION_LATENCY_MS = 30_000;

interface FaultItem {
  latencyMs: number;
  availableAt: number;
}

/** How long a broker that answered in `latencyMs` is avoided (RocketMQ's computeNotAvailableDuration). */
export function notAvailableDurationMs(latencyMs: number): number {
  for (let i = LATENCY_MAX_MS.length - 1; i >= 0; i--)
    if (latencyMs >= (LATENCY_MAX_MS[i] as number)) return NOT_AVAILABLE_DURATION_MS[i] as number;
  return 0;
}

export class LatencyFaultTolerance {
  readonly #items = new Map<string, FaultItem>();
  readonly #now: () => number;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Records an attempt on `brokerName`: its latency, or a failure (`isolation`). */
  update(brokerName: string, latencyMs: number, isolation: boolean): void {
    const latency = isolation ? ISOLATION_LATENCY_MS : latencyMs;
    this.#items.set(brokerName, { latencyMs: latency, availableAt: this.#now() + notAvailableDurationMs(latency) });
  }

  isAvailable(brokerName: string): boolean {
    const item = this.#items.get(brokerName);
    return item === undefined || this.#now() >= item.availableAt;
  }

  /**
   * Picks a queue: round robin from `index` over `mqs`, taking the first whose broker is available
   * (and, on a retry, not `lastBrokerName` when another broker has one). When every broker is avoided,
   * the one that becomes available first is used. Returns the queue and the index to continue from.
   */
  select(
    mqs: readonly MessageQueue[],
    index: number,
    lastBrokerName: string | undefined,
  ): { mq: MessageQueue; index: number } {
    if (mqs.length === 0) throw new RangeError('no message queue to select from');
    let firstAvailable: { mq: MessageQueue; index: number } | undefined;
    for (let i = 0; i < mqs.length; i++) {
      index = (index + 1) & 0x7fffffff;
      const mq = mqs[index % mqs.length] as MessageQueue;
      if (!this.isAvailable(mq.brokerName)) continue;
      if (mq.brokerName !== lastBrokerName) return { mq, index };
      firstAvailable ??= { mq, index };
    }
    if (firstAvailable) return firstAvailable;
    // Every broker is avoided: take the queue of the broker whose avoidance ends first.
    let best: { mq: MessageQueue; index: number; at: number } | undefined;
    for (let i = 0; i < mqs.length; i++) {
      index = (index + 1) & 0x7fffffff;
      const mq = mqs[index % mqs.length] as MessageQueue;
      const at = this.#items.get(mq.brokerName)?.availableAt ?? 0;
      if (!best || at < best.at || (at === best.at && best.mq.brokerName === lastBrokerName)) best = { mq, index, at };
    }
    return { mq: (best as { mq: MessageQueue }).mq, index: (best as { index: number }).index };
  }
}
