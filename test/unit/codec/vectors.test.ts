import { inflateSync } from 'node:zlib';
import {
  DecodeError,
  InvalidArgumentError,
  createMessageId,
  decodeBatchBody,
  decodeMessage,
  decodeMessageId,
  decodeMessages,
  decodeProperties,
  encodeBatchBody,
  encodeBatchBodyMessage,
  encodeMessage,
  getIPFromUniqId,
  getIPStrFromUniqId,
  getPidFromUniqId,
  messageProperties2String,
  string2messageProperties,
  type BatchBodyMessage,
} from '../../../src/common/codec/index.js';
import { ipToBytes } from '../../../src/common/codec/hosts.js';
import {
  LONG_FIELDS,
  allSafe,
  codecVectors,
  comparable,
  expected,
  hexBuf,
  long,
  propsMap,
  toEncodable,
  type BatchMessageVector,
  type CodecCase,
  type VectorDecoded,
  type VectorHost,
} from './helpers.js';

const data = codecVectors();

function expectHost(host: VectorHost): void {
  if (host.addressHex !== undefined) {
    expect(Buffer.from(ipToBytes(host.ip) ?? []).toString('hex')).toBe(host.addressHex);
  }
}

function expectDecoded(buf: Buffer, d: VectorDecoded, clientMsgId: string | null | undefined): void {
  const safe = allSafe(d as unknown as Record<string, unknown>, LONG_FIELDS);
  if (!safe) {
    // 64-bit values past 2^53 are refused with a typed error, never rounded.
    expect(() => decodeMessages(buf)).toThrow(DecodeError);
    return;
  }
  const [m, ...rest] = decodeMessages(buf);
  expect(rest).toHaveLength(0);
  expect(m).toBeDefined();
  if (!m) return;
  expect(comparable(m)).toEqual(expected(d));
  expectHost(d.bornHost);
  expectHost(d.storeHost);
  if (clientMsgId) expect(m.msgId).toBe(clientMsgId);
  const one = decodeMessage(buf, 0);
  expect(one.size).toBe(d.storeSize);
  expect(comparable(one.message)).toEqual(expected(d));
}

function checkDecodeSide(c: CodecCase, buf: Buffer): void {
  if (c.decoded === null || c.decoded === undefined) {
    // RocketMQ's decoder returns null; ours throws a typed error carrying the position.
    expect(() => decodeMessages(buf)).toThrow(DecodeError);
    expect(() => decodeMessage(buf, 0)).toThrow(DecodeError);
  } else {
    expectDecoded(buf, c.decoded, c.clientMsgId);
    if (c.offsetMsgId !== undefined) expect(decodeMessages(buf)[0]?.offsetMsgId).toBe(c.offsetMsgId);
    if (c.decodedWithoutDecompress) {
      const [raw] = decodeMessages(buf, { decompressBody: false });
      expect(raw?.sysFlag).toBe(c.decodedWithoutDecompress.sysFlag);
      expect(raw?.body?.toString('hex') ?? null).toBe(c.decodedWithoutDecompress.bodyHex || null);
    }
  }
  if (c.decodeWithCrcCheckOk === true) expect(decodeMessages(buf, { checkCRC: true })).toHaveLength(1);
  if (c.decodeWithCrcCheckOk === false) expect(() => decodeMessages(buf, { checkCRC: true })).toThrow(DecodeError);
  if (c.decodePropertiesResult !== undefined) {
    if (c.decodePropertiesResult === null) {
      let result: Record<string, string> | null | 'threw' = 'threw';
      try {
        result = decodeProperties(buf);
      } catch (e) {
        expect(e).toBeInstanceOf(DecodeError);
      }
      // RocketMQ gives null for no properties (or swallows an error); we give null or a DecodeError.
      expect(result === null || result === 'threw').toBe(true);
    } else {
      expect({ ...decodeProperties(buf) }).toEqual(c.decodePropertiesResult);
    }
  }
}

