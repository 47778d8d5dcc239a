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
import { checkHeader } from './header-check.js';
import { flatFields, numberBounds, objectFields } from './schema-fields.js';
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
  for (const f of objectFields(schema)?.fields ?? []) {
    kinds.set(
      f.name,
      f.type === 'string' || f.type === 'enum'
        ? 'string'
        : f.type === 'boolean'
          ? 'boolean'
          : f.type === 'number'
            ? f.format === 'safeint' || f.format?.startsWith('int')
              ? 'integer'
              : 'number'
            : 'other',
    );
  }
  kindCache.set(schema, kinds);
  return kinds;
}

/** Typed header → extFields (strings), for `schema`'s fields that are set, in the header's own key order. */
export function headerToExtFields(
  schema: ObjectSchema,
  header: Readonly<Record<string, unknown>>,
  context = 'header',
  keys?: Readonly<Record<string, string>>,
): Record<string, string> {
  const kinds = fieldKinds(schema);
  const out: Record<string, string> = {};
  // for-in over own keys lists them in Object.entries' order without an entry array per field.
  for (const name in header) {
    if (!Object.hasOwn(header, name)) continue;
    const value = header[name];
    if (value === undefined || value === null || !kinds.has(name)) continue;
    const key = keys && Object.hasOwn(keys, name) ? (keys[name] as string) : name;
    if (typeof value === 'string') out[key] = value;
    else if (typeof value === 'number' && Number.isFinite(value)) out[key] = String(value);
    else if (typeof value === 'boolean') out[key] = value ? 'true' : 'false';
    else throw new InvalidArgumentError(`${context}.${name}`, `cannot be written as a header string: ${String(value)}`);
  }
  return out;
}

/** extFields → typed header, validated by `schema`; `context` (the command name) prefixes field names in errors. */
export function extFieldsToHeader<S extends ObjectSchema>(
  schema: S,
  extFields: ExtFieldsIn | null | undefined,
  context = 'header',
): z.infer<S> {
  const plan = fastPlan(schema);
  const fast = plan && extFields ? fastRead(plan, extFields, false) : undefined;
  return (fast ?? parseHeader(schema, extFields, context)) as z.infer<S>;
}

/** The full read: each field coerced (an error names it), then checked by the quick check or, failing that, by zod. */
function parseHeader(
  schema: ObjectSchema,
  extFields: ExtFieldsIn | null | undefined,
  context: string,
): Record<string, unknown> {
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
  const checked = checkHeader(schema, raw);
  if (!checked.ok) throw new InvalidArgumentError(`${context}.${checked.field}`, checked.message);
  return checked.data;
}

/** A field a header check can run without zod: a string, a safe integer within bounds, or a boolean. */
interface PlainField {
  name: string;
  /** SendMessageRequestHeaderV2's one-letter key of the field, when it has one. */
  letter: string | undefined;
  /** The name is also a property of every object (`constructor`, `toString`...): read it only when own. */
  inherited: boolean;
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
  const plan = buildPlan(schema);
  planCache.set(schema, plan);
  return plan;
}

function buildPlan(schema: ObjectSchema): PlainField[] | null {
  const fields = flatFields(schema);
  if (fields === null) return null;
  const plan: PlainField[] = [];
  for (const field of fields) {
    const { name } = field;
    const f: PlainField = {
      name,
      letter: Object.hasOwn(SEND_MESSAGE_V2_KEYS, name) ? SEND_MESSAGE_V2_KEYS[name] : undefined,
      inherited: name in Object.prototype,
      kind: 'string',
      optional: field.optional,
      min: -Number.MAX_SAFE_INTEGER,
      max: Number.MAX_SAFE_INTEGER,
    };
    if ((field.type === 'string' || field.type === 'boolean') && field.checks.length === 0) f.kind = field.type;
    else if (field.type === 'number' && field.format === 'safeint') {
      const b = numberBounds(field.checks);
      if (b === undefined) return null;
      f.kind = 'integer';
      // The integers within the bounds.
      f.min = Math.max(f.min, b.minInclusive ? Math.ceil(b.min) : Math.floor(b.min) + 1);
      f.max = Math.min(f.max, b.maxInclusive ? Math.floor(b.max) : Math.ceil(b.max) - 1);
    } else return null;
    plan.push(f);
  }
  return plan;
}

/**
 * The header read straight from `ext` when every value is the plain case — a string for a string field, a
 * Java long within bounds for an integer, `true`/`false` (any case) for a boolean, a required field
 * present — with the same result as `parseHeader`; undefined for anything else, which `parseHeader`
 * reads and explains. With `letters`, a field's one-letter key, when present, is read before its name.
 * No intermediate copy of the extFields and no string per field is made.
 */
