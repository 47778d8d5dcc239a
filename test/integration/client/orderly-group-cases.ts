/**
 * Orderly consumption with 2–4 member processes in one group (test/support/orderly-group.mjs): members
 * join, one leaves gracefully and one is SIGKILLed in the middle of a listener call while a producer
 * sends sequence-numbered messages for many keys. Checked: each key's sequence in order across the group
 * (apart from the re-delivery of a suffix from the committed offset when a queue changes hands), no
 * queue consumed by two members at once (call times and the broker's lock grants and samples), nothing
 * lost. Per-queue and per-key mode; push-consumer-orderly-group-http.test.ts runs them over HTTP
 * endpoints, push-consumer-orderly-group-tcp.test.ts over TCP remoting (namesrvAddr), so Jest can run the
 * two files side by side. The long version runs in `npm run soak` (test/soak/orderly-group.soak.mjs).
 */
import { runOrderlyGroupScenario } from '../../support/orderly-group.mjs';

/** The cases of one transport: per-queue mode (batches of 3) and per-key mode (keyConcurrency 8). */
export function describeOrderlyGroup(transport: 'http' | 'tcp'): void {
  describe.each([{ keyConcurrency: undefined }, { keyConcurrency: 8 }])(
    `orderly group over ${transport}, keyConcurrency $keyConcurrency`,
    ({ keyConcurrency }) => {
      it('keeps every key in order, never lets two members consume a queue at once, and loses nothing', async () => {
        const r = await runOrderlyGroupScenario({
          transport,
          keyConcurrency,
          batch: keyConcurrency === undefined ? 3 : 1,
        });
        expect(r.problems).toEqual([]);
        expect(r.lost).toBe(0);
        expect({ leaves: r.leaves, kills: r.kills }).toEqual({ leaves: 1, kills: 1 });
        // The checks looked at something: hand-overs happened and lock samples fell inside listener calls.
        expect(r.grants).toBeGreaterThan(4);
        expect(r.sampledCalls).toBeGreaterThan(10);
        expect(r.deliveries).toBeGreaterThanOrEqual(r.sent);
        // Per-queue mode: a graceful hand-over re-delivers nothing (the batch ends, the offset is persisted,
        // then the lock is released). Per-key mode may re-deliver other keys' messages past the committed offset.
        if (keyConcurrency === undefined) expect(r.handoverRedeliveries).toEqual([]);
      }, 120_000);
    },
  );
}
