import { ConsumerStartup, Deferred } from '../../../../src/client/consumer/consumer-startup.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { ManualClock, flush } from '../../../support/manual-clock.js';

/** A start-up whose settle asks `members` (this member is 'a'); the ready probe answers at once. */
function startup(clock: ManualClock, members: () => Promise<string[][]>, settle = true): ConsumerStartup {
  return new ConsumerStartup(
    {
      settle: settle
        ? { members, self: 'a', quietMs: 300, maxMs: 3000, pollMs: 75, clock, logger: silentLogger }
        : undefined,
      probe: async () => undefined,
      now: () => clock.now(),
      logger: silentLogger,
      onReady: () => undefined,
    },
    new Deferred<void>(),
  );
}

describe('ConsumerStartup: the settle hands its member list to the first division of the queues', () => {
  it('once per topic, in the first pass only', async () => {
    const clock = new ManualClock();
    let asked = 0;
    const s = startup(clock, async () => (asked++, [['a']]));
    await s.settled;
    expect(asked).toBe(1);
    expect(s.settledMembers('T')).toEqual(['a']);
    expect(s.settledMembers('%RETRY%G')).toEqual(['a']);
    // The same topic again within the pass (a pass run again): the broker is asked.
    expect(s.settledMembers('T')).toBeUndefined();
    s.afterPass(false, []);
    expect(s.settledMembers('T2')).toBeUndefined();
    s.end(new Error('test over'));
    await flush();
  });

  it('nothing to hand over without a settle, or when the brokers disagreed', async () => {
    const clock = new ManualClock();
    const none = startup(clock, async () => [['a']], false);
    await none.settled;
    expect(none.settledMembers('T')).toBeUndefined();
    const split = startup(clock, async () => [['a', 'b'], ['a']]);
    let settled = false;
    void split.settled.then(() => (settled = true));
    for (let i = 0; i < 200 && !settled; i++) await clock.advanceAsync(5);
    await split.settled;
    expect(split.settledMembers('T')).toBeUndefined();
    for (const s of [none, split]) s.end(new Error('test over'));
    await flush();
  });
});
