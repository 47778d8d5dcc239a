/**
 * RocketMQ's remoting codec rules, one by one (each named after the behaviour of RemotingCommand,
 * RocketMQSerializable or fastjson it reproduces), plus property tests: round trips in both
 * serializations and malformed input that must give a typed error, never a crash or a hang.
 */
import fc from 'fast-check';
import { InvalidArgumentError } from '../../../src/common/errors.js';
import {
  LanguageCode,
  RemotingDecodeError,
  decodeRemotingCommand,
  encodeRemotingCommand,
  frameSerializeType,
  isOneway,
  isResponse,
  markOneway,
  markResponse,
  type LanguageName,
  type RemotingCommandInput,
  type SerializeType,
} from '../../../src/remoting/index.js';

const base = { code: 11, language: 'JAVA' as const, version: 479, opaque: 7, flag: 0 };
const roundTrip = (cmd: RemotingCommandInput, serializeType: SerializeType) =>
  decodeRemotingCommand(encodeRemotingCommand(cmd, { serializeType }).subarray(4));
const jsonHeader = (cmd: RemotingCommandInput): string => {
  const f = encodeRemotingCommand(cmd, { serializeType: 'JSON' });
  return f.subarray(8, 8 + f.readUInt32BE(4)).toString('utf8');
};
/** A frame (after the length) with a JSON header of `text` and an optional body. */
const jsonFrame = (text: string, body = Buffer.alloc(0)): Buffer => {
  const h = Buffer.from(text, 'utf8');
  const f = Buffer.alloc(4 + h.length + body.length);
  f.writeUInt32BE(h.length, 0);
  h.copy(f, 4);
  body.copy(f, 4 + h.length);
  return f;
};

describe('frame', () => {
  test('RocketMQ: length counts header-length word, header and body but not itself; top byte is the type', () => {
    const body = Buffer.from('abc');
    for (const type of ['JSON', 'ROCKETMQ'] as const) {
      const f = encodeRemotingCommand({ ...base, body }, { serializeType: type });
      const headerLength = f.readUInt32BE(4) & 0xffffff;
      expect(f.readInt32BE(0)).toBe(f.length - 4);
      expect(f.readInt32BE(0)).toBe(4 + headerLength + 3);
      expect(f[4]).toBe(type === 'JSON' ? 0 : 1);
      expect(frameSerializeType(f.subarray(4))).toBe(type);
      expect(f.subarray(f.length - 3).toString()).toBe('abc');
    }
  });

  test('RocketMQ: an empty body writes nothing and reads back as no body', () => {
    for (const type of ['JSON', 'ROCKETMQ'] as const) {
      const empty = encodeRemotingCommand({ ...base, body: Buffer.alloc(0) }, { serializeType: type });
      expect(empty).toEqual(encodeRemotingCommand({ ...base, body: null }, { serializeType: type }));
      expect(decodeRemotingCommand(empty.subarray(4)).body).toBeNull();
    }
  });

  test.each([
    ['0x81', 0x81],
    ['0x02', 0x02],
    ['0xff', 0xff],
  ])('RocketMQ: the whole top byte is the type, so %s is not a type', (_n, type) => {
    const f = jsonFrame('{"code":1}');
    f[0] = type;
    expect(() => decodeRemotingCommand(f)).toThrow(RemotingDecodeError);
  });

  test('RocketMQ: a header length beyond the frame is "bad header length"', () => {
    const f = jsonFrame('{"code":1}');
    f.writeUInt32BE(f.length - 3, 0);
    expect(() => decodeRemotingCommand(f)).toThrow(/bad header length/);
    expect(() => decodeRemotingCommand(Buffer.from('000001', 'hex'))).toThrow(RemotingDecodeError);
  });

  test('flag bits: 1 is response, 2 is oneway, every other bit survives', () => {
    expect(isResponse(markResponse(0))).toBe(true);
    expect(isOneway(markOneway(0))).toBe(true);
    expect(isOneway(markResponse(0))).toBe(false);
    for (const type of ['JSON', 'ROCKETMQ'] as const) {
      expect(roundTrip({ ...base, flag: -0x80000000 | 0x7ffc | 3 }, type).flag).toBe(-0x80000000 | 0x7ffc | 3);
    }
  });

  test('a command that cannot be written is refused, naming the field', () => {
    expect(() => encodeRemotingCommand({ ...base, code: 2 ** 31 })).toThrow(InvalidArgumentError);
    expect(() => encodeRemotingCommand({ ...base, opaque: 1.5 })).toThrow(/opaque/);
    expect(() => encodeRemotingCommand({ ...base, language: 'COBOL' as LanguageName })).toThrow(/language/);
    expect(() =>
      encodeRemotingCommand({ ...base, extFields: { a: 1 as unknown as string } }, { serializeType: 'ROCKETMQ' }),
    ).toThrow(/extFields/);
    expect(() => encodeRemotingCommand(base, { serializeType: 'XML' as SerializeType })).toThrow(/serializeType/);
  });
});

