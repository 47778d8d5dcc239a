import { deflateSync } from 'node:zlib';
import {
  CompressionType,
  DecodeError,
  InvalidArgumentError,
  MessageSysFlag,
  createMessageId,
  createUniqId,
  decodeBatchBody,
  decodeMessage,
  decodeMessageId,
  decodeMessages,
  encodeBatchBody,
  encodeMessage,
  getIPStrFromUniqId,
  getNearlyTimeFromUniqId,
  getPidFromUniqId,
  messageProperties2String,
  string2messageProperties,
  type EncodableMessage,
} from '../../../src/common/codec/index.js';
import { ipToBytes, ipv6ToString } from '../../../src/common/codec/hosts.js';
import type { Clock } from '../../../src/common/clock.js';

const msg = (over: Partial<EncodableMessage> = {}): EncodableMessage => ({
  topic: 'TopicTest',
  body: Buffer.from('abcdefg'.repeat(100)),
  bornHost: { ip: '192.168.1.100', port: 54321 },
  storeHost: { ip: '10.0.0.1', port: 10911 },
  bornTimestamp: 1_700_000_000_000,
  storeTimestamp: 1_700_000_000_123,
  properties: { TAGS: 'a' },
  ...over,
});

describe('compression (RocketMQ: COMPRESSED_FLAG + compression type bits 0x700)', () => {
  it.each([
    ['type 0 (legacy zlib)', 0],
    ['ZLIB', CompressionType.ZLIB << 8],
    ['LZ4', CompressionType.LZ4 << 8],
  ])('%s: encode(compress) then decode inflates and clears COMPRESSED_FLAG', (_n, typeBits) => {
    const m = msg({ sysFlag: typeBits });
    const rec = encodeMessage(m, { compress: true });
    expect(rec.length).toBeLessThan(300);
    const raw = decodeMessages(rec, { decompressBody: false })[0];
    expect(raw?.sysFlag).toBe(typeBits | MessageSysFlag.COMPRESSED_FLAG);
    const [d] = decodeMessages(rec);
    expect(d?.sysFlag).toBe(typeBits);
    expect(d?.body?.equals(m.body as Buffer)).toBe(true);
    expect(decodeMessages(rec, { checkCRC: true })).toHaveLength(1);
  });

  it('ZSTD is decoded only: a malformed zstd body is a typed error, encoding with zstd is refused', () => {
    const rec = encodeMessage(msg({ sysFlag: 0x201, body: Buffer.from([0x28, 0xb5, 0x2f, 0xfd, 0, 0]) }));
    expect(() => decodeMessages(rec)).toThrow(DecodeError);
    expect(() => decodeMessages(rec)).toThrow(/zstd: truncated/);
    expect(decodeMessages(rec, { decompressBody: false })[0]?.sysFlag).toBe(0x201);
    expect(() => encodeMessage(msg({ sysFlag: 0x200 }), { compress: true })).toThrow(InvalidArgumentError);
    const unknown = encodeMessage(msg({ sysFlag: 0x501 }));
    expect(() => decodeMessages(unknown)).toThrow(DecodeError);
  });

  it('decompression bombs are refused', () => {
    const bomb = deflateSync(Buffer.alloc(70 * 1024 * 1024));
    const rec = encodeMessage(msg({ sysFlag: MessageSysFlag.COMPRESSED_FLAG, body: bomb }));
    expect(() => decodeMessages(rec)).toThrow(DecodeError);
    const small = encodeMessage(msg({ sysFlag: 1, body: deflateSync(Buffer.alloc(5000)) }));
    expect(() => decodeMessages(small, { maxDecompressedBytes: 4000 })).toThrow(DecodeError);
    expect(decodeMessages(small, { maxDecompressedBytes: 5000 })[0]?.body?.length).toBe(5000);
  });

  it('readBody false: no body, sysFlag untouched', () => {
    const rec = encodeMessage(msg(), { compress: true });
    const [d] = decodeMessages(rec, { readBody: false });
    expect(d?.body).toBeNull();
    expect(d?.sysFlag).toBe(1);
  });

  it('decoded bodies are copies: overwriting the input does not change them', () => {
    const rec = encodeMessage(msg({ body: Buffer.from('payload') }));
    const [d] = decodeMessages(rec);
    rec.fill(0);
    expect(d?.body?.toString()).toBe('payload');
  });
});

