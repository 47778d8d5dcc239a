import { jest } from '@jest/globals';
import { DecodeError } from '../../../../src/common/errors.js';
import { decodeMessages } from '../../../../src/common/codec/index.js';
import { buildSubscriptionData } from '../../../../src/filter/index.js';
import { ConsumeRequestCache, type LiteQueue } from '../../../../src/client/consumer/lite/lite-pull-cache.js';
import { ProcessQueue } from '../../../../src/client/consumer/process-queue.js';
import { createPullRequest } from '../../../../src/client/consumer/pull-request.js';
import { PullBufferPool, sizeClassOf } from '../../../../src/client/consumer/pull-buffer-pool.js';
import { storedRecord } from '../helpers.js';
import {
  DECODE_ERROR_PROPERTY,
  PulledBatch,
  tagsOf,
  type UndecodableMessage,
} from '../../../../src/client/consumer/pulled-batch.js';
import { newLayout, string2messageProperties } from '../../../../src/common/codec/index.js';

const mq = { topic: 'T', brokerName: 'broker-a', queueId: 1 };
const all = buildSubscriptionData('T', '*');

const record = (queueOffset: number, body: string, props: Record<string, string> | null = null, sysFlag = 0) =>
  storedRecord(queueOffset, props, body, sysFlag);

const answer = (...offsets: number[]): Buffer =>
  Buffer.concat(offsets.map((o) => record(o, `body-${o}`, { TAGS: o % 2 === 0 ? 'even' : 'odd' })));

describe('PullBufferPool', () => {
  it('rounds sizes up to quarters of a power of two, at least 4 KiB', () => {
    expect(sizeClassOf(1)).toBe(4096);
    expect(sizeClassOf(4096)).toBe(4096);
    expect(sizeClassOf(4097)).toBe(5120);
    expect(sizeClassOf(37_000)).toBe(40_960);
    expect(sizeClassOf(65_536)).toBe(65_536);
    for (const n of [5000, 9000, 33_000, 100_000, 1_000_001]) {
      expect(sizeClassOf(n)).toBeGreaterThanOrEqual(n);
      expect(sizeClassOf(n)).toBeLessThanOrEqual(n * 1.25);
      expect(sizeClassOf(sizeClassOf(n))).toBe(sizeClassOf(n));
    }
  });

  it('reuses given-back Buffers of the same class and keeps at most maxIdleBytes', () => {
    const pool = new PullBufferPool(6000);
    const a = pool.acquire(3000);
    const b = pool.acquire(4000);
    expect(a.length).toBe(4096);
    pool.release(a);
    pool.release(b); // 4096 more would pass 6000: left to the garbage collector
    expect(pool.idleBytes).toBe(4096);
    expect(pool.acquire(100)).toBe(a);
    expect(pool.idleBytes).toBe(0);
    pool.release(Buffer.alloc(5000)); // not a class size: never from this pool
    expect(pool.idleBytes).toBe(0);
  });
});

describe('PulledBatch', () => {
  it('indexes the records and decodes each like decodeMessages, stamped as processPullResult does', () => {
    const body = answer(4, 5, 6);
    const batch = new PulledBatch(mq, body, 2, 30, all, undefined, new PullBufferPool(0));
    expect(batch.count).toBe(3);
    expect([0, 1, 2].map((i) => batch.offsetAt(i))).toEqual([4, 5, 6]);
    expect([0, 1, 2].map((i) => batch.bodySizeAt(i))).toEqual([6, 6, 6]);
    const expected = decodeMessages(body);
    for (const [i, off] of [5, 4, 6].entries()) {
      const m = batch.decode(off);
      const e = expected.find((x) => x.queueOffset === off)!;
      expect(m).toEqual({
        ...e,
        brokerName: 'broker-a',
        properties: { ...e.properties, MIN_OFFSET: '2', MAX_OFFSET: '30' },
      });
      expect(batch.pending).toBe(2 - i);
    }
    expect(() => batch.decode(5)).toThrow(RangeError);
  });

  it('keeps only the records whose tag the subscription names', () => {
    const batch = new PulledBatch(mq, answer(1, 2, 3, 4), 0, 5, buildSubscriptionData('T', 'even'), undefined);
    expect(batch.count).toBe(2);
    expect([batch.offsetAt(0), batch.offsetAt(1)]).toEqual([2, 4]);
    expect(batch.decode(4).properties?.TAGS).toBe('even');
    expect(() => batch.decode(3)).toThrow(RangeError);
  });

  it.each([
    ['TAGS\u0001a\u0002', 'a'],
    ['KEYS\u0001k\u0002TAGS\u0001TagA\u0002WAIT\u0001true\u0002', 'TagA'],
    ['TAGS\u0001last', 'last'],
    ['TAGS\u0001one\u0002TAGS\u0001two\u0002', 'two'],
    ['TAGS\u0001one\u0002TAGS\u0001\u0002', 'one'],
    ['TAGS\u0001\u0002', undefined],
    ['XTAGS\u0001a\u0002TAGSX\u0001b\u0002TAG\u0001c\u0002', undefined],
    ['TAGS\u0001a\u0001b\u0002', 'a\u0001b'],
    ['TAGS\u0001标签-é\u0002', '标签-é'],
    ['\u0002\u0002TAGS\u0001x', 'x'],
    ['', undefined],
  ])('reads the tag re-check tag %j from the bytes as the properties map does', (props, tag) => {
    const bytes = Buffer.from(props, 'utf8');
    // Framed by other bytes, separators included, that are not the record's properties.
    const before = Buffer.from('\u0002TAGS\u0001no\u0002');
    const buf = Buffer.concat([before, bytes, Buffer.from('\u0002TAGS\u0001no')]);
    const l = newLayout();
    l.propsStart = before.length;
    l.propsLength = bytes.length;
    expect(tagsOf(buf, l)).toBe(tag);
    expect(tagsOf(buf, l)).toBe(string2messageProperties(props).TAGS);
  });

  it('reads a tag whose bytes are not valid UTF-8 as the properties map does', () => {
    const bytes = Buffer.from([0x54, 0x41, 0x47, 0x53, 0x01, 0x61, 0xe2, 0x82, 0x02, 0x4b, 0x01, 0xff, 0x02]);
    const l = newLayout();
    l.propsLength = bytes.length;
    expect(tagsOf(bytes, l)).toBe(string2messageProperties(bytes.toString('utf8')).TAGS);
  });

  it('gives its memory back once every record is decoded; handed-out bodies are copies of their own', () => {
    const pool = new PullBufferPool(1 << 20);
    const batch = new PulledBatch(mq, answer(0, 1), 0, 2, all, undefined, pool);
    const first = batch.decode(0);
    expect(pool.idleBytes).toBe(0);
    const second = batch.decode(1);
    expect(pool.idleBytes).toBe(4096);
    pool.acquire(1).fill(0x58); // the next answer overwrites the recycled memory
    expect(first.body?.toString()).toBe('body-0');
    expect(second.body?.toString()).toBe('body-1');
  });

  it('fails the answer on a corrupt header, as decoding it would', () => {
    const body = answer(0, 1);
    body.writeInt32BE(0x12345678, body.readInt32BE(0) + 4); // the second record's magic code
    expect(() => new PulledBatch(mq, body, 0, 2, all, undefined)).toThrow(DecodeError);
  });

  it('hands a record whose body cannot be decoded on, flagged, and tells onUndecodable', () => {
    // Flagged compressed (sysFlag bit 0) but stored plain: inflating it fails.
    const body = Buffer.concat([record(0, 'not zlib', null, 1), record(1, 'fine')]);
    const seen: UndecodableMessage[] = [];
    const batch = new PulledBatch(mq, body, 0, 2, all, (u, from) => {
      expect(from).toBe(mq);
      seen.push(u);
    });
    const bad = batch.decode(0);
    expect(bad.body?.toString()).toBe('not zlib');
    expect(bad.properties?.[DECODE_ERROR_PROPERTY]).toEqual(expect.any(String));
    expect(seen.map((u) => u.message)).toEqual([bad]);
    expect(batch.decode(1).body?.toString()).toBe('fine');
  });
});