describe('JSON header (fastjson)', () => {
  test('RocketMQ: properties in alphabetical order, serializeTypeCurrentRPC "JSON", nulls omitted', () => {
    expect(jsonHeader({ ...base, remark: null, extFields: null })).toBe(
      '{"code":11,"flag":0,"language":"JAVA","opaque":7,"serializeTypeCurrentRPC":"JSON","version":479}',
    );
    expect(jsonHeader({ ...base, remark: 'r', extFields: { b: '1', a: null, c: '2' } })).toBe(
      '{"code":11,"extFields":{"b":"1","c":"2"},"flag":0,"language":"JAVA","opaque":7,"remark":"r","serializeTypeCurrentRPC":"JSON","version":479}',
    );
  });

  test('RocketMQ: an empty map is written as {} and an empty remark as "", and read back so', () => {
    const cmd = roundTrip({ ...base, remark: '', extFields: {} }, 'JSON');
    expect(cmd.remark).toBe('');
    expect(cmd.extFields).toEqual({});
    expect(roundTrip({ ...base }, 'JSON').extFields).toBeNull();
  });

  test('fastjson: short escapes for quote, backslash, \\b \\t \\n \\f \\r; upper-case \\u for other controls, DEL, C1, U+2028/9', () => {
    const h = jsonHeader({ ...base, remark: '"\\\b\t\n\f\r\u0000\u000b\u001f\u007f\u0085\u2028\u2029/\ufeffé' });
    expect(h).toContain('"remark":"\\"\\\\\\b\\t\\n\\f\\r\\u0000\\u000B\\u001F\\u007F\\u0085\\u2028\\u2029/\ufeffé"');
  });

  test('Java UTF-8: non-ASCII is written raw, a lone surrogate becomes "?"', () => {
    const f = encodeRemotingCommand({ ...base, extFields: { ключ: '值😀', k: 'a\ud800b' } });
    expect(f.includes(Buffer.from('"ключ":"值😀"', 'utf8'))).toBe(true);
    expect(f.includes(Buffer.from('"k":"a?b"'))).toBe(true);
    expect(decodeRemotingCommand(f.subarray(4)).extFields).toEqual({ ключ: '值😀', k: 'a?b' });
  });

  test('code and version keep all 32 bits in JSON', () => {
    const cmd = roundTrip({ ...base, code: 40000, version: 70000 }, 'JSON');
    expect([cmd.code, cmd.version]).toEqual([40000, 70000]);
  });

  test('fastjson reads leniently: any order, unknown fields, unquoted keys, single quotes, numbers as strings', () => {
    const cmd = decodeRemotingCommand(
      jsonFrame(
        `{version:'12', extFields:{a:1,'b':"x",c:1.50,d:true,e:null}, "x":[1,{"y":2}], opaque:"5", code:3,flag:1,}`,
      ),
    );
    expect(cmd).toMatchObject({ code: 3, version: 12, opaque: 5, flag: 1, language: 'JAVA', remark: null });
    expect(cmd.extFields).toEqual({ a: '1', b: 'x', c: '1.50', d: 'true', e: null });
  });

  test('fastjson: a decimal in a string map goes through BigDecimal.toString', () => {
    const cmd = decodeRemotingCommand(jsonFrame('{"code":1,"extFields":{"a":1e3,"b":-0.0000001,"c":12.5E1}}'));
    expect(cmd.extFields).toEqual({ a: '1E+3', b: '-1E-7', c: '125' });
  });

  test('RocketMQ: missing language and version take JAVA and 0; an unknown language name reads as null', () => {
    expect(decodeRemotingCommand(jsonFrame('{"code":1,"opaque":2}'))).toMatchObject({ language: 'JAVA', version: 0 });
    const cmd = decodeRemotingCommand(jsonFrame('{"code":1,"language":"COBOL"}'));
    expect(cmd.language).toBeNull();
    // The JSON writer leaves a null language out; the binary one cannot write it.
    expect(jsonHeader(cmd)).not.toContain('language');
    expect(() => encodeRemotingCommand(cmd, { serializeType: 'ROCKETMQ' })).toThrow(/language/);
  });

  test('an __proto__ key is an ordinary key', () => {
    const cmd = decodeRemotingCommand(jsonFrame('{"code":1,"extFields":{"__proto__":"x"}}'));
    expect(Object.keys(cmd.extFields ?? {})).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(cmd.extFields)).toBe(Object.prototype);
  });

  test.each([
    ['names', '"minOffset":"0","b":"x","a":"1","maxOffset":"9","nextBeginOffset":"32","suggestWhichBrokerId":"0"'],
    ['index-like names', '"b":"x","10":"ten","a":"1","2":"two","nextBeginOffset":"32"'],
  ])('a header as RocketMQ writes it (extFields with %s) reads as the lenient reader reads it', (_n, ext) => {
    // The first form is standard JSON; the second needs the lenient reader.
    const standard = decodeRemotingCommand(
      jsonFrame(`{"code":0,"extFields":{${ext}},"flag":1,"language":"GO","opaque":-5,"remark":"FOUND","version":405}`),
    );
    const lenient = decodeRemotingCommand(
      jsonFrame(`{code:'0',extFields:{${ext}},flag:1,language:'GO',opaque:'-5',remark:'FOUND',version:405,}`),
    );
    expect(standard).toEqual(lenient);
    // Java's HashMap order, whatever order the text had (index-like keys included).
    expect(Object.keys(standard.extFields ?? {})).toEqual(Object.keys(lenient.extFields ?? {}));
    expect(standard).toMatchObject({ code: 0, flag: 1, language: 'GO', opaque: -5, remark: 'FOUND', version: 405 });
  });

  test.each([
    ['not JSON', 'hello'],
    ['an array', '[1]'],
    ['null', 'null'],
    ['empty', ''],
    ['trailing text', '{"code":1} x'],
    ['a non-integer code', '{"code":"abc"}'],
    ['a code out of range', '{"code":4294967296}'],
    ['extFields not an object', '{"code":1,"extFields":"a"}'],
    ['an unterminated string', '{"code":1,"remark":"abc'],
    ['deep nesting', `{"x":${'['.repeat(100000)}`],
  ])('a JSON header that is %s is a decode error', (_n, text) => {
    expect(() => decodeRemotingCommand(jsonFrame(text))).toThrow(RemotingDecodeError);
  });
});

