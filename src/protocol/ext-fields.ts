/**
 * A command's typed header ↔ RocketMQ's `extFields`, the string map a remoting header carries.
 *
 * Out: every set field becomes a string as Java's `String.valueOf` writes it (numbers in decimal,
 * booleans `true`/`false`); unset fields are left out, as RocketMQ leaves out null ones.
 * In: each field of the command's zod schema is read back to its type — integers with Java's
 * `Long.parseLong` syntax (`+12` is accepted, ` 12` is not), booleans as `Boolean.parseBoolean` reads
 * them (`true` in any case is true, anything else false) — and then validated by the schema. JSON
 * numbers and booleans are accepted as well (some clients send them unquoted), a null value counts as
 * absent, and keys the schema does not know are left out. A bad value throws an
 * `InvalidArgumentError` naming the command and the field.
 *
 * SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE carry RocketMQ's SendMessageRequestHeaderV2, whose keys are
 * single letters `a`…`n`; the mapping to SendMessageRequestHeader's names is applied here.
 * @pure
 */
import type { z } from 'zod';
import { InvalidArgumentError } from '../common/errors.js';
import { COMMANDS, SendMessage } from './commands/index.js';
import { describeZodError } from './define.js';
import { RequestCode } from './request-code.js';

/** extFields as they come off the wire: strings, or null for a value RocketMQ read as null. */
export type ExtFieldsIn = Readonly<Record<string, string | number | boolean | null | undefined>>;

type ObjectSchema = z.ZodObject;
type FieldKind = 'string' | 'integer' | 'number' | 'boolean' | 'other';

/** SendMessageRequestHeaderV2's one-letter keys (RocketMQ's `a`…`n`) by SendMessageRequestHeader field. */
export const SEND_MESSAGE_V2_KEYS: Readonly<Record<string, string>> = Object.freeze({
  producerGroup: 'a',
  topic: 'b',
  defaultTopic: 'c',
  defaultTopicQueueNums: 'd',
  queueId: 'e',
  sysFlag: 'f',
  bornTimestamp: 'g',
  flag: 'h',
  properties: 'i',
  reconsumeTimes: 'j',
  unitMode: 'k',
  maxReconsumeTimes: 'l',
  batch: 'm',
  bname: 'n',
});
const SEND_MESSAGE_V2_FIELDS: ReadonlyMap<string, string> = new Map(
  Object.entries(SEND_MESSAGE_V2_KEYS).map(([field, key]) => [key, field]),
);

/** True for the request codes whose header travels with SendMessageRequestHeaderV2's one-letter keys. */
export const usesSendMessageV2Keys = (code: number): boolean =>
  code === RequestCode.SEND_MESSAGE_V2 || code === RequestCode.SEND_BATCH_MESSAGE;

const kindCache = new WeakMap<ObjectSchema, ReadonlyMap<string, FieldKind>>();

/** The base type of each field of `schema`, looking through optional/default/nullable wrappers. */
function fieldKinds(schema: ObjectSchema): ReadonlyMap<string, FieldKind> {
  const cached = kindCache.get(schema);
  if (cached) return cached;
  const kinds = new Map<string, FieldKind>();
  for (const [name, field] of Object.entries(schema.shape)) {
    let t = field as z.ZodType;
    for (let def = t._zod.def as { innerType?: z.ZodType }; def.innerType; def = t._zod.def as typeof def)
      t = def.innerType;
    const def = t._zod.def as { type: string; format?: string };
    kinds.set(
      name,
      def.type === 'string' || def.type === 'enum'
        ? 'string'
        : def.type === 'boolean'
          ? 'boolean'
          : def.type === 'number'
            ? def.format === 'safeint' || def.format?.startsWith('int')
              ? 'integer'
              : 'number'
            : 'other',
    );
  }
  kindCache.set(schema, kinds);
  return kinds;
}

/** Typed header → extFields (strings), for `schema`'s fields that are set. */
export function headerToExtFields(
  schema: ObjectSchema,
  header: Readonly<Record<string, unknown>>,
  context = 'header',
): Record<string, string> {
  const kinds = fieldKinds(schema);
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(header)) {
    if (value === undefined || value === null || !kinds.has(name)) continue;
    if (typeof value === 'string') out[name] = value;
    else if (typeof value === 'number' && Number.isFinite(value)) out[name] = String(value);
    else if (typeof value === 'boolean') out[name] = value ? 'true' : 'false';
    else throw new InvalidArgumentError(`${context}.${name}`, `cannot be written as a header string: ${String(value)}`);
  }
  return out;
}