describe('message ids', () => {
  it('msgId is UNIQ_KEY when present, else the offset id', () => {
    const withKey = decodeMessages(encodeMessage(msg({ properties: { UNIQ_KEY: 'ABC' }, commitLogOffset: 16 })))[0];
    expect(withKey?.msgId).toBe('ABC');
    expect(withKey?.offsetMsgId).toBe('0A00000100002A9F0000000000000010');
    const without = decodeMessages(encodeMessage(msg({ commitLogOffset: 16 })))[0];
    expect(without?.msgId).toBe(without?.offsetMsgId);
  });

  it('IPv6 store host: 56-char id, round trip through decodeMessageId', () => {
    const id = createMessageId({ ip: '2001:db8::1', port: 10911 }, 2 ** 40);
    expect(id).toBe('20010DB8000000000000000000000001' + '00002A9F' + '0000010000000000');
    expect(decodeMessageId(id)).toEqual({ host: { ip: '2001:db8:0:0:0:0:0:1', port: 10911 }, offset: 2 ** 40 });
    expect(decodeMessageId(id.toLowerCase())).toEqual(decodeMessageId(id));
  });

  it('an IPv4-mapped store address decodes as IPv4 with a 56-char id ending in 12 zero bytes', () => {
    const rec = encodeMessage(msg({ storeHost: { ip: '2001:db8::1', port: 10911 }, commitLogOffset: 4096 }));
    const i = rec.indexOf(Buffer.from(ipToBytes('2001:db8::1') ?? []));
    Buffer.from('00000000000000000000ffff0a000001', 'hex').copy(rec, i);
    const [d] = decodeMessages(rec);
    expect(d?.storeHost).toEqual({ ip: '10.0.0.1', port: 10911 });
    expect(d?.offsetMsgId).toBe('0A00000100002A9F0000000000001000' + '0'.repeat(24));
    expect(d?.sysFlag).toBe(MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
  });

  it.each([
    ['', 'empty'],
    ['0A00000100002A9F000000000000100', '31 chars'],
    ['0A00000100002A9F000000000000100G', 'not hex'],
    ['0A00000100002A9F00000000000010000A', '34 chars'],
    ['0A000001FFFFFFFF0000000000001000', 'port out of range'],
    ['0A00000100002A9F7FFFFFFFFFFFFFFF', 'offset past 2^53'],
  ])('decodeMessageId(%j) throws InvalidArgumentError (%s)', (id) => {
    expect(() => decodeMessageId(id)).toThrow(InvalidArgumentError);
  });

  it('createMessageId refuses bad hosts and offsets', () => {
    expect(() => createMessageId({ ip: 'host.example', port: 1 }, 0)).toThrow(InvalidArgumentError);
    expect(() => createMessageId({ ip: '1.2.3.4', port: -1 }, 0)).toThrow(InvalidArgumentError);
    expect(() => createMessageId({ ip: '1.2.3.4', port: 1 }, 2 ** 53)).toThrow(InvalidArgumentError);
    expect(createMessageId({ ip: '1.2.3.4', port: 1 }, -1)).toBe('010203040000000' + '1FFFFFFFFFFFFFFFF');
  });

  it('createMessageId: host, port and offset bytes in hex, whichever host came before', () => {
    const hosts = [
      { ip: '10.0.0.1', port: 10911 },
      { ip: '10.0.0.1', port: 10912 },
      { ip: '10.0.0.2', port: 10911 },
      { ip: '2001:db8::1', port: 10911 },
    ];
    const offsets = [
      0,
      1,
      255,
      2 ** 31,
      2 ** 32 - 1,
      2 ** 32,
      2 ** 40 + 7,
      2 ** 53 - 1,
      -1,
      -(2 ** 32) - 1,
      -(2 ** 53) + 1,
    ];
    for (let round = 0; round < 2; round++) {
      for (const host of hosts) {
        for (const offset of offsets) {
          const bytes = Buffer.alloc((ipToBytes(host.ip) as Uint8Array).length + 12);
          bytes.set(ipToBytes(host.ip) as Uint8Array, 0);
          bytes.writeInt32BE(host.port, bytes.length - 12);
          bytes.writeBigInt64BE(BigInt(offset), bytes.length - 8);
          expect(createMessageId({ ...host }, offset)).toBe(bytes.toString('hex').toUpperCase());
        }
        expect(() => createMessageId(host, 2 ** 53)).toThrow(InvalidArgumentError);
      }
    }
    expect(() => createMessageId({ ip: '10.0.0.1', port: 70000 }, 0)).toThrow(InvalidArgumentError);
  });
});

describe('host text (Java InetAddress rules)', () => {
  it.each([
    ['10.0.0.1', '0a000001'],
    ['::1', '00000000000000000000000000000001'],
    ['::', '00000000000000000000000000000000'],
    ['fe80::1%eth0', 'fe800000000000000000000000000001'],
    ['[2001:db8::2]', '20010db8000000000000000000000002'],
    ['::ffff:10.0.0.1', '0a000001'],
    ['1:2:3:4:5:6:7:8', '00010002000300040005000600070008'],
    ['::1.2.3.4', '00000000000000000000000001020304'],
  ])('ipToBytes(%j)', (ip, hex) => {
    expect(Buffer.from(ipToBytes(ip) ?? []).toString('hex')).toBe(hex);
  });
  it.each(['', '1.2.3', '256.0.0.1', '1:2:3:4:5:6:7:8:9', '1::2::3', 'abcde::1', 'example.com', '1.2.3.4.5'])(
    'ipToBytes(%j) is null',
    (ip) => expect(ipToBytes(ip)).toBeNull(),
  );
  it('prints IPv6 uncompressed, lower case, no leading zeros', () => {
    expect(ipv6ToString(ipToBytes('2001:0DB8::00ff') ?? new Uint8Array(16))).toBe('2001:db8:0:0:0:0:0:ff');
  });
});

describe('properties string (RocketMQ: messageProperties2String / string2messageProperties)', () => {
  it('drops empty keys and values, keeps the last duplicate, tolerates a missing final separator', () => {
    expect({ ...string2messageProperties('a\u0001\u0002\u0001b\u0002k\u00011\u0002k\u00012\u0002x\u0001y') }).toEqual({
      k: '2',
      x: 'y',
    });
    expect({ ...string2messageProperties('ab\u0002\u0002c\u0001d\u0001e\u0002') }).toEqual({ c: 'd\u0001e' });
  });
  it('skips null values, keeps Map order, handles __proto__ as an ordinary key', () => {
    expect(
      messageProperties2String(
        new Map([
          ['b', '1'],
          ['a', null],
          ['c', '2'],
        ]),
      ),
    ).toBe('b\u00011\u0002c\u00012\u0002');
    const p = string2messageProperties('__proto__\u0001x\u0002');
    expect(Object.keys(p)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(p)).toBe(Object.prototype);
    expect(messageProperties2String(null)).toBe('');
  });
  it('an empty-valued property is written but dropped on decode; no properties decode as null', () => {
    const [d] = decodeMessages(encodeMessage(msg({ properties: { k: '', a: '1' } })));
    expect(d?.properties).toEqual({ a: '1' });
    expect(decodeMessages(encodeMessage(msg({ properties: null })))[0]?.properties).toBeNull();
    // A properties string whose every pair is dropped still decodes as an (empty) object, as in RocketMQ.
    expect(decodeMessages(encodeMessage(msg({ properties: { k: '' } })))[0]?.properties).toEqual({});
  });
  it('unpaired surrogates are written as ? (Java UTF-8)', () => {
    const [d] = decodeMessages(encodeMessage(msg({ topic: 'T\ud800', properties: { k: 'v\udc00' } })));
    expect(d?.topic).toBe('T?');
    expect(d?.properties).toEqual({ k: 'v?' });
  });
});

describe('encodeMessage limits (RocketMQ: encode throws)', () => {
  it('topic over 127 bytes in V1, allowed in V2', () => {
    expect(() => encodeMessage(msg({ topic: 'x'.repeat(128) }))).toThrow(InvalidArgumentError);
    expect(() => encodeMessage(msg({ topic: 'é'.repeat(64) }))).toThrow(InvalidArgumentError);
    const v2 = encodeMessage(msg({ topic: 'x'.repeat(128) }), { version: 2 });
    expect(decodeMessages(v2)[0]?.topic).toBe('x'.repeat(128));
  });
  it('properties over 32767 bytes', () => {
    expect(() => encodeMessage(msg({ properties: { k: 'v'.repeat(32765) } }))).toThrow(InvalidArgumentError);
  });
  it('storeSize smaller than needed; larger pads with zeros and still decodes', () => {
    expect(() => encodeMessage(msg({ storeSize: 50 }))).toThrow(InvalidArgumentError);
    const padded = encodeMessage(msg({ storeSize: 2000 }));
    expect(padded.length).toBe(2000);
    const two = decodeMessages(Buffer.concat([padded, padded]));
    expect(two.map((m) => m.storeSize)).toEqual([2000, 2000]);
  });
  it('bad arguments', () => {
    expect(() => encodeMessage(msg({ body: 'text' as unknown as Buffer }))).toThrow(InvalidArgumentError);
    expect(() => encodeMessage(msg({ flag: 1.5 }))).toThrow(InvalidArgumentError);
    expect(() => encodeMessage(msg(), { version: 3 as 1 })).toThrow(InvalidArgumentError);
    expect(() => decodeMessages('x' as unknown as Buffer)).toThrow(InvalidArgumentError);
  });
});

describe('decodeMessage / decodeMessages framing', () => {
  it('empty buffer gives [], records decode at any offset', () => {
    expect(decodeMessages(Buffer.alloc(0))).toEqual([]);
    const a = encodeMessage(msg({ topic: 'A' }));
    const b = encodeMessage(msg({ topic: 'B' }));
    const both = Buffer.concat([a, b]);
    expect(decodeMessages(both).map((m) => m.topic)).toEqual(['A', 'B']);
    expect(decodeMessage(both, a.length)).toMatchObject({ size: b.length, message: { topic: 'B' } });
    expect(decodeMessages(new Uint8Array(both))).toHaveLength(2);
  });
  it('a truncated body is a DecodeError at the broken record', () => {
    const a = encodeMessage(msg());
    const cut = Buffer.concat([a, a.subarray(0, a.length - 1)]);
    try {
      decodeMessages(cut);
      throw new Error('no error');
    } catch (e) {
      expect(e).toBeInstanceOf(DecodeError);
      expect((e as DecodeError).position).toBe(a.length);
      expect((e as DecodeError).code).toBe('ERR_DECODE');
    }
  });
  it('a port outside 0-65535 in the buffer fails (RocketMQ: InetSocketAddress refuses it)', () => {
    const a = encodeMessage(msg());
    a.writeInt32BE(70000, 52);
    expect(() => decodeMessages(a)).toThrow(/port/);
  });
  it('blank filler in a pull body is an error', () => {
    const blank = Buffer.alloc(8);
    blank.writeInt32BE(8, 0);
    blank.writeInt32BE(0xcbd43194 | 0, 4);
    expect(() => decodeMessages(blank)).toThrow(/blank/);
  });
});

describe('uniq ids (RocketMQ: MessageClientIDSetter)', () => {
  const fixed = (ms: number): Clock => ({ now: () => ms }) as unknown as Clock;

  it('32 upper-case hex chars: ip, pid, fixed int, ms since month start, counter', () => {
    const monthStart = new Date(2025, 8, 1).getTime();
    const a = createUniqId(fixed(monthStart + 1234));
    const b = createUniqId(fixed(monthStart + 1234));
    expect(a).toMatch(/^[0-9A-F]{32}$/);
    expect(getPidFromUniqId(a)).toBe(process.pid & 0xffff);
    expect(getIPStrFromUniqId(a)).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(a.slice(0, 20)).toBe(b.slice(0, 20));
    expect(a.slice(20, 28)).toBe('000004D2');
    expect((parseInt(b.slice(28), 16) - parseInt(a.slice(28), 16)) & 0xffff).toBe(1);
    expect(getNearlyTimeFromUniqId(a, fixed(monthStart + 5000)).getTime()).toBe(monthStart + 1234);
  });
  it('the month rolls over and a step back is clamped to 0', () => {
    const oct = new Date(2025, 9, 1).getTime();
    expect(createUniqId(fixed(oct + 10)).slice(20, 28)).toBe('0000000A');
    expect(createUniqId(fixed(oct - 5)).slice(20, 28)).toBe('00000000');
  });
  it('parsing helpers refuse bad ids', () => {
    expect(() => getPidFromUniqId('XYZ')).toThrow(InvalidArgumentError);
    expect(getIPStrFromUniqId('00000000000000000000000000000001' + 'FFFF' + '0'.repeat(20))).toBe(
      '0000:0000:0000:0000:0000:0000:0000:0001',
    );
  });
});

describe('batch body (RocketMQ: encodeMessages / decodeMessages)', () => {
  it('round-trips and refuses truncation', () => {
    const body = encodeBatchBody([
      { body: Buffer.from('one'), flag: 1, properties: { TAGS: 'a' } },
      { body: null, properties: null },
    ]);
    const d = decodeBatchBody(body);
    expect(d.map((m) => [m.flag, m.body.toString(), { ...m.properties }])).toEqual([
      [1, 'one', { TAGS: 'a' }],
      [0, '', {}],
    ]);
    const first = body.readInt32BE(0);
    for (let n = 1; n < body.length; n++) {
      if (n === first) continue; // the first message ends here
      expect(() => decodeBatchBody(body.subarray(0, n))).toThrow(DecodeError);
    }
    expect(decodeBatchBody(body.subarray(0, first))).toHaveLength(1);
    expect(decodeBatchBody(Buffer.alloc(0))).toEqual([]);
  });
});
