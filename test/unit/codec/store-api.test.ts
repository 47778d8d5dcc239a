import {
  BLANK_MAGIC_CODE,
  DecodeError,
  InvalidArgumentError,
  MAGIC_CODE_V1,
  MAGIC_CODE_V2,
  MessageSysFlag,
  bodyCrc32,
  checkRecord,
  decodeMessage,
  decodeMessages,
  decodeProperties,
  encodeMessage,
  encodeStoredMessage,
  messageProperties2String,
  peekRecordFields,
  setStoredRecordFields,
  storedRecordLength,
  tagsHashCode,
  writeBlankRecord,
  type StoredMessageInput,
} from '../../../src/common/codec/index.js';

const base = (over: Partial<StoredMessageInput> = {}): StoredMessageInput => ({
  topic: 'TopicTest',
  body: Buffer.from('hello body'),
  queueId: 3,
  bornTimestamp: 1_700_000_000_000,
  bornHost: { ip: '192.168.1.100', port: 54321 },
  storeHost: { ip: '10.0.0.1', port: 10911 },
  properties: { TAGS: 'TagA', KEYS: 'k1 k2', UNIQ_KEY: '7F0000010B5818B4AAC2187A29A00000', WAIT: 'true' },
  queueOffset: 42,
  commitLogOffset: 123_456_789,
  storeTimestamp: 1_700_000_000_123,
  ...over,
});

describe('encodeStoredMessage (RocketMQ: MessageExtEncoder + CommitLog)', () => {
  it('writes a V1 record that checkRecord accepts and decodes back', () => {
    const rec = encodeStoredMessage(base());
    expect(rec.readInt32BE(4)).toBe(MAGIC_CODE_V1);
    expect(checkRecord(rec, 0)).toEqual({ kind: 'message', size: rec.length });
    const [m] = decodeMessages(rec);
    expect(m).toMatchObject({
      topic: 'TopicTest',
      queueId: 3,
      queueOffset: 42,
      commitLogOffset: 123_456_789,
      storeTimestamp: 1_700_000_000_123,
      bornTimestamp: 1_700_000_000_000,
      bodyCRC: bodyCrc32(Buffer.from('hello body')),
      storeSize: rec.length,
      msgId: '7F0000010B5818B4AAC2187A29A00000',
      offsetMsgId: '0A00000100002A9F00000000075BCD15',
    });
    expect(m?.body?.toString()).toBe('hello body');
  });

  it('is the same bytes as encodeMessage with the computed CRC', () => {
    const input = base();
    const stored = encodeStoredMessage(input);
    const plain = encodeMessage({ ...input, bodyCRC: bodyCrc32(input.body) });
    expect(stored.equals(plain)).toBe(true);
  });

  it('RocketMQ: V2 only when the topic is longer than 127 chars', () => {
    const t127 = 'a'.repeat(127);
    const t128 = 'a'.repeat(128);
    expect(encodeStoredMessage(base({ topic: t127 })).readInt32BE(4)).toBe(MAGIC_CODE_V1);
    const v2 = encodeStoredMessage(base({ topic: t128 }));
    expect(v2.readInt32BE(4)).toBe(MAGIC_CODE_V2);
    expect(checkRecord(v2).kind).toBe('message');
    expect(decodeMessages(v2)[0]?.topic).toBe(t128);
    // A short topic of multi-byte chars that does not fit a signed byte goes to V2 instead of corrupting.
    const wide = '中'.repeat(50);
    const w = encodeStoredMessage(base({ topic: wide }));
    expect(w.readInt32BE(4)).toBe(MAGIC_CODE_V2);
    expect(decodeMessages(w)[0]?.topic).toBe(wide);
    expect(() => encodeStoredMessage(base({ topic: 'x'.repeat(32768) }))).toThrow(InvalidArgumentError);
  });

  it('sets the IPv6 host flags from the addresses and keeps other sysFlag bits', () => {
    const rec = encodeStoredMessage(
      base({ bornHost: { ip: '::1', port: 1 }, storeHost: { ip: 'fe80::1:2', port: 2 }, sysFlag: 0x2 | 0x10 }),
    );
    const m = decodeMessages(rec)[0];
    expect(m?.sysFlag).toBe(0x2 | MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
    expect(m?.bornHost).toEqual({ ip: '0:0:0:0:0:0:0:1', port: 1 });
    expect(m?.storeHost).toEqual({ ip: 'fe80:0:0:0:0:0:1:2', port: 2 });
    expect(m?.offsetMsgId).toHaveLength(56);
    const propsLength = Buffer.byteLength(messageProperties2String(base().properties));
    expect(rec.length).toBe(84 + 24 + 4 + 10 + 1 + 9 + 2 + propsLength);
    expect(rec.length).toBe(storedRecordLength(1, m?.sysFlag ?? 0, 10, 9, propsLength));
    const v4 = encodeStoredMessage(base({ sysFlag: 0x30 }));
    expect(decodeMessages(v4)[0]?.sysFlag).toBe(0);
  });

  it('prefers propertiesString, refuses properties over 32767 bytes (PROPERTIES_SIZE_EXCEEDED)', () => {
    const rec = encodeStoredMessage(base({ propertiesString: 'A\u0001b\u0002', properties: { X: 'y' } }));
    expect(decodeProperties(rec)).toEqual({ A: 'b' });
    const big = { K: 'v'.repeat(32767) };
    const err = (() => {
      try {
        encodeStoredMessage(base({ properties: big }));
      } catch (e) {
        return e;
      }
      return null;
    })();
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe('properties');
    expect(() => encodeStoredMessage(base({ properties: { K: 'v'.repeat(32764) } }))).not.toThrow();
  });

  it('refuses 64-bit values beyond 2^53 and bad hosts with InvalidArgumentError naming the field', () => {
    const cases: [Partial<StoredMessageInput>, string][] = [
      [{ queueOffset: 2 ** 53 }, 'queueOffset'],
      [{ commitLogOffset: -(2 ** 53) }, 'commitLogOffset'],
      [{ storeTimestamp: 1.5 }, 'storeTimestamp'],
      [{ bornHost: { ip: 'localhost', port: 1 } }, 'bornHost.ip'],
      [{ storeHost: { ip: '10.0.0.1', port: 70000 } }, 'storeHost.port'],
      [{ queueId: 2 ** 32 }, 'queueId'],
    ];
    for (const [over, field] of cases) {
      try {
        encodeStoredMessage(base(over));
        throw new Error(`no error for ${field}`);
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidArgumentError);
        expect((e as InvalidArgumentError).field).toBe(field);
      }
    }
    expect(encodeStoredMessage(base({ queueOffset: Number.MAX_SAFE_INTEGER })).length).toBeGreaterThan(0);
  });

  it('empty or null body: length 0, CRC 0, decodes as null', () => {
    const rec = encodeStoredMessage(base({ body: null }));
    expect(rec.readInt32BE(8)).toBe(0);
    expect(decodeMessages(rec)[0]?.body).toBeNull();
    expect(decodeMessages(encodeStoredMessage(base({ body: Buffer.alloc(0) })))[0]?.body).toBeNull();
  });
});

