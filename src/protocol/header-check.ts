/**
 * A quick check of a command header against its zod schema, for the common case: a flat object of
 * strings (with length bounds), integers (with bounds), numbers and booleans, some optional. Such a
 * schema is read once and turned into a list of plain `typeof`, length and range tests; a header that
 * passes them is copied field by field into the object zod would have returned (the schema's fields in
 * its order, unknown fields dropped). A header that fails, or a schema with anything else in it (nested
 * objects, enums, defaults, transforms, refinements), gets `undefined` back, and the caller runs zod,
 * which names the field and the problem. Headers are checked on every call; zod's general machinery
 * costs the most while the process is young, when every request runs through code that is not yet
 * compiled.
 * @pure
 */
import type { z } from 'zod';
import { describeZodError } from './define.js';
import { flatFields, numberBounds, stringLengthBounds, type SchemaField } from './schema-fields.js';

/** One field's test: true when `v` (present, not undefined) is valid. */
type FieldTest = (v: unknown) => boolean;

interface FieldCheck {
  key: string;
  optional: boolean;
  test: FieldTest;
}

const isString: FieldTest = (v) => typeof v === 'string';
const isBoolean: FieldTest = (v) => typeof v === 'boolean';
const isFiniteNumber: FieldTest = (v) => typeof v === 'number' && Number.isFinite(v);
const HIGH_SURROGATE = /[\uD800-\uDBFF]/;

/** `base` with the bounds of `checks`, or undefined when a check is not a bound. */
function boundsTest(checks: SchemaField['checks'], base: FieldTest): FieldTest | undefined {
  const b = numberBounds(checks);
  if (b === undefined) return undefined;
  const { min, minInclusive, max, maxInclusive } = b;
  if (min === -Infinity && max === Infinity) return base;
  return (v) =>
    base(v) &&
    (minInclusive ? (v as number) >= min : (v as number) > min) &&
    (maxInclusive ? (v as number) <= max : (v as number) < max);
}

function fieldTest(f: SchemaField): FieldTest | undefined {
  switch (f.type) {
    case 'string': {
      if (f.checks.length === 0) return isString;
      const b = stringLengthBounds(f.checks);
      if (b === undefined) return undefined;
      const { min, max } = b;
      // Without a surrogate, UTF-16 units are code points (zod counts one or the other, by version).
      return (v) => typeof v === 'string' && v.length >= min && v.length <= max && !HIGH_SURROGATE.test(v);
    }
    case 'boolean':
      return f.checks.length === 0 ? isBoolean : undefined;
    case 'number':
      if (f.format === 'safeint') return boundsTest(f.checks, Number.isSafeInteger as FieldTest);
      if (f.format === undefined) return boundsTest(f.checks, isFiniteNumber);
      return undefined;
    default:
      return undefined;
  }
}

/** The field checks of a flat object schema, or null when the schema is not one this check covers. */
function compile(schema: z.ZodType): FieldCheck[] | null {
  const fields = flatFields(schema);
  if (fields === null) return null;
  const checks: FieldCheck[] = [];
  for (const f of fields) {
    const test = fieldTest(f);
    if (test === undefined) return null;
    checks.push({ key: f.name, optional: f.optional, test });
  }
  return checks;
}

const compiled = new WeakMap<z.ZodType, FieldCheck[] | null>();

/**
 * What `schema.parse(header)` returns, when the header is a plain object that passes the quick check;
 * otherwise undefined (run zod for the verdict and its message).
 */
export function quickCheckHeader(schema: z.ZodType, header: unknown): Record<string, unknown> | undefined {
  let fields = compiled.get(schema);
  if (fields === undefined) {
    fields = compile(schema);
    compiled.set(schema, fields);
  }
  if (fields === null || header === null || typeof header !== 'object' || Array.isArray(header)) return undefined;
  const input = header as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as FieldCheck;
    const v = input[f.key];
    if (v === undefined) {
      if (f.optional && !Object.hasOwn(input, f.key)) continue;
      return undefined;
    }
    if (!f.test(v)) return undefined;
    out[f.key] = v;
  }
  return out;
}

/** A header's verdict: the parsed header, or the field at fault and why (zod's words). */
export type HeaderCheck = { ok: true; data: Record<string, unknown> } | { ok: false; field: string; message: string };

/**
 * `schema.safeParse(header)` with the quick check first: the same verdict and the same parsed header;
 * zod runs only when the quick check cannot decide, and its error names the field.
 */
export function checkHeader(schema: z.ZodType, header: unknown): HeaderCheck {
  const quick = quickCheckHeader(schema, header);
  if (quick !== undefined) return { ok: true, data: quick };
  const parsed = schema.safeParse(header);
  return parsed.success
    ? { ok: true, data: parsed.data as Record<string, unknown> }
    : { ok: false, ...describeZodError(parsed.error) };
}
