/**
 * The remoting codec against cases produced by Apache RocketMQ's own RemotingCommand (fastjson 1.2.83,
 * NettyEncoder/NettyDecoder): byte-exact frames in both serializations, and decoding of RocketMQ's
 * wire bytes and of hand-made (also broken) headers.
 */
import {
  RemotingDecodeError,
  decodeRemotingCommand,
  encodeRemotingCommand,
  isOneway,
  isResponse,
  type RemotingCommand,
} from '../../../src/remoting/index.js';
import { LanguageCode } from '../../../src/remoting/remoting-command.js';
import { javaHashMapOrder } from '../../../src/remoting/java-hash-map.js';
import { fastjsonStringify, jsonValueToPlain, parseLenientJson } from '../../../src/remoting/fastjson-text.js';
import {
  hex,
  orderedExtFields,
  remotingVectors,
  type BodyCase,
  type DecodeCase,
  type FrameCase,
  type VectorDecodedCommand,
} from './vectors.js';

const data = remotingVectors();
const frames = data.cases.filter((c): c is FrameCase => c.kind === 'frame');
const decodes = data.cases.filter((c): c is DecodeCase => c.kind === 'decode');

/** The decoded command in the vector's terms. */
function view(cmd: RemotingCommand): Omit<VectorDecodedCommand, 'serializeTypeCurrentRPC' | 'extFieldsNullKey'> {
  return {
    code: cmd.code,
    language: cmd.language,
    version: cmd.version,
    opaque: cmd.opaque,
    flag: cmd.flag,
    isResponseType: isResponse(cmd.flag),
    isOnewayRPC: isOneway(cmd.flag),
    remark: cmd.remark,
    extFields: cmd.extFields === null ? null : { ...cmd.extFields },
    bodyLength: cmd.body === null ? null : cmd.body.length,
  };
}

function expected(d: VectorDecodedCommand): ReturnType<typeof view> {
  const { serializeTypeCurrentRPC: _t, extFieldsNullKey: _k, ...rest } = d;
  const r = rest as Record<string, unknown>;
  delete r.extFieldsNullKeyValue;
  return rest;
}

/** The frame without its 4-byte total length. */
const afterLength = (h: string): Buffer => (hex(h) as Buffer).subarray(4);

describe('remoting vectors: constants', () => {
  test('language codes are RocketMQ LanguageCode bytes', () => {
    expect({ ...LanguageCode }).toEqual(data.constants.languageCodes);
  });
});

for (const c of frames)
  describe(`remoting frame ${c.id}`, () => {
    const command = {
      code: c.code,
      language: c.language as keyof typeof LanguageCode | null,
      version: c.version,
      opaque: c.opaque,
      flag: c.flag,
      remark: c.remark,
      extFields: orderedExtFields(c.extFields, c.extFieldsOrder),
      body: hex(c.bodyHex),
    };

    test('encodes byte for byte as RemotingCommand.encode()', () => {
      expect(encodeRemotingCommand(command, { serializeType: c.serializeType }).toString('hex')).toBe(c.encodeHex);
    });

    test('decodes the bytes NettyEncoder wrote', () => {
      if (c.decoded === 'error') {
        expect(() => decodeRemotingCommand(afterLength(c.wireHex))).toThrow(RemotingDecodeError);
        return;
      }
      expect(view(decodeRemotingCommand(afterLength(c.wireHex)))).toEqual(expected(c.decoded));
    });

    test('decodes its own encoding the same way', () => {
      const d = c.decodedFromEncodeHex ?? c.decoded;
      if (d === 'error')
        return expect(() => decodeRemotingCommand(afterLength(c.encodeHex))).toThrow(RemotingDecodeError);
      expect(view(decodeRemotingCommand(afterLength(c.encodeHex)))).toEqual(expected(d));
    });

    if (
      !c.wireSameAsEncode &&
      c.wireExtFieldsOrder &&
      new Set(c.wireExtFieldsOrder).size === c.wireExtFieldsOrder.length
    ) {
      test('writes the NettyEncoder bytes when given its key order', () => {
        const ext = orderedExtFields(c.extFields, c.wireExtFieldsOrder);
        expect(
          encodeRemotingCommand({ ...command, extFields: ext }, { serializeType: c.serializeType }).toString('hex'),
        ).toBe(c.wireHex);
      });
    }
  });

for (const c of decodes)
  describe(`remoting decode ${c.id}`, () => {
    test('decodes as RemotingCommand.decode()', () => {
      const input = hex(c.inputHex) ?? Buffer.alloc(0);
      if (c.decoded === 'error') {
        expect(() => decodeRemotingCommand(input)).toThrow(RemotingDecodeError);
        return;
      }
      const cmd = decodeRemotingCommand(input);
      expect(view(cmd)).toEqual(expected(c.decoded));
      const type = c.decoded.serializeTypeCurrentRPC ?? 'JSON';
      if (c.reencodeHex !== undefined)
        expect(encodeRemotingCommand(cmd, { serializeType: type }).toString('hex')).toBe(c.reencodeHex);
      else if (c.reencodeError !== undefined)
        expect(() => encodeRemotingCommand(cmd, { serializeType: type })).toThrow();
    });
  });

const bodies = data.cases.filter((c): c is BodyCase => c.kind === 'body');
/** Body classes whose fastjson text we write (beans only: maps with Integer keys are read, never written). */
const WRITTEN = new Set(['HeartbeatData', 'GetConsumerListByGroupResponseBody']);

for (const c of bodies)
  describe(`remoting body ${c.id} (${c.class})`, () => {
    test('fastjson text reads back to the same data as the standard JSON', () => {
      expect(jsonValueToPlain(parseLenientJson(c.json))).toEqual(JSON.parse(c.standardJson));
    });
    if (WRITTEN.has(c.class))
      test('written byte for byte as RemotingSerializable.encode()', () => {
        expect(fastjsonStringify(JSON.parse(c.standardJson))).toBe(c.json);
      });
  });

describe('Java HashMap iteration order', () => {
  for (const c of frames.filter((f) => (f.extFieldsOrder?.length ?? 0) > 1))
    test(`${c.id}: the buckets of its ${c.extFieldsOrder?.length} keys are in RocketMQ's order`, () => {
      const order = c.extFieldsOrder as string[];
      expect(
        javaHashMapOrder(order, (c as FrameCase & { extFieldsHashMapCapacity: number }).extFieldsHashMapCapacity),
      ).toEqual(order);
    });
});
