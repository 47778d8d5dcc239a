/**
 * The MessageStore conformance suite: behaviour every store implementation must show, run against a
 * factory so a second implementation (in memory, or otherwise) can run it too. Segments are tiny
 * (4 KiB commit-log segments, 10-unit consume-queue files) so rollover happens in every test.
 * RocketMQ is the oracle: statuses and offsets follow DefaultMessageStore.getMessage.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createMessageId, decodeMessage, decodeMessages, tagsHashCode } from '../../../src/common/codec/index.js';
import { systemClock, type Clock } from '../../../src/common/clock.js';
import type { MessageStoreOptions } from '../../../src/store/options.js';
import type { MessageStore } from '../../../src/store/message-store.js';
import type { MessageArrival, MessageFilter, MessageToStore } from '../../../src/store/types.js';

/** The public surface the suite exercises. */
export type MessageStoreApi = Pick<
  MessageStore,
  | 'putMessage'
  | 'putMessages'
  | 'getMessage'
  | 'getMinOffsetInQueue'
  | 'getMaxOffsetInQueue'
  | 'getOffsetInQueueByTime'
  | 'lookMessageByOffset'
  | 'lookMessageByOffsetRaw'
  | 'lookMessageByMsgId'
  | 'getCommitLogMinOffset'
  | 'getCommitLogMaxOffset'
  | 'checkInMemByConsumeOffset'
  | 'onMessageArriving'
  | 'deleteExpiredFiles'
  | 'cleanCommitLog'
  | 'cleanConsumeQueues'
  | 'shutdown'
>;

export interface StoreFactory {
  /** Opens a store in `dir` (a fresh temp dir per test; opened again on the same dir for reopen tests). */
  open(dir: string, options: Omit<MessageStoreOptions, 'storePath'>): Promise<MessageStoreApi>;
  /** True when the store keeps its data across shutdown and open. */
  persistent: boolean;
}

export const SEGMENT = 4096;
export const TINY: Omit<MessageStoreOptions, 'storePath'> = {
  mappedFileSizeCommitLog: SEGMENT,
  mappedFileSizeConsumeQueue: 10 * 20,
  flushIntervalCommitLogMs: 20,
  flushIntervalConsumeQueueMs: 20,
};

/** A clock whose `now` the test sets; timers are real. */
export function manualClock(start = 1_700_000_000_000): Clock & { set(t: number): void } {
  let now = start;
  return { ...systemClock, now: () => now, set: (t: number) => (now = t) };
}

let seq = 0;
export const uniqueTopic = (p = 'T'): string => `${p}_${process.pid}_${Date.now() % 100000}_${seq++}`;

export function msg(topic: string, body: string | Buffer, extra: Partial<MessageToStore> = {}): MessageToStore {
  return {
    topic,
    queueId: 0,
    flag: 0,
    body: typeof body === 'string' ? Buffer.from(body) : body,
    properties: {},
    sysFlag: 0,
    bornTimestamp: 1_600_000_000_000,
    bornHost: { ip: '10.0.0.1', port: 5555 },
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    ...extra,
  };
}

/** A tag filter (RocketMQ's ExpressionMessageFilter for TAG: compares hash codes only). */
export function tagFilter(...tags: string[]): MessageFilter {
  const codes = new Set(tags.map((t) => tagsHashCode(t)));
  return {
    isMatchedByConsumeQueue: (code) => code === null || codes.has(code),
    isMatchedByCommitLog: () => true,
  };
}

