import { z } from 'zod';
import { flatFields, numberBounds, objectFields, onlyOptional } from '../../../src/protocol/schema-fields.js';

describe('objectFields', () => {
  it('gives each field its base type, format, checks and wrappers, in the schema order', () => {
    const schema = z.object({
      s: z.string(),
      o: z.string().optional(),
      twice: z.int().optional().optional(),
      d: z.int().min(0).default(3),
      n: z.boolean().nullable(),
      e: z.enum(['x', 'y']),
    });
    const { fields, hasObjectRules } = objectFields(schema)!;
    expect(hasObjectRules).toBe(false);
    expect(fields.map((f) => [f.name, f.wrappers, f.type, f.format ?? null])).toEqual([
      ['s', [], 'string', null],
      ['o', ['optional'], 'string', null],
      ['twice', ['optional', 'optional'], 'number', 'safeint'],
      ['d', ['default'], 'number', 'safeint'],
      ['n', ['nullable'], 'boolean', null],
      ['e', [], 'enum', null],
    ]);
    expect(fields.map(onlyOptional)).toEqual([true, true, true, false, false, true]);
    expect(fields[3]!.checks).toEqual([expect.objectContaining({ check: 'greater_than', value: 0, inclusive: true })]);
  });

  it('tells an object with a refinement or a catchall, and returns null for a non-object schema', () => {
    expect(objectFields(z.object({ a: z.string() }).refine(() => true))!.hasObjectRules).toBe(true);
    expect(objectFields(z.object({ a: z.string() }).catchall(z.string()))!.hasObjectRules).toBe(true);
    expect(objectFields(z.string())).toBeNull();
  });
});

describe('flatFields', () => {
  it('gives the fields of an object whose fields are bare or only optional, each saying whether it is optional', () => {
    const flat = flatFields(
      z.object({ s: z.string(), o: z.int().optional(), twice: z.boolean().optional().optional() }),
    );
    expect(flat?.map((f) => [f.name, f.optional])).toEqual([
      ['s', false],
      ['o', true],
      ['twice', true],
    ]);
  });

  it('is null for a field with another wrapper, an object with rules, or a non-object schema', () => {
    expect(flatFields(z.object({ a: z.string(), d: z.int().default(1) }))).toBeNull();
    expect(flatFields(z.object({ a: z.string() }).refine(() => true))).toBeNull();
    expect(flatFields(z.string())).toBeNull();
  });
});

describe('numberBounds', () => {
  const checksOf = (schema: z.ZodType) => objectFields(z.object({ a: schema }))!.fields[0]!.checks;

  it('is unbounded without checks', () => {
    expect(numberBounds([])).toEqual({ min: -Infinity, minInclusive: true, max: Infinity, maxInclusive: true });
  });

  it('keeps the tightest bound of each end, an open end winning a tie', () => {
    expect(numberBounds(checksOf(z.int().min(5).min(1).max(9).lt(20)))).toEqual({
      min: 5,
      minInclusive: true,
      max: 9,
      maxInclusive: true,
    });
    expect(numberBounds(checksOf(z.number().min(2).gt(2).lt(7).max(7)))).toEqual({
      min: 2,
      minInclusive: false,
      max: 7,
      maxInclusive: false,
    });
  });

  it('is undefined when a check is not a numeric bound', () => {
    expect(numberBounds(checksOf(z.int().multipleOf(2)))).toBeUndefined();
    expect(numberBounds(checksOf(z.string().min(2)))).toBeUndefined();
  });
});
