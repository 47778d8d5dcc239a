/**
 * What the header fast paths need to know of a command's zod object schema, read from zod 4's internals
 * (`_zod.def`) in this one place: each field's base type with its wrappers (optional, default,
 * nullable ...) looked through, and the bounds of a number field. `ext-fields.ts` (the extFields
 * reader and writer) and `header-check.ts` (the quick check) decide from this what they can handle
 * without zod; anything else goes to zod itself.
 * @pure
 */
import type { z } from 'zod';

/**
 * One check of a field as zod 4 records it: a number's `.min()` is `greater_than` with `inclusive: true`,
 * a string's `.min()` is `min_length` with its `minimum`.
 */
export interface CheckDef {
  check?: string;
  value?: unknown;
  inclusive?: boolean;
  minimum?: unknown;
  maximum?: unknown;
  length?: unknown;
}

interface Def {
  type?: string;
  format?: string;
  checks?: ReadonlyArray<{ _zod?: { def?: CheckDef } }>;
  innerType?: { _zod?: { def?: Def } };
  shape?: Record<string, { _zod?: { def?: Def } }>;
  catchall?: unknown;
}

export interface SchemaField {
  name: string;
  /** The wrapper types around the base, outermost first: `['optional']` for `z.string().optional()`. */
  wrappers: readonly string[];
  /** The base schema's type: 'string', 'number', 'boolean', 'enum', 'object' ... */
  type: string;
  /** The base's format ('safeint', 'int32' ... for numbers), when it has one. */
  format: string | undefined;
  /** The base's checks (bounds, lengths, refinements). */
  checks: readonly CheckDef[];
}

export interface ObjectFields {
  fields: readonly SchemaField[];
  /** The object itself has more than its shape: a refinement or a catchall for unknown keys. */
  hasObjectRules: boolean;
}

const cache = new WeakMap<z.ZodType, ObjectFields | null>();

/** The fields of an object schema, in the schema's order; null when `schema` is not an object schema. */
export function objectFields(schema: z.ZodType): ObjectFields | null {
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  const def = (schema as unknown as { _zod?: { def?: Def } })._zod?.def;
  let result: ObjectFields | null = null;
  if (def?.type === 'object' && def.shape !== undefined) {
    const fields: SchemaField[] = [];
    for (const [name, field] of Object.entries(def.shape)) {
      const wrappers: string[] = [];
      let d = field._zod?.def;
      while (d?.innerType !== undefined) {
        wrappers.push(d.type ?? '');
        d = d.innerType._zod?.def;
      }
      fields.push({
        name,
        wrappers,
        type: d?.type ?? '',
        format: d?.format,
        checks: (d?.checks ?? []).map((c) => c._zod?.def ?? {}),
      });
    }
    result = { fields, hasObjectRules: (def.checks?.length ?? 0) > 0 || def.catchall !== undefined };
  }
  cache.set(schema, result);
  return result;
}

/** True when the only wrappers of `field` are `optional` ones (`.partial()` of an optional field wraps twice). */
export const onlyOptional = (field: SchemaField): boolean => field.wrappers.every((w) => w === 'optional');

/** A field of a flat object schema: `optional` when it is wrapped in `optional` (once or more). */
export interface FlatField extends SchemaField {
  optional: boolean;
}

/**
 * The fields of a flat object schema: one without object rules whose fields are bare or only
 * `optional`. Null for any other schema: the header fast paths leave those to zod. (Their callers
 * cache what they build from it, once per schema.)
 */
export function flatFields(schema: z.ZodType): readonly FlatField[] | null {
  const object = objectFields(schema);
  if (object === null || object.hasObjectRules || !object.fields.every(onlyOptional)) return null;
  return object.fields.map((f) => ({ ...f, optional: f.wrappers.length > 0 }));
}

/** The range a number field's checks allow; each end is open or closed. */
export interface Bounds {
  min: number;
  minInclusive: boolean;
  max: number;
  maxInclusive: boolean;
}

/**
 * The range `checks` allow (the tightest of each end, as zod applies them all), or undefined when a
 * check is something other than a numeric bound.
 */
export function numberBounds(checks: readonly CheckDef[]): Bounds | undefined {
  const b: Bounds = { min: -Infinity, minInclusive: true, max: Infinity, maxInclusive: true };
  for (const c of checks) {
    const v = c.value;
    if (typeof v !== 'number') return undefined;
    const inclusive = c.inclusive === true;
    if (c.check === 'greater_than') {
      if (v > b.min || (v === b.min && !inclusive)) {
        b.min = v;
        b.minInclusive = inclusive;
      }
    } else if (c.check === 'less_than') {
      if (v < b.max || (v === b.max && !inclusive)) {
        b.max = v;
        b.maxInclusive = inclusive;
      }
    } else return undefined;
  }
  return b;
}

/**
 * The lengths a string field's checks allow, both ends included, or undefined when a check is something
 * other than a length bound.
 */
export function stringLengthBounds(checks: readonly CheckDef[]): { min: number; max: number } | undefined {
  let min = 0;
  let max = Infinity;
  for (const c of checks) {
    if (c.check === 'min_length' && typeof c.minimum === 'number') min = Math.max(min, c.minimum);
    else if (c.check === 'max_length' && typeof c.maximum === 'number') max = Math.min(max, c.maximum);
    else if (c.check === 'length_equals' && typeof c.length === 'number') {
      min = Math.max(min, c.length);
      max = Math.min(max, c.length);
    } else return undefined;
  }
  return { min, max };
}
