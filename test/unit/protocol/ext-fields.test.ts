/**
 * Typed headers ↔ extFields: the rules of RocketMQ's header decoding that our schemas keep, and
 * agreement with RocketMQ's own `decodeCommandCustomHeader` on the reference vectors.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../../src/common/errors.js';
import {
  SEND_MESSAGE_V2_KEYS,
  extFieldsToHeader,
  fromSendMessageV2Keys,
  headerToExtFields,
  requestHeaderFromExtFields,
  requestHeaderToExtFields,
  responseHeaderFromExtFields,
  toSendMessageV2Keys,
} from '../../../src/protocol/ext-fields.js';
import { COMMANDS } from '../../../src/protocol/commands/index.js';
import { RequestCode } from '../../../src/protocol/request-code.js';
import { remotingVectors, type FrameCase, type HeaderDecodeCase } from '../remoting/vectors.js';

const schema = z.object({
  topic: z.string(),
  queueId: z.int(),
  offset: z.int().optional(),
  committed: z.boolean().optional(),
});

describe('extFields ↔ typed header', () => {
  test('RocketMQ String.valueOf on the way out: numbers in decimal, booleans true/false, unset fields left out', () => {
    expect(headerToExtFields(schema, { topic: 'T', queueId: 3, committed: false, offset: undefined })).toEqual({
      topic: 'T',
      queueId: '3',
      committed: 'false',
    });
  });

  test('unknown keys stay out of both directions', () => {
    expect(headerToExtFields(schema, { topic: 'T', queueId: 1, extra: 'x' })).toEqual({ topic: 'T', queueId: '1' });
    expect(extFieldsToHeader(schema, { topic: 'T', queueId: '1', bname: 'b', ns: null })).toEqual({
      topic: 'T',
      queueId: 1,
    });
  });

  test('RocketMQ Long.parseLong: "+12" is 12, " 12" and "1.5" are errors naming the field', () => {
    expect(extFieldsToHeader(schema, { topic: 'T', queueId: '+12' }).queueId).toBe(12);
    expect(() => extFieldsToHeader(schema, { topic: 'T', queueId: ' 12' }, 'GET_MAX_OFFSET')).toThrow(
      /GET_MAX_OFFSET\.queueId: not an integer/,
    );
    expect(() => extFieldsToHeader(schema, { topic: 'T', queueId: '1.5' })).toThrow(InvalidArgumentError);
  });

  test('RocketMQ Boolean.parseBoolean: TRUE is true, anything else is false', () => {
    expect(extFieldsToHeader(schema, { topic: 'T', queueId: '0', committed: 'TRUE' }).committed).toBe(true);
    expect(extFieldsToHeader(schema, { topic: 'T', queueId: '0', committed: 'yes' }).committed).toBe(false);
  });

  test('JSON numbers and booleans (as some clients send them) are accepted', () => {
    expect(extFieldsToHeader(schema, { topic: 7, queueId: 2, committed: true })).toEqual({
      topic: '7',
      queueId: 2,
      committed: true,
    });
  });

  test('a missing or null required field is an error naming it; 64-bit values past 2^53 are refused', () => {
    expect(() => extFieldsToHeader(schema, { topic: 'T', queueId: null }, 'X')).toThrow(/X\.queueId/);
    expect(() => extFieldsToHeader(schema, null, 'X')).toThrow(/X\.topic/);
    expect(() => extFieldsToHeader(schema, { topic: 'T', queueId: '9223372036854775807' })).toThrow(/queueId/);
  });

  test('SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE use the one-letter keys a..n both ways', () => {
    const header = {
      producerGroup: 'PG',
      topic: 'T',
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: 4,
      queueId: 1,
      sysFlag: 0,
      bornTimestamp: 1700000000000,
      flag: 0,
      properties: 'TAGS\u0001a\u0002',
      reconsumeTimes: 0,
      unitMode: false,
      maxReconsumeTimes: 16,
      batch: true,
      bname: 'broker-a',
    };
    const ext = requestHeaderToExtFields(RequestCode.SEND_MESSAGE_V2, header);
    expect(Object.keys(ext).sort()).toEqual('abcdefghijklmn'.split(''));
    expect(ext).toMatchObject({ a: 'PG', b: 'T', g: '1700000000000', m: 'true', n: 'broker-a' });
    expect(requestHeaderFromExtFields(RequestCode.SEND_MESSAGE_V2, ext)).toEqual(header);
    expect(requestHeaderToExtFields(RequestCode.SEND_BATCH_MESSAGE, header)).toEqual(ext);
    expect(requestHeaderToExtFields(RequestCode.SEND_MESSAGE, header)).toMatchObject({ producerGroup: 'PG' });
    expect(Object.values(SEND_MESSAGE_V2_KEYS)).toHaveLength(14);
    expect(fromSendMessageV2Keys(toSendMessageV2Keys({ topic: 'T', other: 'x' }))).toEqual({ topic: 'T', other: 'x' });
  });

  test('an unknown request code is an error naming the code', () => {
    expect(() => requestHeaderFromExtFields(99999, {})).toThrow(/request code 99999/);
  });
});

/** RocketMQ header classes of the vectors that our commands model, by where they are used. */
const CLASSES: Record<string, { code: number; side: 'request' | 'response' }> = {
  PullMessageRequestHeader: { code: RequestCode.PULL_MESSAGE, side: 'request' },
  PullMessageResponseHeader: { code: RequestCode.PULL_MESSAGE, side: 'response' },
  SendMessageRequestHeader: { code: RequestCode.SEND_MESSAGE, side: 'request' },
  SendMessageRequestHeaderV2: { code: RequestCode.SEND_MESSAGE_V2, side: 'request' },
  SendMessageResponseHeader: { code: RequestCode.SEND_MESSAGE, side: 'response' },
  QueryConsumerOffsetRequestHeader: { code: RequestCode.QUERY_CONSUMER_OFFSET, side: 'request' },
  QueryConsumerOffsetResponseHeader: { code: RequestCode.QUERY_CONSUMER_OFFSET, side: 'response' },
  UpdateConsumerOffsetRequestHeader: { code: RequestCode.UPDATE_CONSUMER_OFFSET, side: 'request' },
  GetMaxOffsetRequestHeader: { code: RequestCode.GET_MAX_OFFSET, side: 'request' },
  GetMaxOffsetResponseHeader: { code: RequestCode.GET_MAX_OFFSET, side: 'response' },
  GetMinOffsetRequestHeader: { code: RequestCode.GET_MIN_OFFSET, side: 'request' },
  GetMinOffsetResponseHeader: { code: RequestCode.GET_MIN_OFFSET, side: 'response' },
  SearchOffsetRequestHeader: { code: RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, side: 'request' },
  SearchOffsetResponseHeader: { code: RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, side: 'response' },
  UnregisterClientRequestHeader: { code: RequestCode.UNREGISTER_CLIENT, side: 'request' },
  ConsumerSendMsgBackRequestHeader: { code: RequestCode.CONSUMER_SEND_MSG_BACK, side: 'request' },
  GetConsumerListByGroupRequestHeader: { code: RequestCode.GET_CONSUMER_LIST_BY_GROUP, side: 'request' },
  GetRouteInfoRequestHeader: { code: RequestCode.GET_ROUTEINFO_BY_TOPIC, side: 'request' },
  HeartbeatRequestHeader: { code: RequestCode.HEART_BEAT, side: 'request' },
};

