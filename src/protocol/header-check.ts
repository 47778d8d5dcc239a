/**
 * A quick check of a command header against its zod schema, for the common case: a flat object of
 * strings, integers (with bounds), numbers and booleans, some optional. Such a schema is read once and
 * turned into a list of plain `typeof` and range tests; a header that passes them is copied field by
 * field into the object zod would have returned (the schema's fields in its order, unknown fields
 * dropped). A header that fails, or a schema with anything else in it (nested objects, enums, defaults,
 * transforms, refinements), gets `undefined` back, and the caller runs zod, which names the field and
 * the problem. Headers are checked on every call; zod's general machinery costs the most while the
 * process is young, when every request runs through code that is not yet compiled.
 * @pure
 */
import type { z } from 'zod';
import { describeZodError } from './define.js';

/** One field's test: true when `v` (present, not undefined) is valid. */
type FieldTest = (v: unknown) => boolean;

interface FieldCheck {
  key: string;
  optional: boolean;
  test: FieldTest;
}

/** The zod internals read here (zod 4's `_zod.def`). */
interface Def {
  type?: string;
  format?: string;
  checks?: ReadonlyArray<{ _zod?: { def?: { check?: string; value?: unknown; inclusive?: boolean } } }>;
  innerType?: { _zod?: { def?: Def } };
  shape?: Record<string, { _zod?: { def?: Def } }>;
  catchall?: unknown;
}

const isString: FieldTest = (v) => typeof v === 'string';
const isBoolean: FieldTest = (v) => typeof v === 'boolean';

/** The bound tests of a number schema, or undefined when it has a check other than bounds. */
function boundsTest(def: Def, base: FieldTest): FieldTest | undefined {
  let min = -Infinity;
  let minInclusive = true;
  let max = Infinity;
  let maxInclusive = true;
  for (const c of def.checks ?? []) {
    const d = c._zod?.def;
    if (typeof d?.value !== 'number') return undefined;
    if (d.check === 'greater_than') {
      min = d.value;
      minInclusive = d.inclusive === true;
    } else if (d.check === 'less_than') {
      max = d.value;
      maxInclusive = d.inclusive === true;
    } else return undefined;
  }
  if (min === -Infinity && max === Infinity) return base;
  return (v) =>
    base(v) &&
    (minInclusive ? (v as number) >= min : (v as number) > min) &&
    (maxInclusive ? (v as number) <= max : (v as number) < max);
}

function fieldTest(def: Def | undefined): FieldTest | undefined {
  if (def === undefined) return undefined;
  switch (def.type) {
    case 'string':
      return def.checks === undefined || def.checks.length === 0 ? isString : undefined;
    case 'boolean':
      return def.checks === undefined || def.checks.length === 0 ? isBoolean : undefined;
    case 'number':
      if (def.format === 'safeint') return boundsTest(def, Number.isSafeInteger as FieldTest);
      if (def.format === undefined) return boundsTest(def, (v) => typeof v === 'number' && Number.isFinite(v));
      return undefined;
    default:
      return undefined;
  }
}

/** The field checks of a flat object schema, or null when the schema is not one this check covers. */
function compile(schema: z.ZodType): FieldCheck[] | null {
  const def = (schema as unknown as { _zod?: { def?: Def } })._zod?.def;
  if (def?.type !== 'object' || def.shape === undefined || def.catchall !== undefined) return null;
  if (def.checks !== undefined && def.checks.length > 0) return null;
  const fields: FieldCheck[] = [];
  for (const [key, field] of Object.entries(def.shape)) {
    let fdef = field._zod?.def;
    const optional = fdef?.type === 'optional';
    // `.partial()` of an optional field wraps it twice.
    while (fdef?.type === 'optional') fdef = fdef.innerType?._zod?.def;
    const test = fieldTest(fdef);
    if (test === undefined) return null;
    fields.push({ key, optional, test });
  }
  return fields;
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