describe('setStoredRecordFields', () => {
  it.each([
    ['IPv4 born host', '1.2.3.4'],
    ['IPv6 born host', '2001:db8::7'],
  ])('writes offsets and store time in place (%s)', (_n, ip) => {
    const rec = encodeStoredMessage(
      base({ bornHost: { ip, port: 9 }, queueOffset: 0, commitLogOffset: 0, storeTimestamp: 0 }),
    );
    setStoredRecordFields(rec, 0, { queueOffset: 7, commitLogOffset: 2 ** 40 + 5, storeTimestamp: 1_800_000_000_000 });
    const f = peekRecordFields(rec, 0);
    expect([f.queueOffset, f.commitLogOffset, f.storeTimestamp]).toEqual([7, 2 ** 40 + 5, 1_800_000_000_000]);
    expect(checkRecord(rec).kind).toBe('message');
    expect(() => setStoredRecordFields(rec, 0, { queueOffset: 2 ** 60 })).toThrow(InvalidArgumentError);
  });
  it('works at an offset inside a larger buffer', () => {
    const a = encodeStoredMessage(base());
    const b = encodeStoredMessage(base({ topic: 'Other' }));
    const all = Buffer.concat([a, b]);
    setStoredRecordFields(all, a.length, { commitLogOffset: a.length });
    expect(decodeMessages(all).map((m) => m.commitLogOffset)).toEqual([123_456_789, a.length]);
  });
});

