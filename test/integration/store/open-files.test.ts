/**
 * The store keeps at most maxOpenConsumeQueueFiles consume-queue descriptors open, however many queue
 * files it has: more queue files than the cap are all served correctly (reads of files on disk, writes,
 * flushes, retention and a reopen), and the process's descriptors into the store stay bounded.
 */
import fs from 'node:fs';
import type { MessageStore } from '../../../src/store/message-store.js';
import { drainBodies, useTinyStores } from '../../support/store-fixture.js';
import { msg, uniqueTopic } from './conformance.js';

const CAP = 8;
const QUEUES = 24;
/** Messages per queue: 3 consume-queue files of 10 units each (the last one partly filled). */
const PER_QUEUE = 25;

/** Descriptors of this process open on files under `dir`. */
function fdsUnder(dir: string): number {
  const real = fs.realpathSync(dir);
  let n = 0;
  for (const fd of fs.readdirSync('/proc/self/fd')) {
    try {
      if (fs.readlinkSync(`/proc/self/fd/${fd}`).startsWith(`${real}/consumequeue/`)) n++;
    } catch {
      // closed between readdir and readlink
    }
  }
  return n;
}

const body = (q: number, i: number): string => `q${q}-m${i}`;

describe('bounded consume-queue descriptors', () => {
  const stores = useTinyStores('rmq-openfiles-');

  async function fill(s: MessageStore, topic: string, from: number, to: number): Promise<void> {
    const sends: Promise<unknown>[] = [];
    for (let i = from; i < to; i++)
      for (let q = 0; q < QUEUES; q++) sends.push(s.putMessage(msg(topic, body(q, i), { queueId: q })));
    await Promise.all(sends);
  }

  async function checkAll(s: MessageStore, topic: string, count: number): Promise<void> {
    for (let q = 0; q < QUEUES; q++) {
      const want = [...Array(count).keys()].map((i) => body(q, i));
      expect(await drainBodies(s, topic, q)).toEqual(want);
      expect(s.openConsumeQueueFiles).toBeLessThanOrEqual(CAP);
      expect(fdsUnder(stores.dir)).toBeLessThanOrEqual(CAP);
    }
  }

  test(`${QUEUES * 3} queue files with at most ${CAP} descriptors: every queue is served, before and after a reopen`, async () => {
    const topic = uniqueTopic();
    // Large commit-log segments: retention below deletes nothing, only the queues' files are at stake.
    const options = { maxOpenConsumeQueueFiles: CAP, mappedFileSizeCommitLog: 1024 * 1024 };
    const s = await stores.open(options);
    // Writes, timer flushes (every 20 ms) and reads interleave.
    const reading = (async () => {
      for (let round = 0; round < 5; round++) {
        for (let q = 0; q < QUEUES; q++) await s.getMessage('G', topic, q, 0, 32);
        await new Promise((r) => setImmediate(r));
      }
    })();
    await fill(s, topic, 0, PER_QUEUE);
    await reading;
    expect(await s.deleteExpiredFiles()).toBe(0);
    await checkAll(s, topic, PER_QUEUE);
    await s.shutdown();
    expect(fdsUnder(stores.dir)).toBe(0);

    // Reopened: the older files of each queue are read from disk, through the bounded set.
    const again = await stores.open(options);
    await checkAll(again, topic, PER_QUEUE);
    await fill(again, topic, PER_QUEUE, PER_QUEUE + 12);
    await checkAll(again, topic, PER_QUEUE + 12);
    await again.shutdown();
    const third = await stores.open(options);
    await checkAll(third, topic, PER_QUEUE + 12);
  });
});
