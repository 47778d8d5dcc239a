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
 * How: after its heartbeat is accepted the member asks each broker for the group's member list. When
 * every broker lists this member alone, it is settled at once: any member starting with it registers
 * later, so that member's own first look sees this one and it settles (below) while this one hands the
 * queues over. Otherwise the member asks again every `pollMs` (the broker also pushes membership news,
 * which wakes it at once) and is settled once the lists have not changed for `quietMs`, and in any
 * case after `maxMs`. Only then does its first rebalance read start offsets and send first pulls, which
 * go out at once instead of after RocketMQ's 500 ms first-pull delay; that first division uses the
 * member list the settle ended on (when the brokers agree on it) rather than asking for it again.
 *
 * Members that start within `quietMs` of each other all see the final membership before their first
 * pull, except the first, which may have started alone: it gives up the queues the others take within
 * their quiet period, waiting for the batches it is consuming from them and writing their offsets
 * first, so none of them reads a message it has read. A member that joins a group that is already
 * consuming gets the same hand-over from the running members, with the same `quietMs` to complete it.
 * @pure
 */
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';

export interface StartSettleOptions {
  /** The group's members as the brokers know them now (one list per broker, any order). */
  members(): Promise<readonly (readonly string[])[]>;
  /** This member's client id: alone in every list at the first look, it is settled at once. */
  self?: string;
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
  /**
   * The group's members when the settle ended quiet (or alone), when every broker listed the same ones:
   * the first division of the queues can use them instead of asking again.
   */
  members?: readonly string[];
}

/** True when every broker lists `self` and nobody else. */
function alone(lists: readonly (readonly string[])[], self: string): boolean {
  return lists.length > 0 && lists.every((ids) => ids.length === 1 && ids[0] === self);
}

/** One broker's member list as a key (order-independent). */
const listKey = (ids: readonly string[]): string => [...ids].sort().join(',');

/** The one member list every broker gave, or undefined when they differ (or none answered). */
function agreedMembers(lists: readonly (readonly string[])[] | undefined): readonly string[] | undefined {
  const [first] = lists ?? [];
  if (first === undefined) return undefined;
  const key = listKey(first);
  return lists?.every((ids) => listKey(ids) === key) ? [...first] : undefined;
}

/** One signature for the member lists of all brokers (order-independent). */
function signatureOf(lists: readonly (readonly string[])[]): string {
  return lists.map(listKey).sort().join('|');
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
    const readLists = async (): Promise<readonly (readonly string[])[] | undefined> => {
      try {
        return await o.members();
      } catch (err) {
        o.logger.debug({ err }, 'start settle: asking for the group members failed');
        return undefined;
      }
    };
    const first = await readLists();
    if (first && o.self !== undefined && alone(first, o.self))
      return { elapsedMs: o.clock.now() - start, changes: 0, timedOut: false, members: [o.self] };
    /** The last lists read (a failed read keeps the ones before). */
    let lists = first;
    let last = first && signatureOf(first);
    let lastChange = o.clock.now();
    let changes = 0;
    for (;;) {
      const now = o.clock.now();
      if (o.signal.aborted) return { elapsedMs: now - start, changes, timedOut: false };
      if (now - lastChange >= o.quietMs)
        return { elapsedMs: now - start, changes, timedOut: false, members: agreedMembers(lists) };
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
      const seenLists = await readLists();
      if (seenLists) lists = seenLists;
      const seen = seenLists && signatureOf(seenLists);
      if (seen !== undefined && seen !== last) {
        if (last !== undefined) changes++;
        last = seen;
        lastChange = o.clock.now();
      }
    }
  })();
  return { done, wake };
}