describe('checkRecord (RocketMQ: CommitLog.checkMessageAndReturnSize)', () => {
  const rec = encodeStoredMessage(base());

  it('message at an offset', () => {
    const two = Buffer.concat([rec, rec]);
    expect(checkRecord(two, rec.length)).toEqual({ kind: 'message', size: rec.length });
  });
  it('blank filler', () => {
    const b = Buffer.alloc(8);
    writeBlankRecord(b, 0, 4096);
    expect(b.readInt32BE(4)).toBe(BLANK_MAGIC_CODE);
    expect(checkRecord(b, 0)).toEqual({ kind: 'blank', size: 4096 });
    expect(() => writeBlankRecord(b, 0, 7)).toThrow(InvalidArgumentError);
    expect(() => writeBlankRecord(b, 1, 8)).toThrow(InvalidArgumentError);
  });
  it('every truncation is invalid and marked truncated', () => {
    for (let n = 0; n < rec.length; n++) {
      const c = checkRecord(rec.subarray(0, n), 0);
      expect(c).toMatchObject({ kind: 'invalid', truncated: true });
    }
  });
  it('zeros, bad magic, size mismatch, CRC mismatch are invalid (not truncated)', () => {
    expect(checkRecord(Buffer.alloc(200), 0)).toMatchObject({ kind: 'invalid', truncated: false });
    const badMagic = Buffer.from(rec);
    badMagic.writeInt32BE(0x12345678, 4);
    expect(checkRecord(badMagic)).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/magic/) });
    // RocketMQ: a TOTALSIZE different from the recomputed length is rejected (a padded record).
    const padded = encodeMessage({ ...base(), storeSize: rec.length + 10 });
    expect(checkRecord(padded)).toMatchObject({ kind: 'invalid', reason: expect.stringMatching(/TOTALSIZE/) });
    const badCrc = Buffer.from(rec);
    const bodyAt = rec.indexOf('hello body');
    badCrc[bodyAt] = 0x48;
    expect(checkRecord(badCrc)).toMatchObject({ kind: 'invalid', reason: 'body CRC mismatch' });
    expect(checkRecord(badCrc, 0, { checkCRC: false })).toEqual({ kind: 'message', size: rec.length });
    const badLen = Buffer.from(rec);
    badLen.writeInt32BE(-1, bodyAt - 4);
    expect(checkRecord(badLen)).toMatchObject({ kind: 'invalid', truncated: false });
  });
  it('never throws on odd offsets and non-buffers', () => {
    expect(checkRecord(rec, -1).kind).toBe('invalid');
    expect(checkRecord(rec, 1.5).kind).toBe('invalid');
    expect(checkRecord(rec, rec.length + 10).kind).toBe('invalid');
    expect(checkRecord(null as unknown as Buffer).kind).toBe('invalid');
  });
});

describe('decodeProperties / peekRecordFields (dispatch)', () => {
  it('reads properties without the body; null when there are none', () => {
    const rec = encodeStoredMessage(base());
    expect({ ...decodeProperties(rec) }).toEqual({
      TAGS: 'TagA',
      KEYS: 'k1 k2',
      UNIQ_KEY: '7F0000010B5818B4AAC2187A29A00000',
      WAIT: 'true',
    });
    expect(decodeProperties(encodeStoredMessage(base({ properties: null })))).toBeNull();
    expect(() => decodeProperties(rec.subarray(0, 50))).toThrow(DecodeError);
    expect(() => decodeProperties(rec, -1)).toThrow(DecodeError);
    expect(() => decodeProperties('x' as unknown as Buffer)).toThrow(InvalidArgumentError);
    expect(() => peekRecordFields({} as unknown as Buffer)).toThrow(InvalidArgumentError);
  });
  it('peekRecordFields gives the DispatchRequest fields', () => {
    const rec = encodeStoredMessage(base({ reconsumeTimes: 2, preparedTransactionOffset: 99, flag: 5 }));
    const f = peekRecordFields(Buffer.concat([Buffer.alloc(3), rec]), 3);
    expect(f).toMatchObject({
      size: rec.length,
      topic: 'TopicTest',
      queueId: 3,
      flag: 5,
      queueOffset: 42,
      commitLogOffset: 123_456_789,
      storeTimestamp: 1_700_000_000_123,
      reconsumeTimes: 2,
      preparedTransactionOffset: 99,
      tags: 'TagA',
      tagsCode: tagsHashCode('TagA'),
      keys: 'k1 k2',
      uniqKey: '7F0000010B5818B4AAC2187A29A00000',
      bodyLength: 10,
    });
    expect(rec.subarray(f.bodyOffset - 3, f.bodyOffset - 3 + f.bodyLength).toString()).toBe('hello body');
    const none = peekRecordFields(encodeStoredMessage(base({ properties: null })));
    expect([none.tags, none.tagsCode, none.keys, none.uniqKey, none.properties]).toEqual([null, 0, '', null, null]);
  });
  it('a 64-bit field past 2^53 in the buffer fails with a DecodeError naming it', () => {
    const rec = encodeStoredMessage(base());
    rec.writeBigInt64BE(2n ** 53n, 20);
    expect(() => peekRecordFields(rec)).toThrow(/queueOffset/);
    expect(() => decodeMessage(rec)).toThrow(DecodeError);
    expect(() => decodeMessage(rec)).toThrow(/queueOffset/);
    rec.writeBigInt64BE(-(2n ** 53n) + 1n, 20);
    expect(decodeMessage(rec).message.queueOffset).toBe(-(2 ** 53) + 1);
  });
});