const JAVA_LONG = /^[+-]?\d+$/;

/** extFields → typed header, validated by `schema`; `context` (the command name) prefixes field names in errors. */
export function extFieldsToHeader<S extends ObjectSchema>(
  schema: S,
  extFields: ExtFieldsIn | null | undefined,
  context = 'header',
): z.infer<S> {
  const kinds = fieldKinds(schema);
  const raw: Record<string, unknown> = {};
  if (extFields) {
    for (const [name, kind] of kinds) {
      if (!Object.hasOwn(extFields, name)) continue;
      const v = extFields[name];
      if (v === null || v === undefined) continue;
      raw[name] = coerce(v, kind, `${context}.${name}`);
    }
  }
  const plan = fastPlan(schema);
  const fast = plan ? fastParse(plan, raw) : undefined;
  if (fast) return fast as z.infer<S>;
  const parsed = schema.safeParse(raw);
  if (!parsed.success) {
    const { field, message } = describeZodError(parsed.error);
    throw new InvalidArgumentError(`${context}.${field}`, message);
  }
  return parsed.data as z.infer<S>;
}

/** A field a header check can run without zod: a string, a safe integer within bounds, or a boolean. */
interface PlainField {
  name: string;
  kind: 'string' | 'integer' | 'boolean';
  optional: boolean;
  min: number;
  max: number;
}

const planCache = new WeakMap<ObjectSchema, readonly PlainField[] | null>();

/**
 * The fields of `schema` as plain checks, or null when a field (or the object) has a rule beyond a type,
 * optionality and integer bounds: such a schema is always left to zod. Headers are parsed on every call,
 * and a schema parse costs many times these few comparisons.
 */
function fastPlan(schema: ObjectSchema): readonly PlainField[] | null {
  const cached = planCache.get(schema);
  if (cached !== undefined) return cached;
  let plan: PlainField[] | null = [];
  const objectDef = schema._zod.def as { checks?: unknown[]; catchall?: unknown };
  if ((objectDef.checks?.length ?? 0) > 0 || objectDef.catchall !== undefined) plan = null;
  for (const [name, field] of Object.entries(schema.shape)) {
    if (!plan) break;
    let t = field as z.ZodType;
    let def = t._zod.def as {
      type: string;
      innerType?: z.ZodType;
      format?: string;
      checks?: { _zod: { def: unknown } }[];
    };
    const optional = def.type === 'optional';
    if (optional && def.innerType) {
      t = def.innerType;
      def = t._zod.def as typeof def;
    }
    const checks = (def.checks ?? []).map((c) => c._zod.def as { check: string; value: unknown; inclusive?: boolean });
    const f: PlainField = {
      name,
      kind: 'string',
      optional,
      min: -Number.MAX_SAFE_INTEGER,
      max: Number.MAX_SAFE_INTEGER,
    };
    if ((def.type === 'string' || def.type === 'boolean') && checks.length === 0) f.kind = def.type;
    else if (def.type === 'number' && def.format === 'safeint') {
      f.kind = 'integer';
      for (const c of checks) {
        if (typeof c.value !== 'number' || (c.check !== 'greater_than' && c.check !== 'less_than')) {
          plan = null;
          break;
        }
        if (c.check === 'greater_than')
          f.min = Math.max(f.min, c.inclusive ? Math.ceil(c.value) : Math.floor(c.value) + 1);
        else f.max = Math.min(f.max, c.inclusive ? Math.floor(c.value) : Math.ceil(c.value) - 1);
      }
    } else plan = null;
    plan?.push(f);
  }
  planCache.set(schema, plan);
  return plan;
}

