/** The checks of the many-queues tests (HTTP and TCP), on the shared scenario of test/support/many-queues.mjs. */
import { IN_FLIGHT_BOUND, runManyQueues, type ManyQueuesOptions } from '../../support/many-queues.mjs';

/** Queues of the topic (MANY_QUEUES) and how long one member holds them all (MANY_QUEUES_HOLD_MS). */
export const QUEUES = Number(process.env.MANY_QUEUES ?? 1000);
export const HOLD_MS = Number(process.env.MANY_QUEUES_HOLD_MS ?? 15_000);

export async function checkManyQueues(transport: ManyQueuesOptions['transport']): Promise<void> {
  const r = await runManyQueues({
    transport,
    queues: QUEUES,
    holdMs: HOLD_MS,
    log: (l) => process.stdout.write(`${l}\n`),
  });
  process.stdout.write(
    `${transport}: ${r.queues} queues held ${r.holdMs} ms, sent ${r.sent}, duplicates ${r.duplicates}, ready ${r.readyA} / ${r.readyB} ms\n`,
  );
  expect(r.problems).toEqual([]);
  expect(r.pullErrors).toEqual([]);
  expect(r.missing).toEqual([]);
  expect(r.removedBeforeJoin).toBe(0);
  expect(r.removedFromA).toEqual([QUEUES / 2]);
  expect(r.split).toEqual([QUEUES / 2, QUEUES / 2]);
  expect(r.delivered).toBe(r.sent);
  // Only what was in flight while the queues changed hands may come twice.
  expect(r.duplicates).toBeLessThanOrEqual(IN_FLIGHT_BOUND);
}