describe('ROCKETMQ binary header', () => {
  test('RocketMQ: code and version are cut to 16 bits', () => {
    const cmd = roundTrip({ ...base, code: 40000, version: 70000 }, 'ROCKETMQ');
    expect([cmd.code, cmd.version]).toEqual([-25536, 4464]);
  });

  test('RocketMQ: length 0 reads as null: remark "", empty value, empty map', () => {
    expect(roundTrip({ ...base, remark: '' }, 'ROCKETMQ').remark).toBeNull();
    expect(roundTrip({ ...base, extFields: {} }, 'ROCKETMQ').extFields).toBeNull();
    expect(roundTrip({ ...base, extFields: { k: '' } }, 'ROCKETMQ').extFields).toEqual({ k: null });
    // An empty key reads as Java's null key, which has no place in a record: it is dropped.
    expect(roundTrip({ ...base, extFields: { '': 'v', k: 'x' } }, 'ROCKETMQ').extFields).toEqual({ k: 'x' });
  });

  test('RocketMQ: lengths are UTF-8 byte counts', () => {
    const cmd = roundTrip({ ...base, remark: 'é😀', extFields: { ключ: '值' } }, 'ROCKETMQ');
    expect(cmd.remark).toBe('é😀');
    expect(cmd.extFields).toEqual({ ключ: '值' });
  });

  test('RocketMQ: a repeated key, the last one wins; an unknown language byte reads as null', () => {
    const f = encodeRemotingCommand({ ...base, extFields: { a: '1', b: '2' } }, { serializeType: 'ROCKETMQ' }).subarray(
      4,
    );
    // Rename key "b" to "a" in place.
    const at = f.lastIndexOf(Buffer.from('0001620000000132', 'hex'));
    f[at + 2] = 0x61;
    f[4 + 2] = 99; // language byte
    const cmd = decodeRemotingCommand(f);
    expect(cmd.extFields).toEqual({ a: '2' });
    expect(cmd.language).toBeNull();
  });

  test('every language code survives both serializations', () => {
    for (const language of Object.keys(LanguageCode) as LanguageName[]) {
      expect(roundTrip({ ...base, language }, 'ROCKETMQ').language).toBe(language);
      expect(roundTrip({ ...base, language }, 'JSON').language).toBe(language);
    }
  });

  test('a length past the header or the frame is a decode error', () => {
    const f = encodeRemotingCommand({ ...base, remark: 'abc' }, { serializeType: 'ROCKETMQ' }).subarray(4);
    const remarkLenAt = 4 + 13;
    for (const bad of [1000, -1, 0x7fffffff]) {
      const g = Buffer.from(f);
      g.writeInt32BE(bad, remarkLenAt);
      expect(() => decodeRemotingCommand(g)).toThrow(RemotingDecodeError);
    }
  });
});