/** `raw` checked against `plan` (the same result as the schema's parse), or undefined to let zod parse and explain. */
function fastParse(plan: readonly PlainField[], raw: Record<string, unknown>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const f of plan) {
    const v = raw[f.name];
    if (v === undefined) {
      if (f.optional && !Object.hasOwn(raw, f.name)) continue;
      return undefined;
    }
    if (f.kind === 'integer') {
      if (!Number.isSafeInteger(v) || (v as number) < f.min || (v as number) > f.max) return undefined;
    } else if (typeof v !== f.kind) return undefined;
    out[f.name] = v;
  }
  return out;
}

function coerce(v: string | number | boolean, kind: FieldKind, field: string): unknown {
  switch (kind) {
    case 'string':
      return typeof v === 'string' ? v : String(v);
    case 'integer':
    case 'number':
      if (typeof v === 'number') return v;
      if (typeof v === 'string') {
        if (kind === 'integer' ? JAVA_LONG.test(v) : v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
        throw new InvalidArgumentError(
          field,
          `not ${kind === 'integer' ? 'an integer' : 'a number'}: ${JSON.stringify(v)}`,
        );
      }
      throw new InvalidArgumentError(field, `not a number: ${String(v)}`);
    case 'boolean':
      if (typeof v === 'boolean') return v;
      // RocketMQ: Boolean.parseBoolean — "true" in any case is true, everything else is false.
      return String(v).toLowerCase() === 'true';
    default:
      return v;
  }
}

/** SendMessageRequestHeader field names → SendMessageRequestHeaderV2 letters (unknown keys kept). */
export function toSendMessageV2Keys(extFields: Readonly<Record<string, string>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(extFields)) out[SEND_MESSAGE_V2_KEYS[k] ?? k] = v;
  return out;
}

/** SendMessageRequestHeaderV2 letters → SendMessageRequestHeader field names; full names are accepted too. */
export function fromSendMessageV2Keys(extFields: ExtFieldsIn): Record<string, string | number | boolean | null> {
  const out: Record<string, string | number | boolean | null> = {};
  for (const [k, v] of Object.entries(extFields)) {
    if (v === undefined) continue;
    const field = SEND_MESSAGE_V2_FIELDS.get(k);
    if (field !== undefined) out[field] = v;
    else if (!Object.hasOwn(out, k)) out[k] = v;
  }
  return out;
}

function requestSpec(code: number): { schema: ObjectSchema; name: string } {
  if (code === RequestCode.SEND_MESSAGE_V2)
    return { schema: SendMessage.requestHeader as ObjectSchema, name: 'SEND_MESSAGE_V2' };
  const spec = COMMANDS.get(code);
  if (!spec) throw new InvalidArgumentError('code', `no command with request code ${code}`);
  return { schema: spec.requestHeader as ObjectSchema, name: spec.name };
}

function responseSpec(code: number): { schema: ObjectSchema; name: string } {
  const spec = COMMANDS.get(code === RequestCode.SEND_MESSAGE_V2 ? RequestCode.SEND_MESSAGE : code);
  if (!spec) throw new InvalidArgumentError('code', `no command with request code ${code}`);
  return { schema: spec.responseHeader as ObjectSchema, name: spec.name };
}

/** The extFields of a request with `code` (one-letter keys for SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE). */
export function requestHeaderToExtFields(
  code: number,
  header: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const { schema, name } = requestSpec(code);
  const ext = headerToExtFields(schema, header, name);
  return usesSendMessageV2Keys(code) ? toSendMessageV2Keys(ext) : ext;
}

/** The typed header of a request with `code`, read from its extFields. */
export function requestHeaderFromExtFields(
  code: number,
  extFields: ExtFieldsIn | null | undefined,
): Record<string, unknown> {
  const { schema, name } = requestSpec(code);
  const ext = extFields && usesSendMessageV2Keys(code) ? fromSendMessageV2Keys(extFields) : extFields;
  return extFieldsToHeader(schema, ext, name);
}

/** The extFields of the response to a request with `code`. */
export function responseHeaderToExtFields(
  code: number,
  header: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const { schema, name } = responseSpec(code);
  return headerToExtFields(schema, header, `${name} response`);
}

/** The typed header of the response to a request with `code`, read from its extFields. */
export function responseHeaderFromExtFields(
  code: number,
  extFields: ExtFieldsIn | null | undefined,
): Record<string, unknown> {
  const { schema, name } = responseSpec(code);
  return extFieldsToHeader(schema, extFields, `${name} response`);
}