function fastRead(
  plan: readonly PlainField[],
  ext: ExtFieldsIn,
  letters: boolean,
): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (let i = 0; i < plan.length; i++) {
    const f = plan[i] as PlainField;
    let v = f.inherited && !Object.hasOwn(ext, f.name) ? undefined : ext[f.name];
    if (letters && f.letter !== undefined) {
      const byLetter = ext[f.letter];
      if (byLetter !== undefined) v = byLetter;
    }
    if (v === null || v === undefined) {
      if (f.optional) continue;
      return undefined;
    }
    if (f.kind === 'string') {
      if (typeof v !== 'string') return undefined;
      out[f.name] = v;
    } else if (f.kind === 'integer') {
      let n: number;
      if (typeof v === 'number') n = v;
      else if (typeof v === 'string' && isJavaLong(v)) n = Number(v);
      else return undefined;
      if (!Number.isSafeInteger(n) || n < f.min || n > f.max) return undefined;
      out[f.name] = n;
    } else if (typeof v === 'boolean') out[f.name] = v;
    else if (typeof v === 'string')
      // RocketMQ: Boolean.parseBoolean — "true" in any case is true, everything else is false.
      out[f.name] = v === 'true' || (v.length === 4 && v.toLowerCase() === 'true');
    else return undefined;
  }
  return out;
}

/** Java's `Long.parseLong` syntax: an optional sign, then one or more ASCII digits. */
function isJavaLong(s: string): boolean {
  const first = s.charCodeAt(0);
  let i = first === 0x2b || first === 0x2d ? 1 : 0;
  if (i >= s.length) return false;
  for (; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

function coerce(v: string | number | boolean, kind: FieldKind, field: string): unknown {
  switch (kind) {
    case 'string':
      return typeof v === 'string' ? v : String(v);
    case 'integer':
    case 'number':
      if (typeof v === 'number') return v;
      if (typeof v === 'string') {
        if (kind === 'integer' ? isJavaLong(v) : v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
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
  for (const k in extFields)
    if (Object.hasOwn(extFields, k)) out[SEND_MESSAGE_V2_KEYS[k] ?? k] = extFields[k] as string;
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

interface Spec {
  schema: ObjectSchema;
  name: string;
}

/** Per request code, looked up once: headers are read and written on every call. */
const requestSpecs = new Map<number, Spec>();
const responseSpecs = new Map<number, Spec>();

function requestSpec(code: number): Spec {
  let spec = requestSpecs.get(code);
  if (spec) return spec;
  if (code === RequestCode.SEND_MESSAGE_V2)
    spec = { schema: SendMessage.requestHeader as ObjectSchema, name: 'SEND_MESSAGE_V2' };
  else {
    const command = COMMANDS.get(code);
    if (!command) throw new InvalidArgumentError('code', `no command with request code ${code}`);
    spec = { schema: command.requestHeader as ObjectSchema, name: command.name };
  }
  requestSpecs.set(code, spec);
  return spec;
}

function responseSpec(code: number): Spec {
  let spec = responseSpecs.get(code);
  if (spec) return spec;
  const command = COMMANDS.get(code === RequestCode.SEND_MESSAGE_V2 ? RequestCode.SEND_MESSAGE : code);
  if (!command) throw new InvalidArgumentError('code', `no command with request code ${code}`);
  spec = { schema: command.responseHeader as ObjectSchema, name: `${command.name} response` };
  responseSpecs.set(code, spec);
  return spec;
}

/** The extFields of a request with `code` (one-letter keys for SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE). */
export function requestHeaderToExtFields(
  code: number,
  header: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const { schema, name } = requestSpec(code);
  return headerToExtFields(schema, header, name, usesSendMessageV2Keys(code) ? SEND_MESSAGE_V2_KEYS : undefined);
}

/** The typed header of a request with `code`, read from its extFields. */
export function requestHeaderFromExtFields(
  code: number,
  extFields: ExtFieldsIn | null | undefined,
): Record<string, unknown> {
  const { schema, name } = requestSpec(code);
  const letters = usesSendMessageV2Keys(code);
  const plan = fastPlan(schema);
  const fast = plan && extFields ? fastRead(plan, extFields, letters) : undefined;
  if (fast) return fast;
  return parseHeader(schema, extFields && letters ? fromSendMessageV2Keys(extFields) : extFields, name);
}

/** The extFields of the response to a request with `code`. */
export function responseHeaderToExtFields(
  code: number,
  header: Readonly<Record<string, unknown>>,
): Record<string, string> {
  const { schema, name } = responseSpec(code);
  return headerToExtFields(schema, header, name);
}

/** The typed header of the response to a request with `code`, read from its extFields. */
export function responseHeaderFromExtFields(
  code: number,
  extFields: ExtFieldsIn | null | undefined,
): Record<string, unknown> {
  const { schema, name } = responseSpec(code);
  return extFieldsToHeader(schema, extFields, name);
}