/** Java's toString of our typed value, for comparison with the decoded header in the vectors. */
function javaString(name: string, v: unknown): string {
  // RocketMQ: BoundaryType.getType — any case of "upper" is UPPER, everything else LOWER.
  if (name === 'boundaryType') return String(v).toLowerCase() === 'upper' ? 'UPPER' : 'LOWER';
  return String(v);
}

function expectAgreement(
  cls: string,
  extFields: Record<string, string | null> | null,
  javaHeader: Record<string, string | null> | undefined,
  javaFailed: boolean,
): void {
  const target = CLASSES[cls];
  if (!target) return;
  const read = target.side === 'request' ? requestHeaderFromExtFields : responseHeaderFromExtFields;
  let ours: Record<string, unknown> | undefined;
  let err: unknown;
  try {
    ours = read(target.code, extFields);
  } catch (e) {
    err = e;
  }
  if (err !== undefined) {
    // We refuse where RocketMQ threw, or where it silently left one of our fields null.
    expect(err).toBeInstanceOf(InvalidArgumentError);
    const field = (err as InvalidArgumentError).field.split('.').pop() as string;
    expect(javaFailed || javaHeader?.[field] === null || javaHeader?.[field] === undefined).toBe(true);
    return;
  }
  expect(javaFailed).toBe(false);
  for (const [name, v] of Object.entries(ours ?? {})) {
    if (javaHeader && name in javaHeader) expect([name, javaString(name, v)]).toEqual([name, javaHeader[name]]);
  }
}

const data = remotingVectors();
const frames = data.cases.filter((c): c is FrameCase => c.kind === 'frame' && !!c.decodeHeaderClass);
const headerCases = data.cases.filter((c): c is HeaderDecodeCase => c.kind === 'headerDecode');

describe('agreement with RocketMQ decodeCommandCustomHeader', () => {
  for (const c of frames) {
    test(`${c.id}: ${c.decodeHeaderClass}`, () => {
      expectAgreement(c.decodeHeaderClass as string, c.extFields, c.decodedHeader, c.decodedHeaderError !== undefined);
    });
  }
  for (const c of headerCases) {
    test(`${c.id}: ${c.headerClass}`, () => {
      expectAgreement(c.headerClass, c.extFields, c.decodedHeader, c.error !== undefined);
    });
  }

  test('our request header written out equals what RocketMQ wrote, for the fields we model', () => {
    for (const c of frames) {
      const target = CLASSES[c.decodeHeaderClass as string];
      if (!target || target.side !== 'request' || !c.extFields) continue;
      const typed = requestHeaderFromExtFields(target.code, c.extFields);
      const ext = requestHeaderToExtFields(target.code, typed);
      for (const [k, v] of Object.entries(ext)) expect([k, v]).toEqual([k, c.extFields[k]]);
    }
  });
});

