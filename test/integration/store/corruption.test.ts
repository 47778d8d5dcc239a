/**
 * Corruption scenarios on the file store with tiny segments (4 KiB commit-log segments, 10-unit
 * consume-queue files): a flipped byte in the middle of the log, after a clean stop and after a crash;
 * a flipped bit in a record's size field and in a consume-queue unit; a consume-queue file cut short by
 * whole units; reopening with another segment size; a missing middle segment. Nothing valid is lost,
 * nothing damaged is served, and every action is logged.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { PutMessageResult } from '../../../src/store/types.js';
import { MAGIC_CODE_V1, peekRecordFields } from '../../../src/common/codec/index.js';
import {
  bodiesOf,
  bodyOf,
  cqFile,
  drainBodies as consume,
  fillAlternating as fill,
  flip,
  segFile,
  spyLogger,
  useTinyStores,
} from '../../support/store-fixture.js';
import { SEGMENT, msg, uniqueTopic } from './conformance.js';

describe('store corruption', () => {
  const stores = useTinyStores('rmq-corrupt-');
  const open = stores.open;

  test('(a) a flipped byte in the middle of the log, after a crash: the damaged record is never served', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 100);
    await s.shutdown();
    const victim = rs[30] as PutMessageResult;
    flip(segFile(stores.dir, victim.physicalOffset), (victim.physicalOffset % SEGMENT) + victim.wroteBytes - 20);
    // A crash: the abort file is there, so recovery starts at the checkpoint, past the damage.
    fs.writeFileSync(path.join(stores.dir, 'abort'), '1\n');
    const again = await open();
    expect(await consume(again, topic, 0)).toEqual(bodiesOf(100, 0, [30]));
    expect(await consume(again, topic, 1)).toEqual(bodiesOf(100, 1));
    expect(await again.lookMessageByOffset(victim.physicalOffset)).toBeNull();
  });

  test('(a) after a clean stop, 100 valid messages after a flipped byte are all kept', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 140);
    await s.shutdown();
    const victim = rs[39] as PutMessageResult;
    flip(segFile(stores.dir, victim.physicalOffset), (victim.physicalOffset % SEGMENT) + victim.wroteBytes - 20);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(again.getCommitLogMaxOffset()).toBe(s.getCommitLogMaxOffset());
    expect([...(await consume(again, topic, 0)), ...(await consume(again, topic, 1))]).toHaveLength(139);
    expect(log.warnings.map((w) => w.msg)).not.toContain('commit log: torn or corrupt tail cut off');
  });

  test("(b) a flipped bit in a record's size field skips that record only", async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 100);
    await s.shutdown();
    const victim = rs[80] as PutMessageResult; // in the last segments, which recovery checks
    flip(segFile(stores.dir, victim.physicalOffset), (victim.physicalOffset % SEGMENT) + 2, 0x10);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(log.warnings.find((w) => /damaged record skipped/.test(w.msg))?.obj).toMatchObject({
      at: victim.physicalOffset,
      skippedBytes: victim.wroteBytes,
    });
    expect(await consume(again, topic, 0)).toEqual(bodiesOf(100, 0, [80]));
    expect(await consume(again, topic, 1)).toEqual(bodiesOf(100, 1));
    // Appends go on after the kept records.
    expect((await again.putMessage(msg(topic, 'next'))).queueOffset).toBe(50);
  });

  test('(b) a flipped bit in a consume-queue unit: the queue is rebuilt from the log, nothing skipped', async () => {
    const topic = uniqueTopic();
    const s = await open();
    await fill(s, topic, 200);
    await s.shutdown();
    // Unit 13 of queue 0: a high bit of its commit-log offset.
    flip(cqFile(stores.dir, topic, 0, 13), (13 % 10) * 20 + 3, 0x40);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(log.warnings.find((w) => /damaged units cut/.test(w.msg))?.obj).toMatchObject({ queueId: 0, unitsCut: 87 });
    expect(await consume(again, topic, 0)).toEqual(bodiesOf(200, 0));
    expect(await consume(again, topic, 1)).toEqual(bodiesOf(200, 1));
  });

  test('(b) units damaged in a way that keeps the queue in order are rebuilt from the log: nothing skipped', async () => {
    const topic = uniqueTopic();
    const s = await open();
    await fill(s, topic, 40);
    await s.shutdown();
    // A low bit of unit 5's size, and of unit 8's commit-log offset (4 bytes off): each unit still fits
    // the queue's shape but no longer frames its record.
    flip(cqFile(stores.dir, topic, 0, 5), 5 * 20 + 11, 0x01);
    flip(cqFile(stores.dir, topic, 0, 8), 8 * 20 + 7, 0x04);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(await consume(again, topic, 0)).toEqual(bodiesOf(40, 0));
    expect(log.warnings.filter((w) => /damaged unit rebuilt/.test(w.msg)).map((w) => w.obj.queueOffset)).toEqual([
      5, 8,
    ]);
    // The rebuilt units reached the file: the next run reads them without rebuilding.
    await again.shutdown();
    const log2 = spyLogger();
    const third = await open({ logger: log2 });
    expect(await consume(third, topic, 0)).toEqual(bodiesOf(40, 0));
    expect(log2.warnings).toEqual([]);
  });

  test('(a) a flipped bit in a header field outside the body CRC: that record is never served, the others are', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs: PutMessageResult[] = [];
    for (let i = 0; i < 60; i++)
      rs.push(await s.putMessage(msg(topic, bodyOf(i), { queueId: i % 2, properties: { KEYS: `k${i}`, TAGS: 't' } })));
    // Where each field sits in a record: header fields at fixed places, topic and properties after the body.
    const layout = async (r: PutMessageResult): Promise<{ topicAt: number; propsAt: number }> => {
      const raw = (await s.lookMessageByOffsetRaw(r.physicalOffset)) as Buffer;
      const f = peekRecordFields(raw, 0);
      const topicAt = f.bodyOffset + f.bodyLength + (raw.readInt32BE(4) === MAGIC_CODE_V1 ? 1 : 2);
      return { topicAt, propsAt: topicAt + Buffer.byteLength(topic) + 2 };
    };
    const damage: [number, (l: { topicAt: number; propsAt: number }) => [number, number]][] = [
      [10, () => [15, 0x01]], // queueId 0 -> 1
      [20, () => [27, 0x02]], // queue offset
      [30, (l) => [l.topicAt, 0x20]], // the topic's first letter
      [40, () => [39, 0x01]], // sysFlag: COMPRESSED on a body that is not
      [50, (l) => [l.propsAt + 4, 0x02]], // a property's name-value separator (KEYS\u0001 -> KEYS\u0003)
      [56, () => [38, 0x10]], // sysFlag: an undefined bit
    ];
    const places = await Promise.all(damage.map(async ([i, at]) => at(await layout(rs[i] as PutMessageResult))));
    await s.shutdown();
    damage.forEach(([i], k) => {
      const r = rs[i] as PutMessageResult;
      const [at, mask] = places[k] as [number, number];
      flip(segFile(stores.dir, r.physicalOffset), (r.physicalOffset % SEGMENT) + at, mask);
    });
    const victims = damage.map(([i]) => i);
    for (const crash of [false, true]) {
      // After a crash recovery starts at the checkpoint, past the damage: the read path must catch it.
      if (crash) fs.writeFileSync(path.join(stores.dir, 'abort'), '1\n');
      const again = await open();
      expect(await consume(again, topic, 0)).toEqual(bodiesOf(60, 0, victims));
      expect(await consume(again, topic, 1)).toEqual(bodiesOf(60, 1, victims));
      for (const i of victims)
        expect(await again.lookMessageByOffset((rs[i] as PutMessageResult).physicalOffset)).toBeNull();
      await again.shutdown();
    }
  });

  test('(b) a unit moved past its successors inside the log: cut before it and rebuilt, nothing skipped', async () => {
    const topic = uniqueTopic();
    const s = await open();
    const rs = await fill(s, topic, 200);
    await s.shutdown();
    // Unit 13 of queue 0 (message 26) gains 4096 bytes: it now points past units 14, 15, ... inside the log.
    const u13 = rs[26] as PutMessageResult;
    expect(u13.physicalOffset + 4096).toBeLessThan(s.getCommitLogMaxOffset());
    flip(cqFile(stores.dir, topic, 0, 13), (13 % 10) * 20 + 6, 0x10);
    const again = await open();
    expect(await consume(again, topic, 0)).toEqual(bodiesOf(200, 0));
    expect(await consume(again, topic, 1)).toEqual(bodiesOf(200, 1));
  });

  test('(c) a queue whose only file is cut to nothing is rebuilt from the log', async () => {
    const topic = uniqueTopic();
    const s = await open();
    await fill(s, topic, 200);
    await s.shutdown();
    fs.truncateSync(cqFile(stores.dir, topic, 1, 0), 0);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(await consume(again, topic, 1)).toEqual(bodiesOf(200, 1));
    expect(log.warnings.map((w) => w.msg)).toContain(
      'consume queue: files hold no unit; rebuilding the queue from the commit log',
    );
  });

  test('(c) a consume-queue file cut short by whole units is rebuilt from the intact log', async () => {
    const topic = uniqueTopic();
    const s = await open();
    await fill(s, topic, 200);
    await s.shutdown();
    const last = cqFile(stores.dir, topic, 1, 99);
    fs.truncateSync(last, 20 * 3);
    const middle = cqFile(stores.dir, topic, 0, 45);
    fs.truncateSync(middle, 20 * 2);
    const log = spyLogger();
    const again = await open({ logger: log });
    expect(again.getMaxOffsetInQueue(topic, 0)).toBe(100);
    expect(again.getMaxOffsetInQueue(topic, 1)).toBe(100);
    expect(await consume(again, topic, 0)).toEqual(bodiesOf(200, 0));
    expect(await consume(again, topic, 1)).toEqual(bodiesOf(200, 1));
    expect(log.warnings.find((w) => /restored from the commit log/.test(w.msg))?.obj).toMatchObject({
      units: 7 + 8 + 50,
    });
    expect((await again.putMessage(msg(topic, 'next', { queueId: 1 }))).queueOffset).toBe(100);
  });

  test('reopening with another segment size is refused, naming the setting; nothing is deleted', async () => {
    const topic = uniqueTopic();
    const s = await open();
    await fill(s, topic, 80);
    await s.shutdown();
    const before = fs.readdirSync(path.join(stores.dir, 'commitlog'));
    await expect(open({ mappedFileSizeCommitLog: SEGMENT * 2 })).rejects.toMatchObject({
      code: 'ERR_STORE_LAYOUT',
      setting: 'mappedFileSizeCommitLog',
    });
    await expect(open({ mappedFileSizeCommitLog: SEGMENT * 3 })).rejects.toMatchObject({
      code: 'ERR_STORE_LAYOUT',
      message: expect.stringMatching(/does not fit mappedFileSizeCommitLog = 12288/),
    });
    await expect(open({ mappedFileSizeConsumeQueue: 20 * 7 })).rejects.toMatchObject({
      code: 'ERR_STORE_LAYOUT',
      setting: 'mappedFileSizeConsumeQueue',
    });
    expect(fs.readdirSync(path.join(stores.dir, 'commitlog'))).toEqual(before);
    const again = await open();
    expect(await consume(again, topic, 0)).toEqual(bodiesOf(80, 0));
  });

  test('a missing middle segment is reported and refused; the later segments stay', async () => {
    const topic = uniqueTopic();
    const s = await open();
    await fill(s, topic, 120);
    await s.shutdown();
    const names = fs.readdirSync(path.join(stores.dir, 'commitlog')).sort();
    expect(names.length).toBeGreaterThan(3);
    fs.renameSync(path.join(stores.dir, 'commitlog', names[1] as string), path.join(stores.dir, 'moved-away'));
    await expect(open()).rejects.toMatchObject({
      code: 'ERR_STORE_LAYOUT',
      message: expect.stringContaining(`${names[1]} missing`),
    });
    expect(fs.readdirSync(path.join(stores.dir, 'commitlog')).sort()).toEqual(names.filter((n) => n !== names[1]));
    fs.renameSync(path.join(stores.dir, 'moved-away'), path.join(stores.dir, 'commitlog', names[1] as string));
    const again = await open();
    expect(await consume(again, topic, 1)).toEqual(bodiesOf(120, 1));
  });
});