describe('message-codec vectors: cases', () => {
  it.each(data.cases.map((c) => [`${c.id} ${c.group} ${c.note ?? ''}`, c] as const))('%s', (_n, c) => {
    const buf = hexBuf(c.hex === 'error' ? '' : c.hex);
    if (c.kind === 'encode+decode' && c.fields) {
      const f = c.fields;
      if (c.propertiesString !== undefined) {
        expect(messageProperties2String(propsMap(f.properties))).toBe(c.propertiesString);
      }
      const msg = toEncodable(f);
      if (c.hex === 'error' || !allSafe(f as unknown as Record<string, unknown>, LONG_FIELDS)) {
        expect(() => encodeMessage(msg, { compress: c.needCompress === true })).toThrow(InvalidArgumentError);
        if (c.hex === 'error') return;
      } else {
        const encoded = encodeMessage(msg, { compress: c.needCompress === true });
        const zlibType = ((f.sysFlag >> 8) & 7) === 0 || ((f.sysFlag >> 8) & 7) === 3;
        if (c.needCompress && (f.sysFlag & 1) !== 0 && !zlibType) {
          // Other compressors may differ in bytes (node:zlib at level 5 matches java.util.zip exactly, so
          // zlib cases compare bytes): compare the record around the body, and the body inflated.
          const ours = decodeMessages(encoded, { decompressBody: false })[0];
          const theirs = decodeMessages(buf, { decompressBody: false })[0];
          expect(ours && theirs).toBeTruthy();
          if (!ours || !theirs) return;
          expect(inflateSync(ours.body ?? Buffer.alloc(0))).toEqual(inflateSync(theirs.body ?? Buffer.alloc(0)));
          expect({ ...comparable(ours), bodyHex: null, storeSize: 0 }).toEqual({
            ...comparable(theirs),
            bodyHex: null,
            storeSize: 0,
          });
        } else {
          expect(encoded.toString('hex')).toBe(c.hex);
        }
        if (c.length !== undefined) expect(buf.length).toBe(c.length);
      }
    }
    checkDecodeSide(c, buf);
  });
});

describe('message-codec vectors: multiMessageBodies (RocketMQ: MessageDecoder.decodes)', () => {
  it.each(data.multiMessageBodies.map((c) => [c.note, c] as const))('%s', (_n, c) => {
    const buf = hexBuf(c.hex);
    // Decode record by record: the records RocketMQ returned come out identical.
    const got: ReturnType<typeof decodeMessage>[] = [];
    let p = 0;
    let failure: unknown = null;
    while (p < buf.length) {
      try {
        const r = decodeMessage(buf, p);
        got.push(r);
        p += r.size;
      } catch (e) {
        failure = e;
        break;
      }
    }
    expect(got.map((r) => comparable(r.message))).toEqual(c.decoded.map(expected));
    c.decoded.forEach((d, i) => expect(got[i]?.message.msgId).toBe(d.clientMsgId));
    if (failure === null) {
      expect(decodeMessages(buf).map(comparable)).toEqual(c.decoded.map(expected));
    } else {
      // RocketMQ stops at the broken record; decodeMessages rejects the whole body, naming the position.
      expect(failure).toBeInstanceOf(DecodeError);
      expect(() => decodeMessages(buf)).toThrow(DecodeError);
      try {
        decodeMessages(buf);
      } catch (e) {
        expect((e as DecodeError).position).toBeGreaterThanOrEqual(p);
        expect((e as DecodeError).position).toBeLessThanOrEqual(buf.length);
      }
    }
  });
});

