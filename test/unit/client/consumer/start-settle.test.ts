import { settleMembership } from '../../../../src/client/consumer/start-settle.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { ManualClock, flush } from '../../../support/manual-clock.js';

/** A member list that changes at given times (ms after the call). */
function membership(clock: ManualClock, changes: [at: number, ids: string[]][]) {
  const t0 = clock.now();
  let asked = 0;
  return {
    get asked() {
      return asked;
    },
    members: async () => {
      asked++;
      let ids: string[] = [];
      for (const [at, list] of changes) if (clock.now() - t0 >= at) ids = list;
      return [ids];
    },
  };
}

/** Moves the clock 5 ms at a time, letting the settle's awaits run between steps. */
async function step(clock: ManualClock, ms: number): Promise<void> {
  for (let t = 0; t < ms; t += 5) {
    await flush();
    await clock.advanceAsync(Math.min(5, ms - t));
  }
  await flush();
}

function settle(clock: ManualClock, members: () => Promise<string[][]>, signal = new AbortController().signal) {
  return settleMembership({ members, quietMs: 300, maxMs: 3000, pollMs: 75, clock, logger: silentLogger, signal });
}

describe('start-up settle (members starting together divide the queues only once membership is quiet)', () => {
  it('a lone member settles after the quiet period, having seen no change', async () => {
    const clock = new ManualClock();
    const m = membership(clock, [[0, ['a']]]);
    const s = settle(clock, m.members);
    let done = false;
    void s.done.then(() => (done = true));
    await step(clock, 295);
    expect(done).toBe(false);
    await step(clock, 10);
    await expect(s.done).resolves.toEqual({ elapsedMs: 300, changes: 0, timedOut: false, members: ['a'] });
  });

  it('a member every broker lists alone at its first look is settled at once; one that sees others is not', async () => {
    const clock = new ManualClock();
    const opts = { quietMs: 300, maxMs: 3000, pollMs: 75, clock, logger: silentLogger, self: 'a' };
    const signal = new AbortController().signal;
    const lone = settleMembership({ ...opts, signal, members: async () => [['a'], ['a']] });
    await flush();
    await expect(lone.done).resolves.toEqual({ elapsedMs: 0, changes: 0, timedOut: false, members: ['a'] });
    // Another member already registered: this one is the later starter and waits for the quiet period.
    const joiner = settleMembership({ ...opts, signal, members: async () => [['b', 'a']] });
    // One broker does not list it yet: not known to be alone.
    const unseen = settleMembership({ ...opts, signal, members: async () => [['a'], []] });
    await step(clock, 305);
    await expect(joiner.done).resolves.toEqual({ elapsedMs: 300, changes: 0, timedOut: false, members: ['b', 'a'] });
    // The brokers' lists differ: no member list to divide by, the first division asks again.
    expect(await unseen.done).toStrictEqual({ elapsedMs: 300, changes: 0, timedOut: false, members: undefined });
  });

  it('each change restarts the quiet period; members joining within it are all seen', async () => {
    const clock = new ManualClock();
    const m = membership(clock, [
      [0, ['a']],
      [100, ['a', 'b']],
      [200, ['a', 'b', 'c']],
    ]);
    const s = settle(clock, m.members);
    await step(clock, 1000);
    // Seen at the polls of 150 and 225 ms; quiet 300 ms after the last one.
    await expect(s.done).resolves.toEqual({ elapsedMs: 525, changes: 2, timedOut: false, members: ['a', 'b', 'c'] });
  });

  it('a membership that keeps changing ends the settle at maxMs', async () => {
    const clock = new ManualClock();
    const changes: [number, string[]][] = Array.from({ length: 60 }, (_, i) => [i * 100, [`m${i}`]]);
    const s = settle(clock, membership(clock, changes).members);
    await step(clock, 4000);
    const r = await s.done;
    expect(r).toMatchObject({ elapsedMs: 3000, timedOut: true });
    // Still changing: its last list is not handed to the first division.
    expect(r.members).toBeUndefined();
  });

  it('membership news wakes it at once; a failing broker counts as no news; abort ends it', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const s = settle(clock, async () => {
      calls++;
      if (calls === 2) throw new Error('down');
      return [['a']];
    });
    await flush();
    s.wake();
    await flush();
    expect(calls).toBe(2);
    const ac = new AbortController();
    const t = settle(clock, async () => [['a']], ac.signal);
    await flush();
    ac.abort();
    await expect(t.done).resolves.toMatchObject({ timedOut: false });
    await step(clock, 400);
    // The failed read kept the list read before it.
    await expect(s.done).resolves.toMatchObject({ changes: 0, timedOut: false, members: ['a'] });
  });
});
