import fc from 'fast-check';
import { z } from 'zod';
import { quickCheckHeader } from '../../../src/protocol/header-check.js';
import { COMMANDS, RequestCode } from '../../../src/protocol/index.js';

/** Values that hit every branch of the field tests: bounds, non-integers, wrong types, undefined. */
const anyValue = fc.oneof(
  fc.string({ maxLength: 5 }),
  fc.boolean(),
  fc.integer(),
  fc.constantFrom(0, -1, 2147483647, 2147483648, -2147483648, -2147483649, 2 ** 53, 2 ** 53 - 1, 1.5, NaN, Infinity),
  fc.constantFrom(null, undefined, [], {}, '7'),
);

const schemas = [...COMMANDS.values()].flatMap((spec) => [
  [`${spec.name} request`, spec.requestHeader] as const,
  [`${spec.name} response`, spec.responseHeader] as const,
]);

describe('quickCheckHeader', () => {
  const answeredBy = new Map<string, number>();

  it.each(schemas)('%s: agrees with zod whenever it answers', (name, schema) => {
    const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape ?? {};
    const keys = Object.keys(shape);
    // Mostly well-typed values (so that whole headers pass), one field often replaced by anything.
    const typed = (field: z.ZodType): fc.Arbitrary<unknown> => {
      const t = (field as unknown as { _zod: { def: { type: string; innerType?: z.ZodType } } })._zod.def;
      if (t.type === 'optional' && t.innerType) return typed(t.innerType);
      if (t.type === 'string') return fc.string({ maxLength: 5 });
      if (t.type === 'boolean') return fc.boolean();
      if (t.type === 'number') return fc.integer({ min: -(2 ** 31), max: 2 ** 31 - 1 });
      return anyValue;
    };
    const required = keys.filter((k) => !shape[k]!.safeParse(undefined).success);
    const record = fc.record(Object.fromEntries(keys.map((k) => [k, typed(shape[k]!)])), { requiredKeys: required });
    const header = fc
      .tuple(record, fc.option(fc.tuple(fc.constantFrom(...keys, 'extra'), anyValue)))
      .map(([r, change]) => (change ? { ...r, [change[0]]: change[1] } : r));
    let answered = 0;
    fc.assert(
      fc.property(header, (h) => {
        const quick = quickCheckHeader(schema, h);
        if (quick === undefined) return;
        answered++;
        const parsed = schema.safeParse(h);
        expect(parsed.success).toBe(true);
        expect(quick).toStrictEqual(parsed.data);
        expect(Object.keys(quick)).toEqual(Object.keys(parsed.data as object));
      }),
      { numRuns: 150 },
    );
    answeredBy.set(name, answered);
  });

  it('answers for the headers of the busiest commands (the property above compared real answers)', () => {
    for (const name of ['SEND_MESSAGE request', 'SEND_MESSAGE response', 'PULL_MESSAGE request', 'HEART_BEAT response'])
      expect([name, answeredBy.get(name)! > 10]).toEqual([name, true]);
  });

  it('answers for a valid send header (unknown fields dropped) and leaves every invalid one to zod', () => {
    const schema = COMMANDS.get(RequestCode.SEND_MESSAGE)!.requestHeader;
    const valid = {
      producerGroup: 'G',
      topic: 'T',
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: 4,
      queueId: 3,
      sysFlag: 0,
      bornTimestamp: 1_700_000_000_000,
      flag: 0,
      properties: 'a\u0001b\u0002',
      batch: false,
      extra: 'dropped',
    };
    const { extra: _extra, ...expected } = valid;
    expect(quickCheckHeader(schema, valid)).toStrictEqual(expected);
    for (const bad of [
      { ...valid, queueId: 2 ** 31 },
      { ...valid, queueId: 1.5 },
      { ...valid, topic: 5 },
      { ...valid, batch: 'true' },
      { ...valid, bname: undefined },
      { ...valid, topic: undefined },
    ]) {
      expect(quickCheckHeader(schema, bad)).toBeUndefined();
    }
    expect(quickCheckHeader(schema, null)).toBeUndefined();
    expect(quickCheckHeader(schema, [valid])).toBeUndefined();
  });

  it('leaves schemas with anything but flat strings, numbers and booleans to zod', () => {
    const cases: z.ZodType[] = [
      z.object({ a: z.enum(['x', 'y']) }),
      z.object({ a: z.string().regex(/x/) }),
      z.object({ a: z.int().default(3) }),
      z.object({ a: z.object({ b: z.string() }) }),
      z.object({ a: z.string() }).refine(() => false),
      z.object({ a: z.string() }).catchall(z.string()),
      z.string(),
    ];
    for (const schema of cases) expect(quickCheckHeader(schema, { a: 'x' })).toBeUndefined();
    expect(quickCheckHeader(z.object({ a: z.number().gt(1).lt(3) }), { a: 2.5 })).toEqual({ a: 2.5 });
    expect(quickCheckHeader(z.object({ a: z.number().gt(1).lt(3) }), { a: 3 })).toBeUndefined();
    expect(quickCheckHeader(z.object({ a: z.number().gt(1).lt(3) }), { a: 1 })).toBeUndefined();
  });

  it('checks string lengths as zod does, every bound applied; strings with surrogates are left to zod', () => {
    const schema = z.object({ a: z.string().min(2).max(4).min(1), b: z.string().length(2).optional() });
    const answered = [{ a: 'xy' }, { a: 'wxyz' }, { a: 'xy', b: 'ab' }];
    for (const h of answered) expect(quickCheckHeader(schema, h)).toEqual(schema.parse(h));
    const refused = [{ a: 'x' }, { a: 'vwxyz' }, { a: 'xy', b: 'a' }];
    for (const h of refused) {
      expect(schema.safeParse(h).success).toBe(false);
      expect(quickCheckHeader(schema, h)).toBeUndefined();
    }
    // Two UTF-16 units, one code point: zod decides (versions count differently).
    expect(quickCheckHeader(schema, { a: '\u{1F600}' })).toBeUndefined();
  });

  it('applies every bound of a field, as zod does, not only the last one', () => {
    const schema = z.object({ a: z.int().min(5).min(1), b: z.number().lt(3).max(10).optional() });
    expect(schema.safeParse({ a: 3 }).success).toBe(false);
    expect(quickCheckHeader(schema, { a: 3 })).toBeUndefined();
    expect(quickCheckHeader(schema, { a: 5, b: 3 })).toBeUndefined();
    expect(quickCheckHeader(schema, { a: 5, b: 2.5 })).toEqual({ a: 5, b: 2.5 });
  });
});