describe('message-codec vectors: messageIds', () => {
  it.each(data.messageIds.map((c) => [c.msgId, c] as const))('%s', (_n, c) => {
    const offset = long(c.offset);
    if (offset === null) {
      expect(() => createMessageId({ ip: c.ip, port: c.port }, Number(c.offset))).toThrow(InvalidArgumentError);
      expect(() => decodeMessageId(c.msgId)).toThrow(InvalidArgumentError);
      return;
    }
    expect(createMessageId({ ip: c.ip, port: c.port }, offset)).toBe(c.msgId);
    if (c.msgIdViaBuffer) expect(createMessageId({ ip: c.ip, port: c.port }, offset)).toBe(c.msgIdViaBuffer);
    const d = decodeMessageId(c.msgId);
    expect(d).toEqual({ host: { ip: c.decodedHost.ip, port: c.decodedHost.port }, offset: Number(c.decodedOffset) });
    expectHost(c.decodedHost);
  });
});

describe('message-codec vectors: messageIdDecode', () => {
  it.each(data.messageIdDecode.map((c) => [c.msgId, c] as const))('%s', (_n, c) => {
    if (!c.decodedHost || c.decodedOffset === undefined || long(c.decodedOffset) === null) {
      expect(() => decodeMessageId(c.msgId)).toThrow(InvalidArgumentError);
      return;
    }
    expect(decodeMessageId(c.msgId)).toEqual({
      host: { ip: c.decodedHost.ip, port: c.decodedHost.port },
      offset: Number(c.decodedOffset),
    });
    expectHost(c.decodedHost);
  });
});

describe('message-codec vectors: uniqIds (RocketMQ: MessageClientIDSetter parsing)', () => {
  it.each(data.uniqIds.map((c) => [c.uniqId, c] as const))('%s', (_n, c) => {
    expect(getIPStrFromUniqId(c.uniqId)).toBe(c.ip);
    expect(Buffer.from(getIPFromUniqId(c.uniqId)).toString('hex')).toBe(c.ipHex);
    expect(getPidFromUniqId(c.uniqId)).toBe(c.pid);
  });
});

describe('message-codec vectors: propertiesStrings (RocketMQ: string2messageProperties)', () => {
  it.each(data.propertiesStrings.map((c) => [JSON.stringify(c.propertiesString), c] as const))('%s', (_n, c) => {
    expect({ ...string2messageProperties(c.propertiesString) }).toEqual(c.map);
  });
});

function toBatchMessage(v: BatchMessageVector): BatchBodyMessage {
  const props = Array.isArray(v.properties) ? propsMap(v.properties) : v.properties;
  return { flag: v.flag, body: hexBuf(v.bodyHex), properties: props };
}

function expectBatchDecoded(buf: Buffer, list: BatchMessageVector[]): void {
  const got = decodeBatchBody(buf);
  expect(got.map((m) => ({ flag: m.flag, bodyHex: m.body.toString('hex'), properties: { ...m.properties } }))).toEqual(
    list.map((v) => ({
      flag: v.flag,
      bodyHex: v.bodyHex,
      properties: Array.isArray(v.properties)
        ? Object.fromEntries(
            v.properties.filter((e): e is [string, string] => typeof e[1] === 'string' && e[1] !== '' && e[0] !== ''),
          )
        : { ...v.properties },
    })),
  );
}

describe('message-codec vectors: batchBodies (RocketMQ: encodeMessage / encodeMessages / decodeMessages)', () => {
  it.each(data.batchBodies.map((c, i) => [`${i} ${c.kind}`, c] as const))('%s', (_n, c) => {
    const buf = hexBuf(c.hex);
    switch (c.kind) {
      case 'encodeMessage': {
        const v = c as unknown as BatchMessageVector;
        expect(encodeBatchBodyMessage(toBatchMessage(v)).toString('hex')).toBe(c.hex);
        expectBatchDecoded(buf, [v]);
        break;
      }
      case 'encodeMessages': {
        const list = c.messages ?? [];
        expect(encodeBatchBody(list.map(toBatchMessage)).toString('hex')).toBe(c.hex);
        expectBatchDecoded(buf, list);
        break;
      }
      case 'decodeMessages':
        expectBatchDecoded(buf, c.decoded ?? c.messages ?? []);
        break;
      default:
        throw new Error(`unknown batch vector kind ${c.kind}`);
    }
  });
});
