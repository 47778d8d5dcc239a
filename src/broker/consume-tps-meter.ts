/**
 * Messages consumed per second by each consumer group, over the last minute, as the committed offsets
 * move (RocketMQ reports the same figure, `consumeTps`, from its BrokerStatsManager). Counted in
 * one-second buckets; a commit that moves an offset back counts nothing.
 * @pure
 */

const WINDOW_S = 60;

interface Buckets {
  seconds: number[];
  counts: number[];
}

export class ConsumeTpsMeter {
  private readonly groups = new Map<string, Buckets>();

  /** Counts `messages` consumed by `group` at time `nowMs`. */
  add(group: string, messages: number, nowMs: number): void {
    if (!(messages > 0)) return;
    let b = this.groups.get(group);
    if (!b)
      this.groups.set(
        group,
        (b = { seconds: new Array<number>(WINDOW_S).fill(-1), counts: new Array<number>(WINDOW_S).fill(0) }),
      );
    const sec = Math.floor(nowMs / 1000);
    const i = sec % WINDOW_S;
    if (b.seconds[i] !== sec) {
      b.seconds[i] = sec;
      b.counts[i] = 0;
    }
    b.counts[i] = (b.counts[i] ?? 0) + messages;
  }

  /** The group's messages per second over the minute before `nowMs` (0 for a group never seen). */
  tps(group: string, nowMs: number): number {
    const b = this.groups.get(group);
    if (!b) return 0;
    const sec = Math.floor(nowMs / 1000);
    let sum = 0;
    for (let i = 0; i < WINDOW_S; i++) {
      const s = b.seconds[i] ?? -1;
      if (s > sec - WINDOW_S && s <= sec) sum += b.counts[i] ?? 0;
    }
    return sum / WINDOW_S;
  }

  /** Forgets a group. */
  remove(group: string): void {
    this.groups.delete(group);
  }
}
