/**
 * ProducerManager: the producer groups clients announce in their heartbeats (RocketMQ: ProducerManager).
 * Producers only matter for bookkeeping here (this broker makes no transaction check-backs); a producer
 * silent for `channelExpiredTimeoutMs` is dropped by the same rule as a consumer.
 * @pure
 */
import type { Clock } from '../common/clock.js';

export class ProducerManager {
  /** group → clientId → last heartbeat, ms. */
  private readonly groups = new Map<string, Map<string, number>>();

  constructor(
    private readonly clock: Clock,
    private readonly channelExpiredTimeoutMs: number,
  ) {}

  registerProducer(group: string, clientId: string): void {
    let members = this.groups.get(group);
    if (!members) this.groups.set(group, (members = new Map()));
    members.set(clientId, this.clock.now());
  }

  unregisterProducer(group: string, clientId: string): boolean {
    const members = this.groups.get(group);
    if (!members) return false;
    const removed = members.delete(clientId);
    if (members.size === 0) this.groups.delete(group);
    return removed;
  }

  /** Client ids of a producer group's live members. */
  getClientIds(group: string): string[] {
    return [...(this.groups.get(group)?.keys() ?? [])];
  }

  getGroups(): string[] {
    return [...this.groups.keys()];
  }

  /** The member's last heartbeat, ms, or undefined when it is not a member. */
  lastUpdateTimestamp(group: string, clientId: string): number | undefined {
    return this.groups.get(group)?.get(clientId);
  }

  /** RocketMQ: ProducerManager.scanNotActiveChannel. Returns the number of members dropped. */
  scanNotActiveChannel(): number {
    const now = this.clock.now();
    let dropped = 0;
    for (const [group, members] of this.groups) {
      for (const [clientId, last] of members) {
        if (now - last > this.channelExpiredTimeoutMs) {
          members.delete(clientId);
          dropped += 1;
        }
      }
      if (members.size === 0) this.groups.delete(group);
    }
    return dropped;
  }
}
