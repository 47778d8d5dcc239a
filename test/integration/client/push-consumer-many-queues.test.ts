/**
 * Held pulls never starve control calls: one member holds 1,000 queues of one broker while messages
 * keep coming (held pulls, heartbeats, membership watches and offset writes at once), with no call
 * timing out and no eviction; a second member joins and the queues split cleanly. Over HTTP and over
 * TCP remoting (one connection per broker). The 60 s version, and a group of 512
 * queues across two processes, run in `npm run soak -- many-queues`.
 */
import { checkManyQueues } from './many-queues-check.js';

// One transport after the other: each run loads the machine on its own (a broker, two consumers and a
// producer in this process). `npm test` runs this file after the rest, alone: it checks that no call
// times out, which a second Jest worker's child processes on a two-core machine could cause by CPU
// starvation alone.
it('HTTP: one member holds 1,000 queues with no timeout and no eviction; a second member splits them cleanly', async () => {
  await checkManyQueues('http');
}, 240_000);

it('TCP: one connection carries the 1,000 held pulls; no timeout, no eviction, a clean split', async () => {
  await checkManyQueues('tcp');
}, 240_000);
