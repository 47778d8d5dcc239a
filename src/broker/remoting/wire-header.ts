/**
 * RocketMQ's extFields (every header field as a string) ↔ the typed headers of the broker's commands,
 * read through each command's zod schema: an int or long field is parsed as Java's Integer/Long.parseLong
 * would (decimal digits, optional sign), a boolean as Boolean.parseBoolean (`true` in any case, anything
 * else false), a string kept; fields the schema does not know pass through for the schema to drop.
 * SEND_MESSAGE_V2's one-letter keys (SendMessageRequestHeaderV2) are renamed to SEND_MESSAGE's.
 * @pure
 */
import type { z } from 'zod';

type Def = { type: string; innerType?: unknown; shape?: Record<string, unknown> };
const defOf = (t: unknown): Def => (t as { _zod: { def: Def } })._zod.def;

function baseType(t: unknown): string {
  let d = defOf(t);
  while (d.type === 'optional' || d.type === 'default' || d.type === 'nullable') d = defOf(d.innerType);
  return d.type;
}

const JAVA_LONG_MAX = '9223372036854775807';

export type ExtFieldsResult =
  { ok: true; value: Record<string, unknown> } | { ok: false; field: string; message: string };

/** The header object a command's schema can validate, or the first field that is not of its type. */
export function extFieldsToHeader(schema: z.ZodType, ext: Record<string, string | null>): ExtFieldsResult {
  const shape = (defOf(schema).shape ?? {}) as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(ext)) {
    if (v === null) continue;
    const t = shape[k];
    if (!t) {
      out[k] = v;
      continue;
    }
    const type = baseType(t);
    if (type === 'number') {
      if (!/^[-+]?\d{1,19}$/.test(v)) return { ok: false, field: k, message: `not an integer: ${JSON.stringify(v)}` };
      // Java's Long.MAX_VALUE is RocketMQ's "no upper bound" (mqadmin queryMsgByKey's end time): the largest
      // exact number means the same here. Other values past 2^53 are refused by the schema, never rounded.
      out[k] = v === JAVA_LONG_MAX ? Number.MAX_SAFE_INTEGER : Number(v);
    } else if (type === 'boolean') out[k] = v.toLowerCase() === 'true';
    else out[k] = v;
  }
  return { ok: true, value: out };
}

/** A typed response header as extFields: numbers and booleans as Java's toString writes them; null and undefined left out. */
export function headerToExtFields(header: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(header ?? {})) if (v !== undefined && v !== null) out[k] = String(v);
  return out;
}

/** SendMessageRequestHeaderV2's keys. */
const V2: Record<string, string> = {
  a: 'producerGroup',
  b: 'topic',
  c: 'defaultTopic',
  d: 'defaultTopicQueueNums',
  e: 'queueId',
  f: 'sysFlag',
  g: 'bornTimestamp',
  h: 'flag',
  i: 'properties',
  j: 'reconsumeTimes',
  k: 'unitMode',
  l: 'maxReconsumeTimes',
  m: 'batch',
  n: 'bname',
};
/** A SEND_MESSAGE_V2 (or Java batch) header with SEND_MESSAGE's names. */
export function sendMessageV2ToV1(ext: Record<string, string | null>): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const [k, v] of Object.entries(ext)) out[V2[k] ?? k] = v;
  return out;
}