describe('ProcessQueue with raw answers', () => {
  it('counts raw messages as decoded ones, decodes each once at hand-out, and commits by offset', () => {
    const pq = new ProcessQueue(0);
    const batch = new PulledBatch(mq, answer(10, 11, 12), 0, 20, all, undefined);
    expect(pq.putBatch(batch)).toBe(true);
    expect(pq.msgCount).toBe(3);
    expect(pq.msgSize).toBe(21);
    expect(pq.queueOffsetMax).toBe(12);
    expect(pq.msgAccCnt).toBe(8);
    expect(pq.getMaxSpan()).toBe(2);
    const m11 = pq.handOut(11)!;
    expect(m11.queueOffset).toBe(11);
    expect(pq.handOut(11)).toBe(m11); // decoded once, then held decoded
    expect(batch.pending).toBe(2);
    expect(pq.removeMessage([m11], 1)).toBe(10);
    expect(pq.handOut(11)).toBeUndefined();
    expect(pq.msgSize).toBe(14);
    expect(pq.messagesAfter(-1, 5).map((m) => m.queueOffset)).toEqual([10, 12]);
    expect(batch.pending).toBe(0);
    expect(pq.removeMessage(pq.messagesAfter(-1, 5), 2)).toBe(13);
    expect(pq.msgCount).toBe(0);
    expect(pq.msgSize).toBe(0);
  });

  it('cleanExpiredMsg stops at a head not handed out yet, without decoding it', async () => {
    const pq = new ProcessQueue(0);
    const batch = new PulledBatch(mq, answer(0, 1), 0, 2, all, undefined);
    pq.putBatch(batch);
    const sendBack = jest.fn(async () => undefined);
    expect(await pq.cleanExpiredMsg(1, () => 1_000_000, sendBack)).toEqual([]);
    expect(sendBack).not.toHaveBeenCalled();
    expect(batch.pending).toBe(2);
  });
});

describe('ConsumeRequestCache with raw answers', () => {
  const queueOf = (pq: ProcessQueue): LiteQueue => {
    const request = createPullRequest('g', mq, pq, 0);
    return { mq, key: 'k', pq, request, consumeOffset: -1, parked: undefined };
  };

  it('decodes a request when it is taken, and passes over one whose messages are no longer held', () => {
    const cache = new ConsumeRequestCache();
    const emptied = queueOf(new ProcessQueue(0));
    const live = queueOf(new ProcessQueue(0));
    for (const [q, offs] of [
      [emptied, [0, 1]],
      [live, [5, 6]],
    ] as const) {
      const batch = new PulledBatch(mq, answer(...offs), 0, 10, all, undefined);
      q.pq.putBatch(batch);
      cache.push({ queue: q, request: q.request, messages: [], batch });
    }
    expect(cache.messageCount).toBe(4);
    emptied.pq.clear();
    const r = cache.take(() => true);
    expect(r?.queue).toBe(live);
    expect(r?.messages.map((m) => m.body?.toString())).toEqual(['body-5', 'body-6']);
    expect(cache.messageCount).toBe(0);
    expect(cache.take(() => true)).toBeUndefined();
  });
});
