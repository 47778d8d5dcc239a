/**
 * Broker SIGKILL through the clients (short version of test/soak/broker-kill.soak.mjs): a CLI broker
 * child under produce (Producer) and consume (PushConsumer group) is SIGKILLed twice — each time after
 * 30 more acknowledged sends — and restarted on the same store. Every acknowledged message is consumed
 * afterwards, in both flush modes (ASYNC_FLUSH loses nothing either: a SIGKILL of the process alone
 * leaves the page cache, which holds every written byte).
 */
import { brokerKillRun } from '../../support/broker-kill.mjs';

const TIMEOUT_MS = 120_000;

describe('broker SIGKILL under produce and consume, through the clients', () => {
  test.each([
    ['ASYNC_FLUSH', false],
    ['SYNC_FLUSH', true],
  ])(
    '%s: nothing acknowledged is lost across 2 kills',
    async (mode, syncFlush) => {
      const r = await brokerKillRun({ syncFlush, kills: 2, killAfterAcks: 30, tag: `j${mode.slice(0, 1)}` });
      expect(r.acknowledged).toBeGreaterThanOrEqual(90);
      expect(r.lost).toBe(0);
      expect(r.consumed).toBeGreaterThanOrEqual(r.acknowledged);
    },
    TIMEOUT_MS,
  );
});
