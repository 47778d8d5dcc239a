/**
 * The start-up settle of a CLUSTERING consumer: before it divides the queues for the first time, a
 * member waits until its group's membership has stopped changing.
 *
 * Why: members that start together (a deployment rolling out four replicas, a test starting four
 * consumers with `Promise.all`) each heartbeat and then divide the queues by what the broker knows at
 * that instant. The first to ask sees itself alone and takes every queue, the next sees two members,
 * and so on; each pulls from the committed offsets before the later rebalances hand the queues over,
 * so the first batches of many queues are read by two members. RocketMQ has this window too.
 *
 * How: after its heartbeat is accepted the member asks each broker for the group's member list, and
 * asks again every `pollMs` (the broker also pushes membership news, which wakes it at once). It is
 * settled once the lists have not changed for `quietMs`, and in any case after `maxMs`. Only then does
 * its first rebalance read start offsets and send first pulls, which go out at once instead of after
 * RocketMQ's 500 ms first-pull delay. A lone consumer sees no change and is settled after `quietMs`,
 * which is less than that delay: it gets its first message no later than without the settle.
 *
 * Members that start within `quietMs` of each other all see the final membership before their first
 * pull, so none reads a queue another member also reads. A member that joins a group that is already
 * consuming is not helped by this alone: the running members hand queues over as RocketMQ does (what
 * they had in flight may come twice); the settle still gives them `quietMs` to drop those queues and
 * write their offsets before the new member reads them.
 * @pure
 */
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';

export interface StartSettleOptions {
  /** The group's members as the brokers know them now (one list per broker, any order). */
  members(): Promise<readonly (readonly string[])[]>;
  /** Settled after this long without a change, ms. 0: no settle. */
  quietMs: number;
  /** Settled after this long at the latest, ms. */
  maxMs: number;
  /** How often the member lists are asked for while settling, ms. */
  pollMs: number;
  clock: Clock;
  logger: Logger;
  /** Aborted at shutdown: the settle ends at once (resolves). */
  signal: AbortSignal;
}

/** What a settle saw. */
export interface SettleResult {
  /** How long it took, ms. */
  elapsedMs: number;
  /** How many times the membership changed while settling. */
  changes: number;
  /** Ended by `maxMs` rather than by a quiet period. */
  timedOut: boolean;
}

/** One signature for the member lists of all brokers (order-independent). */
function signatureOf(lists: readonly (readonly string[])[]): string {
  return lists
    .map((ids) => [...ids].sort().join(','))
    .sort()
    .join('|');
}

/**
 * Waits until the membership is quiet (see the file comment). Never rejects: a failed member-list call
 * counts as no news, so a broker that cannot be asked delays the first pull by `maxMs` at most.
 * `wake` returns a function that cuts the current wait short (call it on membership news).
 */
export function settleMembership(o: StartSettleOptions): { done: Promise<SettleResult>; wake: () => void } {
  let wakeNow: (() => void) | undefined;
  const wake = (): void => wakeNow?.();
  const done = (async (): Promise<SettleResult> => {
    const start = o.clock.now();
    if (o.quietMs <= 0) return { elapsedMs: 0, changes: 0, timedOut: false };
    const read = async (): Promise<string | undefined> => {
      try {
        return signatureOf(await o.members());
      } catch (err) {
        o.logger.debug({ err }, 'start settle: asking for the group members failed');
        return undefined;
      }
    };
    let last = await read();
    let lastChange = o.clock.now();
    let changes = 0;
    for (;;) {
      const now = o.clock.now();
      if (o.signal.aborted) return { elapsedMs: now - start, changes, timedOut: false };
      if (now - lastChange >= o.quietMs) return { elapsedMs: now - start, changes, timedOut: false };
      if (now - start >= o.maxMs) return { elapsedMs: now - start, changes, timedOut: true };
      const until = Math.min(lastChange + o.quietMs, start + o.maxMs, now + o.pollMs);
      await new Promise<void>((resolve) => {
        const finish = (): void => {
          o.clock.clearTimeout(handle);
          o.signal.removeEventListener('abort', finish);
          wakeNow = undefined;
          resolve();
        };
        const handle = o.clock.setTimeout(finish, Math.max(0, until - now));
        wakeNow = finish;
        o.signal.addEventListener('abort', finish, { once: true });
      });
      if (o.signal.aborted) continue;
      const seen = await read();
      if (seen !== undefined && seen !== last) {
        if (last !== undefined) changes++;
        last = seen;
        lastChange = o.clock.now();
      }
    }
  })();
  return { done, wake };
}