const anyLanguage = fc.constantFrom(...(Object.keys(LanguageCode) as LanguageName[]));
const int32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
const text = fc.string({ unit: 'grapheme', maxLength: 20 });
const command = fc.record({
  code: int32,
  language: anyLanguage,
  version: int32,
  opaque: int32,
  flag: int32,
  remark: fc.option(text, { nil: null }),
  extFields: fc.option(fc.dictionary(text, text, { maxKeys: 6 }), { nil: null }),
  body: fc.option(
    fc.uint8Array({ minLength: 1, maxLength: 64 }).map((b) => Buffer.from(b)),
    { nil: null },
  ),
});

describe('properties', () => {
  test('JSON round trip keeps every field exactly', () => {
    fc.assert(
      fc.property(command, (c) => {
        const d = roundTrip(c, 'JSON');
        expect({ ...d, extFields: d.extFields && { ...d.extFields } }).toEqual(c);
      }),
    );
  });

  test('ROCKETMQ round trip keeps every field, with 16-bit code/version and empty strings read as null', () => {
    fc.assert(
      fc.property(command, (c) => {
        const d = roundTrip(c, 'ROCKETMQ');
        const all = c.extFields && Object.entries(c.extFields);
        // An empty key reads back as Java's null key, which a record cannot hold.
        const ext = all && all.length > 0 ? all.filter(([k]) => k !== '') : null;
        expect(d).toEqual({
          ...c,
          code: (c.code << 16) >> 16,
          version: (c.version << 16) >> 16,
          remark: c.remark === '' ? null : c.remark,
          extFields: ext && Object.fromEntries(ext.map(([k, v]) => [k, v === '' ? null : v])),
        });
      }),
    );
  });

  test('random bytes give a command or a RemotingDecodeError, nothing else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), fc.constantFrom(0, 1, 2), (bytes, type) => {
        const b = Buffer.from(bytes);
        if (b.length >= 4) {
          b[0] = type;
          b.writeUIntBE(Math.min(b.readUIntBE(1, 3), b.length), 1, 3);
        }
        try {
          decodeRemotingCommand(b);
        } catch (e) {
          expect(e).toBeInstanceOf(RemotingDecodeError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  test('every truncation and every single-byte corruption of valid frames decodes or fails typed', () => {
    fc.assert(
      fc.property(
        command,
        fc.constantFrom<SerializeType>('JSON', 'ROCKETMQ'),
        fc.nat(),
        fc.nat(255),
        (c, type, at, byte) => {
          const f = encodeRemotingCommand(c, { serializeType: type }).subarray(4);
          const cut = f.subarray(0, at % (f.length + 1));
          const bad = Buffer.from(f);
          bad[at % bad.length] = byte;
          for (const input of [cut, bad]) {
            try {
              decodeRemotingCommand(input);
            } catch (e) {
              expect(e).toBeInstanceOf(RemotingDecodeError);
            }
          }
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('JSON header written byte by byte', () => {
  // A header whose strings are all printable ASCII is written straight into the frame; any other goes
  // through the text writer. Both must give fastjson's bytes, so the byte writer is checked against it.
  const printable = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '~', '/', '%', '"', '\\'), maxLength: 8 });
  const anyText = fc.oneof(printable, fc.string({ maxLength: 6 }));
  const int32 = fc.integer({ min: -0x80000000, max: 0x7fffffff });
  const command = fc.record({
    code: int32,
    flag: int32,
    opaque: int32,
    version: fc.oneof(int32, fc.constantFrom(0, 9, 10, 99, 100, -1, -10)),
    language: fc.constantFrom<LanguageName | null>('JAVA', 'NODE_JS', 'GO', null),
    remark: fc.option(anyText),
    extFields: fc.option(fc.dictionary(fc.oneof(printable, anyText), anyText, { maxKeys: 5 })),
  });

  test('the same bytes as fastjson text encoded as UTF-8', () => {
    fc.assert(
      fc.property(command, (cmd) => {
        const ext = cmd.extFields === null ? [] : Object.entries(cmd.extFields);
        const text =
          `{"code":${cmd.code}` +
          (cmd.extFields === null
            ? ''
            : `,"extFields":{${ext.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`) +
          `,"flag":${cmd.flag}` +
          (cmd.language === null ? '' : `,"language":"${cmd.language}"`) +
          `,"opaque":${cmd.opaque}` +
          (cmd.remark === null ? '' : `,"remark":${JSON.stringify(cmd.remark)}`) +
          `,"serializeTypeCurrentRPC":"JSON","version":${cmd.version}}`;
        const plain = /^[\x20-\x7e]*$/.test(text);
        const got = jsonHeader(cmd);
        // JSON.stringify and fastjson agree on printable ASCII; for other text only the parse is compared.
        if (plain) expect(got).toBe(text);
        else expect(JSON.parse(got)).toEqual(JSON.parse(text.replace(/\\u[dD][89a-fA-F][0-9a-fA-F]{2}/g, '?')));
        const frame = encodeRemotingCommand(cmd);
        expect(frame.readInt32BE(0)).toBe(frame.length - 4);
        expect(frame.readUInt32BE(4)).toBe(frame.length - 8);
      }),
      { numRuns: 500 },
    );
  });
});