describe('extFields → typed header: the plain-field path agrees with the schema', () => {
  // Most headers are strings, bounded integers and booleans: they are checked without a schema parse.
  // Whatever path runs, the header (or the error) must be what the schema's parse gives.
  const values = [
    '',
    'x',
    '0',
    '-1',
    '+7',
    '2147483647',
    '2147483648',
    '-2147483649',
    '9007199254740991',
    '9007199254740992',
    '1.5',
    'true',
    'FALSE',
    ' 1',
    null,
    undefined,
  ];
  const viaSchema = (s: z.ZodObject, ext: Record<string, string | null | undefined>): unknown => {
    try {
      return extFieldsToHeader(s, ext);
    } catch (e) {
      return (e as Error).message;
    }
  };
  const reference = (s: z.ZodObject, ext: Record<string, string | null | undefined>): unknown => {
    // The schema alone, fed what extFieldsToHeader coerced: strings for strings, numbers, booleans.
    const raw: Record<string, unknown> = {};
    for (const [name, field] of Object.entries(s.shape)) {
      const v = ext[name];
      if (v === null || v === undefined) continue;
      let t = field as z.ZodType;
      for (let inner = (t._zod.def as { innerType?: z.ZodType }).innerType; inner;) {
        t = inner;
        inner = (t._zod.def as { innerType?: z.ZodType }).innerType;
      }
      const type = (t._zod.def as { type: string }).type;
      if (type === 'number') {
        if (!/^[+-]?\d+$/.test(v)) return 'not an integer';
        raw[name] = Number(v);
      } else if (type === 'boolean') raw[name] = v.toLowerCase() === 'true';
      else raw[name] = v;
    }
    const r = s.safeParse(raw);
    return r.success ? r.data : 'refused';
  };
  const schemas = [
    ...[...COMMANDS.values()].flatMap((c) => [c.requestHeader, c.responseHeader]),
    z.object({ a: z.int().gt(0).lt(10), b: z.int().min(-3).max(3).optional(), c: z.string().min(2).optional() }),
  ] as z.ZodObject[];

  test.each(schemas.map((s, i) => [i, s] as const))('schema %i', (_i, s) => {
    const names = Object.keys(s.shape);
    let seed = 7;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    for (let round = 0; round < 60; round++) {
      const ext: Record<string, string | null | undefined> = {};
      for (const n of names) ext[n] = values[next(values.length)];
      const got = viaSchema(s, ext);
      const want = reference(s, ext);
      if (typeof got === 'string') expect(typeof want).toBe('string');
      else {
        expect(got).toEqual(want);
        expect(Object.keys(got as object)).toEqual(Object.keys(want as object));
      }
    }
  });

  test('SEND_MESSAGE_V2 read straight from its letters gives what the letters mapped to names give', () => {
    // A letter wins over its field's full name, whatever their order; a null letter hides the name.
    const names = Object.keys(SEND_MESSAGE_V2_KEYS);
    let seed = 11;
    const next = (n: number): number => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return (seed >>> 12) % n; // the high bits: the low ones of this generator repeat quickly
    };
    const read = (code: number, ext: Parameters<typeof requestHeaderFromExtFields>[1]): unknown => {
      try {
        return requestHeaderFromExtFields(code, ext);
      } catch (e) {
        return (e as Error).message;
      }
    };
    // Mostly values every field takes (so the straight read runs), now and then any value.
    const plain = ['1', '0', '+7', '12'];
    const pick = (): string | null | undefined =>
      next(10) === 0 ? values[next(values.length)] : plain[next(plain.length)];
    for (let round = 0; round < 400; round++) {
      const ext: Record<string, string | null | undefined> = {};
      for (const n of names) {
        const how = next(4);
        const value = pick();
        const fullFirst = next(2) === 0;
        if (fullFirst && how >= 2) ext[n] = pick();
        if (how !== 2) ext[SEND_MESSAGE_V2_KEYS[n] as string] = value;
        if (!fullFirst && how >= 2) ext[n] = pick();
      }
      const got = read(RequestCode.SEND_MESSAGE_V2, ext);
      const mapped = fromSendMessageV2Keys(ext);
      const want = read(RequestCode.SEND_MESSAGE, mapped);
      if (typeof got === 'string') expect(got.replace('SEND_MESSAGE_V2', 'SEND_MESSAGE')).toBe(want);
      else {
        expect(got).toEqual(want);
        expect(Object.keys(got as object)).toEqual(Object.keys(want as object));
      }
    }
  });
});
