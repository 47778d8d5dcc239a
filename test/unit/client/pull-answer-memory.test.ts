import { ProcessQueue } from '../../../src/client/process-queue.js';
import { handOut, ownAnswer, trackAnswer } from '../../../src/client/pull-answer-memory.js';
import type { MessageExt } from '../../../src/common/message.js';
import { msgAt } from './helpers.js';

/** An answer of `n` messages whose bodies (4 bytes each, filled with their offset) are views of one private copy. */
function answerOf(offsets: number[]): { own: Buffer; msgs: MessageExt[] } {
  const own = ownAnswer(Buffer.concat(offsets.map((o) => Buffer.alloc(4, o))));
  const msgs = offsets.map((o, i) => msgAt(o, 0, { body: own.subarray(i * 4, i * 4 + 4) }));
  return { own, msgs };
}

describe('pull answer memory: freed once every message of the answer left the ProcessQueue', () => {
  it('ownAnswer copies into memory of its own, never a view of the input or of a shared pool', () => {
    const input = Buffer.from('abcdef');
    const own = ownAnswer(input);
    expect(own.equals(input)).toBe(true);
    expect(own.buffer).not.toBe(input.buffer);
    expect(own.byteOffset).toBe(0);
    expect(own.buffer.byteLength).toBe(input.length);
  });

  it('hands out copies; the answer is detached after the last held message is removed, the copies stay intact', () => {
    const { own, msgs } = answerOf([0, 1, 2]);
    trackAnswer(own, msgs);
    const pq = new ProcessQueue(0);
    pq.putMessage(msgs);
    const given = handOut(msgs);
    expect(given).toHaveLength(3);
    given.forEach((m, i) => {
      expect(m).not.toBe(msgs[i]);
      expect(m.queueOffset).toBe(i);
      expect(m.body?.buffer).not.toBe(own.buffer);
      expect([...(m.body ?? [])]).toEqual([i, i, i, i]);
    });
    expect(pq.removeMessage([given[0] as MessageExt, given[1] as MessageExt], 0)).toBe(2);
    expect(own.length).toBe(12); // one message of the answer is still held
    expect(pq.msgSize).toBe(4);
    expect(pq.removeMessage([given[2] as MessageExt], 0)).toBe(3);
    expect(own.buffer.byteLength).toBe(0); // detached: its memory is given back
    given.forEach((m, i) => expect([...(m.body ?? [])]).toEqual([i, i, i, i]));
    expect(pq.msgSize).toBe(0);
  });

  it('a message handed out twice (a local retry) gets a fresh copy from the held message each time', () => {
    const { own, msgs } = answerOf([5]);
    trackAnswer(own, msgs);
    const first = handOut(msgs)[0] as MessageExt;
    (first.body as Buffer).fill(9); // the application scribbles on its copy
    const again = handOut(msgs)[0] as MessageExt;
    expect([...(again.body ?? [])]).toEqual([5, 5, 5, 5]);
  });

  it('messages not from a tracked answer are handed out as they are', () => {
    const plain = [msgAt(1), msgAt(2, 0, { body: null })];
    const given = handOut(plain);
    expect(given).not.toBe(plain);
    expect(given[0]).toBe(plain[0]);
    expect(given[1]).toBe(plain[1]);
  });

  it('an offset put twice leaves both answers to the collector (the replaced message may still be consumed)', () => {
    const a = answerOf([7]);
    const b = answerOf([7]);
    trackAnswer(a.own, a.msgs);
    trackAnswer(b.own, b.msgs);
    const pq = new ProcessQueue(0);
    pq.putMessage(a.msgs);
    pq.putMessage(b.msgs);
    pq.removeMessage(a.msgs, 0);
    expect(a.own.length).toBe(4);
    expect(b.own.length).toBe(4);
    expect([...(a.msgs[0]?.body ?? [])]).toEqual([7, 7, 7, 7]);
  });

  it('messages filtered out before the ProcessQueue are not waited for', () => {
    const { own, msgs } = answerOf([0, 1, 2]);
    const kept = [msgs[0] as MessageExt, msgs[2] as MessageExt]; // offset 1 failed the tag re-check
    trackAnswer(own, kept);
    const pq = new ProcessQueue(0);
    pq.putMessage(kept);
    pq.removeMessage(kept, 0);
    expect(own.buffer.byteLength).toBe(0);
  });

  it('a dropped queue (cleared, never removed) keeps its answers readable', () => {
    const { own, msgs } = answerOf([0, 1]);
    trackAnswer(own, msgs);
    const pq = new ProcessQueue(0);
    pq.putMessage(msgs);
    pq.clear();
    expect([...(msgs[1]?.body ?? [])]).toEqual([1, 1, 1, 1]);
  });
});