export function runMessageStoreConformance(name: string, factory: StoreFactory): void {
  describe(`MessageStore conformance: ${name}`, () => {
    let dir: string;
    const open: MessageStoreApi[] = [];
    const start = async (options: Omit<MessageStoreOptions, 'storePath'> = {}): Promise<MessageStoreApi> => {
      const s = await factory.open(dir, { ...TINY, ...options });
      open.push(s);
      return s;
    };

    beforeEach(() => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-store-'));
    });
    afterEach(async () => {
      for (const s of open.splice(0)) await s.shutdown();
      fs.rmSync(dir, { recursive: true, force: true });
    });

    test('an append returns its physical offset, queue offset, store time and offset msgId', async () => {
      const clock = manualClock();
      const s = await start({ clock });
      const topic = uniqueTopic();
      const a = await s.putMessage(msg(topic, 'one'));
      const b = await s.putMessage(msg(topic, 'two'));
      const c = await s.putMessage(msg(topic, 'three', { queueId: 1 }));
      expect(a).toMatchObject({ status: 'PUT_OK', physicalOffset: 0, queueOffset: 0, storeTimestamp: clock.now() });
      expect(b).toMatchObject({ status: 'PUT_OK', physicalOffset: a.wroteBytes, queueOffset: 1 });
      expect(c.queueOffset).toBe(0);
      expect(a.msgId).toBe(createMessageId({ ip: '127.0.0.1', port: 10911 }, 0));
      expect(s.getCommitLogMaxOffset()).toBe(c.physicalOffset + c.wroteBytes);
      expect(s.getMaxOffsetInQueue(topic, 0)).toBe(2);
      expect(s.getMaxOffsetInQueue(topic, 1)).toBe(1);
      expect(s.getMinOffsetInQueue(topic, 0)).toBe(0);
      expect(s.getMaxOffsetInQueue(uniqueTopic(), 0)).toBe(0);
    });

    test('getMessage returns the exact stored bytes of each record, across segment rollover', async () => {
      const s = await start();
      const topic = uniqueTopic();
      const results = [];
      for (let i = 0; i < 60; i++) {
        results.push(
          await s.putMessage(
            msg(topic, `body-${i}-${'x'.repeat(i * 7)}`, { properties: { TAGS: `t${i % 3}`, KEYS: `k${i}` } }),
          ),
        );
      }
      // A record never spans segments: record + 8-byte filler always fit in the rest of the segment.
      for (const r of results) expect((r.physicalOffset % SEGMENT) + r.wroteBytes).toBeLessThanOrEqual(SEGMENT - 8);
      expect(new Set(results.map((r) => Math.floor(r.physicalOffset / SEGMENT))).size).toBeGreaterThan(2);
      let offset = 0;
      const seen: number[] = [];
      while (offset < 60) {
        const g = await s.getMessage('G', topic, 0, offset, 32);
        expect(g.status).toBe('FOUND');
        for (let k = 0; k < g.messages.length; k++) {
          const bytes = g.messages[k] as Buffer;
          const qo = g.queueOffsets[k] as number;
          const raw = await s.lookMessageByOffsetRaw((results[qo] as { physicalOffset: number }).physicalOffset);
          expect(raw && Buffer.compare(raw, bytes)).toBe(0);
          const m = decodeMessage(bytes).message;
          expect(m.body?.toString()).toBe(`body-${qo}-${'x'.repeat(qo * 7)}`);
          expect(m.queueOffset).toBe(qo);
          expect(m.commitLogOffset).toBe(results[qo]?.physicalOffset);
          expect(m.properties).toEqual({ TAGS: `t${qo % 3}`, KEYS: `k${qo}` });
          seen.push(qo);
        }
        expect(g.bufferTotalSize).toBe(g.messages.reduce((n, b) => n + b.length, 0));
        if (g.messagesBuffer) expect(g.messagesBuffer.equals(Buffer.concat(g.messages))).toBe(true);
        expect(g.messageCount).toBe(g.messages.length);
        offset = g.nextBeginOffset;
      }
      expect(seen).toEqual([...Array(60).keys()]);
      // The concatenated bytes are a valid pull body.
      const g = await s.getMessage('G', topic, 0, 0, 4);
      expect(decodeMessages(Buffer.concat(g.messages)).map((m) => m.queueOffset)).toEqual([0, 1, 2, 3]);
    });

    test('RocketMQ: statuses before the scan — NO_MESSAGE_IN_QUEUE, OFFSET_OVERFLOW_ONE/BADLY, OFFSET_TOO_SMALL', async () => {
      const s = await start();
      const topic = uniqueTopic();
      expect(await s.getMessage('G', topic, 0, 5, 32)).toMatchObject({
        status: 'NO_MESSAGE_IN_QUEUE',
        nextBeginOffset: 0,
        minOffset: 0,
        maxOffset: 0,
        messageCount: 0,
      });
      for (let i = 0; i < 3; i++) await s.putMessage(msg(topic, `m${i}`));
      expect(await s.getMessage('G', topic, 0, 3, 32)).toMatchObject({
        status: 'OFFSET_OVERFLOW_ONE',
        nextBeginOffset: 3,
        maxOffset: 3,
      });
      expect(await s.getMessage('G', topic, 0, 9, 32)).toMatchObject({
        status: 'OFFSET_OVERFLOW_BADLY',
        nextBeginOffset: 3,
      });
      expect(await s.getMessage('G', topic, 0, -1, 32)).toMatchObject({
        status: 'OFFSET_TOO_SMALL',
        nextBeginOffset: 0,
      });
      expect(await s.getMessage('G', topic, 0, 1, 32)).toMatchObject({
        status: 'FOUND',
        nextBeginOffset: 3,
        messageCount: 2,
      });
    });

    test('RocketMQ: a batch stops at the end of a consume-queue file (travelCqFileNumWhenGetMessage = 1)', async () => {
      const s = await start();
      const topic = uniqueTopic();
      await s.putMessages(Array.from({ length: 25 }, (_, i) => msg(topic, `m${i}`)));
      expect(await s.getMessage('G', topic, 0, 7, 32)).toMatchObject({
        status: 'FOUND',
        messageCount: 3,
        nextBeginOffset: 10,
      });
      expect(await s.getMessage('G', topic, 0, 10, 32)).toMatchObject({ messageCount: 10, nextBeginOffset: 20 });
    });

    test('RocketMQ: at most 32 messages in memory whatever maxMsgNums says, and maxMsgNums itself', async () => {
      const s = await start({ mappedFileSizeConsumeQueue: 64 * 20 });
      const topic = uniqueTopic();
      await s.putMessages(Array.from({ length: 40 }, (_, i) => msg(topic, `m${i}`)));
      const g = await s.getMessage('G', topic, 0, 0, 1024);
      expect(g).toMatchObject({ status: 'FOUND', messageCount: 32, nextBeginOffset: 32 });
      const h = await s.getMessage('G', topic, 0, 0, 5);
      expect(h).toMatchObject({ messageCount: 5, nextBeginOffset: 5 });
    });

    test('RocketMQ: 256 KiB in memory, 8 messages / 64 KiB on disk, and the first message always', async () => {
      const big = { mappedFileSizeCommitLog: 64 * 1024, mappedFileSizeConsumeQueue: 64 * 20 };
      const s = await start(big);
      const topic = uniqueTopic();
      const rs = await s.putMessages(Array.from({ length: 40 }, (_, i) => msg(topic, Buffer.alloc(9000, i))));
      const size = (rs[0] as { wroteBytes: number }).wroteBytes;
      const g = await s.getMessage('G', topic, 0, 0, 1024);
      expect(g.messageCount).toBe(Math.floor((256 * 1024) / size));
      await s.shutdown();
      // Nothing counts as in memory: the on-disk caps apply.
      const d = await start({ ...big, totalPhysicalMemoryBytes: 1 });
      if (!factory.persistent) return;
      const h = await d.getMessage('G', topic, 0, 0, 1024);
      expect(h.messageCount).toBe(Math.min(8, Math.floor((64 * 1024) / size)));
      await d.shutdown();
      const t = await start({ ...big, maxTransferBytesOnMessageInDisk: 100, totalPhysicalMemoryBytes: 1 });
      expect(await t.getMessage('G', topic, 0, 3, 32)).toMatchObject({
        status: 'FOUND',
        messageCount: 1,
        nextBeginOffset: 4,
      });
    });

    test('RocketMQ: a tag filter returns matches only; nextBeginOffset is the last examined entry + 1', async () => {
      const s = await start();
      const topic = uniqueTopic();
      const tags = ['A', 'B', 'B', 'A', 'B', 'C', 'A'];
      for (const t of tags) await s.putMessage(msg(topic, t, { properties: { TAGS: t } }));
      const g = await s.getMessage('G', topic, 0, 0, 2, tagFilter('A'));
      expect(g.status).toBe('FOUND');
      expect(g.queueOffsets).toEqual([0, 3]);
      // The entry that made the batch full (offset 4) is not counted: next starts there.
      expect(g.nextBeginOffset).toBe(4);
      const h = await s.getMessage('G', topic, 0, 4, 32, tagFilter('A'));
      expect(h.queueOffsets).toEqual([6]);
      expect(h.nextBeginOffset).toBe(7);
      const none = await s.getMessage('G', topic, 0, 4, 32, tagFilter('Z'));
      expect(none).toMatchObject({ status: 'NO_MATCHED_MESSAGE', nextBeginOffset: 7, messageCount: 0 });
    });

    test('RocketMQ: an all-filtered scan stops after max(16000, maxMsgNums*20) consume-queue bytes', async () => {
      const s = await start();
      const topic = uniqueTopic();
      await s.putMessages(Array.from({ length: 900 }, () => msg(topic, 'b', { properties: { TAGS: 'B' } })));
      const g = await s.getMessage('G', topic, 0, 0, 32, tagFilter('A'));
      expect(g).toMatchObject({ status: 'NO_MATCHED_MESSAGE', messageCount: 0 });
      // travelCqFileNumWhenGetMessage = 1: the scan also stops at the end of the consume-queue file.
      expect(g.nextBeginOffset).toBe(10);
    });

    test('RocketMQ: the commit-log stage of the filter counts what it drops', async () => {
      const s = await start({ mappedFileSizeConsumeQueue: 6_000_000 });
      const topic = uniqueTopic();
      await s.putMessages(Array.from({ length: 900 }, (_, i) => msg(topic, `m${i}`, { properties: { TAGS: 'B' } })));
      const all = await s.getMessage('G', topic, 0, 0, 32, tagFilter('A'));
      expect(all).toMatchObject({ status: 'NO_MATCHED_MESSAGE', nextBeginOffset: 800 });
      const even: MessageFilter = {
        isMatchedByConsumeQueue: () => true,
        isMatchedByCommitLog: (rec) => decodeMessage(rec as Buffer).message.queueOffset % 2 === 0,
      };
      const g = await s.getMessage('G', topic, 0, 1, 3, even);
      expect(g.queueOffsets).toEqual([2, 4, 6]);
      expect(g.filterMessageCount).toBe(3);
      expect(g.nextBeginOffset).toBe(7);
    });

    test('arrivals are announced synchronously with the dispatch, before the append resolves', async () => {
      const s = await start();
      const topic = uniqueTopic();
      const seen: MessageArrival[] = [];
      const off = s.onMessageArriving((a) => {
        if (a.topic === topic) seen.push(a);
      });
      const p = s.putMessage(msg(topic, 'x', { queueId: 2, properties: { TAGS: 'TagA' } }));
      let resolved = false;
      void p.then(() => (resolved = true));
      await p;
      expect(resolved).toBe(true);
      expect(seen).toEqual([
        expect.objectContaining({
          topic,
          queueId: 2,
          queueOffset: 0,
          maxOffset: 1,
          tagsCode: 2598919,
          properties: { TAGS: 'TagA' },
        }),
      ]);
      off();
      await s.putMessage(msg(topic, 'y', { queueId: 2 }));
      expect(seen).toHaveLength(1);
      const t2 = uniqueTopic();
      let readable = -1;
      const off2 = s.onMessageArriving((a) => {
        if (a.topic === t2) readable = s.getMaxOffsetInQueue(t2, 0);
      });
      await s.putMessage(msg(t2, 'z'));
      expect(readable).toBe(1); // the unit is in the consume queue when the listener runs
      off2();
    });

    test('RocketMQ: a delayed message stores its delivery time as the tags code', async () => {
      const clock = manualClock(5_000_000);
      const s = await start({ clock });
      const seen: MessageArrival[] = [];
      s.onMessageArriving((a) => seen.push(a));
      await s.putMessage(msg('SCHEDULE_TOPIC_XXXX', 'd', { queueId: 2, properties: { DELAY: '3', TAGS: 'x' } }));
      await s.putMessage(msg('SCHEDULE_TOPIC_XXXX', 'd', { queueId: 17, properties: { DELAY: '99' } }));
      expect(seen.map((a) => a.tagsCode)).toEqual([5_000_000 + 10_000, 5_000_000 + 2 * 3_600_000]);
      let code: number | null = null;
      const g = await s.getMessage('G', 'SCHEDULE_TOPIC_XXXX', 2, 0, 1, {
        isMatchedByConsumeQueue: (c) => ((code = c), true),
        isMatchedByCommitLog: () => true,
      });
      expect(g.status).toBe('FOUND');
      expect(code).toBe(5_010_000);
    });

    test('RocketMQ: PREPARED and ROLLBACK transaction records are stored but not dispatched', async () => {
      const s = await start();
      const topic = uniqueTopic();
      await s.putMessage(msg(topic, 'normal'));
      const prepared = await s.putMessage(msg(topic, 'half', { sysFlag: 0x4 }));
      const rollback = await s.putMessage(msg(topic, 'rb', { sysFlag: 0xc }));
      const commit = await s.putMessage(msg(topic, 'commit', { sysFlag: 0x8 }));
      expect(prepared.queueOffset).toBe(0);
      expect(rollback.queueOffset).toBe(0);
      expect(commit.queueOffset).toBe(1);
      expect(s.getMaxOffsetInQueue(topic, 0)).toBe(2);
      expect((await s.lookMessageByOffset(prepared.physicalOffset))?.body?.toString()).toBe('half');
    });

    test('RocketMQ: offset by time — LOWER is the first at or after, UPPER the last at or before', async () => {
      const clock = manualClock(1000);
      const s = await start({ clock });
      const topic = uniqueTopic();
      for (const t of [1000, 1000, 2000, 3000, 3000, 4000]) {
        clock.set(t);
        await s.putMessage(msg(topic, `at${t}`));
      }
      const lower = async (ts: number): Promise<number> => s.getOffsetInQueueByTime(topic, 0, ts, 'LOWER');
      const upper = async (ts: number): Promise<number> => s.getOffsetInQueueByTime(topic, 0, ts, 'UPPER');
      expect(await lower(0)).toBe(0);
      expect(await lower(1000)).toBe(0);
      expect(await lower(1500)).toBe(2);
      expect(await lower(3000)).toBe(3);
      expect(await lower(9999)).toBe(6);
      expect(await s.getOffsetInQueueByTime(topic, 0, 3000)).toBe(3);
      expect(await upper(3000)).toBe(4);
      expect(await upper(2500)).toBe(2);
      expect(await upper(1000)).toBe(1);
      expect(await upper(500)).toBe(0);
      expect(await upper(9999)).toBe(5);
      expect(await s.getOffsetInQueueByTime(uniqueTopic(), 0, 1000)).toBe(0);
    });

    test('messages are found by commit-log offset and by offset msgId; anything else gives null', async () => {
      const s = await start();
      const topic = uniqueTopic();
      const rs = await s.putMessages(
        Array.from({ length: 30 }, (_, i) => msg(topic, `v${i}`, { properties: { UNIQ_KEY: `U${i}` } })),
      );
      const r = rs[17] as { physicalOffset: number; msgId: string };
      const m = await s.lookMessageByOffset(r.physicalOffset);
      expect(m).toMatchObject({ topic, queueOffset: 17, commitLogOffset: r.physicalOffset, msgId: 'U17' });
      expect(m?.body?.toString()).toBe('v17');
      expect((await s.lookMessageByMsgId(r.msgId))?.queueOffset).toBe(17);
      expect(await s.lookMessageByOffset(r.physicalOffset + 1)).toBeNull();
      expect(await s.lookMessageByOffset(s.getCommitLogMaxOffset() + 100)).toBeNull();
      expect(await s.lookMessageByMsgId('nonsense')).toBeNull();
    });

    test('checkInMemByConsumeOffset: true for a recent message, false for an empty queue', async () => {
      const s = await start();
      const topic = uniqueTopic();
      expect(s.checkInMemByConsumeOffset(topic, 0, 0, 1)).toBe(false);
      await s.putMessage(msg(topic, 'a'));
      expect(s.checkInMemByConsumeOffset(topic, 0, 0, 1)).toBe(true);
      expect(s.checkInMemByConsumeOffset(topic, 0, 5, 1)).toBe(false);
    });

    test('refusals: bad topic names (never a path outside the store), oversized bodies, after shutdown', async () => {
      const s = await start({ maxMessageSize: 1000 });
      for (const bad of ['../escape', 'a/b', '', 'x'.repeat(300), 'nul\u0000', '.']) {
        const r = await s.putMessage(msg(bad, 'x'));
        expect(r.status).toBe('MESSAGE_ILLEGAL');
      }
      expect(fs.existsSync(path.join(dir, '..', 'escape'))).toBe(false);
      expect((await s.putMessage(msg(uniqueTopic(), Buffer.alloc(1001)))).status).toBe('MESSAGE_ILLEGAL');
      expect((await s.putMessage(msg(uniqueTopic(), Buffer.alloc(5000)))).status).toBe('MESSAGE_ILLEGAL');
      // A record the read path could never serve (flagged compressed, the body is not) is not stored.
      const flagged = await s.putMessage(msg(uniqueTopic(), 'plain', { sysFlag: 1 }));
      expect(flagged).toMatchObject({ status: 'MESSAGE_ILLEGAL', remark: expect.stringMatching(/compressed/) });
      const big = { X: 'y'.repeat(40000) };
      expect((await s.putMessage(msg(uniqueTopic(), 'p', { properties: big }))).status).toBe(
        'PROPERTIES_SIZE_EXCEEDED',
      );
      expect((await s.getMessage('G', '../escape', 0, 0, 32)).status).toBe('NO_MATCHED_LOGIC_QUEUE');
      const p1 = s.shutdown();
      expect(s.shutdown()).toBe(p1);
      await p1;
      const r = await s.putMessage(msg(uniqueTopic(), 'late'));
      expect(r).toMatchObject({ status: 'SERVICE_NOT_AVAILABLE' });
    });

    test('RocketMQ: diskMaxUsedSpaceRatio — appends are refused while the disk is too full', async () => {
      let used = 99;
      const s = await start({ diskUsedRatio: () => used, diskCheckIntervalMs: 0 });
      const r = await s.putMessage(msg(uniqueTopic(), 'x'));
      expect(r.status).toBe('SERVICE_NOT_AVAILABLE');
      expect(r.remark).toMatch(/disk/);
      used = 10;
      expect((await s.putMessage(msg(uniqueTopic(), 'x'))).status).toBe('PUT_OK');
    });

    test('concurrent appends get distinct, gap-free queue offsets in commit-log order', async () => {
      const s = await start();
      const topic = uniqueTopic();
      const rs = await Promise.all(
        Array.from({ length: 500 }, (_, i) => s.putMessage(msg(topic, `c${i}`, { queueId: i % 2 }))),
      );
      for (const q of [0, 1]) {
        const mine = rs.filter((_, i) => i % 2 === q);
        expect(mine.map((r) => r.queueOffset).sort((a, b) => a - b)).toEqual([...Array(250).keys()]);
        const byQo = [...mine].sort((a, b) => a.queueOffset - b.queueOffset);
        for (let k = 1; k < byQo.length; k++)
          expect((byQo[k] as { physicalOffset: number }).physicalOffset).toBeGreaterThan(
            (byQo[k - 1] as { physicalOffset: number }).physicalOffset,
          );
      }
      expect(s.getMaxOffsetInQueue(topic, 0)).toBe(250);
    });

    test('SYNC_FLUSH: appends are acknowledged PUT_OK after a shared fsync', async () => {
      const s = await start({ flushDiskType: 'SYNC_FLUSH', mappedFileSizeConsumeQueue: 64 * 20 });
      const topic = uniqueTopic();
      const rs = await Promise.all(Array.from({ length: 50 }, (_, i) => s.putMessage(msg(topic, `s${i}`))));
      expect(rs.every((r) => r.status === 'PUT_OK')).toBe(true);
      expect((await s.getMessage('G', topic, 0, 0, 32)).messageCount).toBe(32);
    });

    test('RocketMQ: retention deletes old segments, MESSAGE_WAS_REMOVING then OFFSET_TOO_SMALL', async () => {
      const s = await start();
      const topic = uniqueTopic();
      const rs = [];
      for (let i = 0; i < 120; i++) rs.push(await s.putMessage(msg(topic, `r${i}-${'z'.repeat(100)}`)));
      const later = Date.now() + 73 * 3_600_000;
      const deleted = await s.cleanCommitLog(later);
      expect(deleted).toBeGreaterThan(0);
      const minPhy = s.getCommitLogMinOffset();
      expect(minPhy).toBeGreaterThan(0);
      expect(minPhy % SEGMENT).toBe(0);
      // The consume queue still names records in deleted segments.
      const g = await s.getMessage('G', topic, 0, 0, 32);
      expect(g.status).toBe('MESSAGE_WAS_REMOVING');
      expect(await s.lookMessageByOffset(0)).toBeNull();
      s.cleanConsumeQueues();
      const firstKept = rs.findIndex((r) => r.physicalOffset >= minPhy);
      expect(s.getMinOffsetInQueue(topic, 0)).toBe(firstKept);
      expect(await s.getMessage('G', topic, 0, 0, 32)).toMatchObject({
        status: 'OFFSET_TOO_SMALL',
        nextBeginOffset: firstKept,
      });
      const h = await s.getMessage('G', topic, 0, firstKept, 32);
      expect(h.status).toBe('FOUND');
      expect(h.queueOffsets[0]).toBe(firstKept);
      // The newest segment is never deleted, and the store keeps appending.
      await s.deleteExpiredFiles(later + 1e9);
      expect(s.getCommitLogMinOffset()).toBeLessThanOrEqual((rs.at(-1) as { physicalOffset: number }).physicalOffset);
      expect((await s.putMessage(msg(topic, 'after'))).queueOffset).toBe(120);
    });

    test('segments younger than fileReservedTimeHours are kept', async () => {
      const s = await start({ fileReservedTimeHours: 1 });
      const topic = uniqueTopic();
      for (let i = 0; i < 100; i++) await s.putMessage(msg(topic, 'y'.repeat(100)));
      expect(await s.deleteExpiredFiles(Date.now())).toBe(0);
      expect(s.getCommitLogMinOffset()).toBe(0);
    });

    if (factory.persistent) {
      test('reopen: same offsets, same bytes, queue offsets continue', async () => {
        const s = await start();
        const topic = uniqueTopic();
        const rs = await s.putMessages(
          Array.from({ length: 70 }, (_, i) => msg(topic, `p${i}`, { queueId: i % 3, properties: { TAGS: `t${i}` } })),
        );
        const before = await s.getMessage('G', topic, 1, 0, 32);
        await s.shutdown();
        const again = await start();
        expect(again.getCommitLogMaxOffset()).toBe(s.getCommitLogMaxOffset());
        for (const q of [0, 1, 2]) expect(again.getMaxOffsetInQueue(topic, q)).toBe(q === 0 ? 24 : 23);
        const after = await again.getMessage('G', topic, 1, 0, 32);
        expect(Buffer.concat(after.messages).equals(Buffer.concat(before.messages))).toBe(true);
        const next = await again.putMessage(msg(topic, 'next', { queueId: 1 }));
        expect(next.queueOffset).toBe(23);
        expect(next.physicalOffset).toBeGreaterThanOrEqual(
          (rs.at(-1) as { physicalOffset: number; wroteBytes: number }).physicalOffset + 1,
        );
        const f = await again.getMessage('G', topic, 1, 23, 32, tagFilter('t5'));
        expect(f).toMatchObject({ status: 'NO_MATCHED_MESSAGE', nextBeginOffset: 24 });
      });

      test('a second open of the same store fails with ERR_STORE_LOCKED', async () => {
        await start();
        await expect(factory.open(dir, TINY)).rejects.toMatchObject({ code: 'ERR_STORE_LOCKED' });
      });
    }
  });
}
