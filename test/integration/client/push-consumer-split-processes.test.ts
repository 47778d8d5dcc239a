/**
 * A group holding 512 queues across two processes: the members split them, hold them while messages
 * keep coming, and every message is delivered once. Short here; `npm run soak -- many-queues` holds
 * them 60 s.
 */
import { runSplitAcrossProcesses } from '../../support/many-queues.mjs';

it.each(['http', 'tcp'] as const)(
  '%s: 512 queues across two processes, split evenly, nothing lost or read twice',
  async (transport) => {
    const r = await runSplitAcrossProcesses({ transport, queues: 512, holdMs: 5000 });
    expect(r.held).toEqual([256, 256]);
    expect(r.missing).toEqual([]);
    expect(r.delivered).toBe(r.sent);
    expect(r.duplicates).toBe(0);
    expect(r.members.flatMap((m) => m.problems).filter((p) => /timed out|heartbeat failed/.test(p))).toEqual([]);
  },
  180_000,
);
