/**
 * The properties string of a message: `name 0x01 value 0x02` for every property, the last pair
 * included. RocketMQ: MessageDecoder.messageProperties2String / string2messageProperties.
 * @pure
 */
import { NAME_VALUE_SEPARATOR, PROPERTY_SEPARATOR } from './constants.js';

/** Properties as a caller may give them: a plain object, or a Map when the write order matters. */
export type PropertiesInput =
  Readonly<Record<string, string | null | undefined>> | ReadonlyMap<string, string | null | undefined>;

function isMap(p: PropertiesInput): p is ReadonlyMap<string, string | null | undefined> {
  return p instanceof Map;
}

/**
 * Joins properties in iteration order; entries whose value is null or undefined are skipped
 * (RocketMQ skips null values). `null` gives `""`.
 */
export function messageProperties2String(properties: PropertiesInput | null | undefined): string {
  if (properties == null) return '';
  let s = '';
  if (isMap(properties)) {
    for (const [name, value] of properties) {
      if (value == null) continue;
      s += name + NAME_VALUE_SEPARATOR + value + PROPERTY_SEPARATOR;
    }
  } else {
    for (const name in properties) {
      if (!Object.prototype.hasOwnProperty.call(properties, name)) continue;
      const value = properties[name];
      if (value == null) continue;
      s += name + NAME_VALUE_SEPARATOR + value + PROPERTY_SEPARATOR;
    }
  }
  return s;
}

/** Sets `map[key] = value`, also for the key `__proto__` (which a plain assignment would swallow). */
export function setProperty(map: Record<string, string>, key: string, value: string): void {
  if (key === '__proto__') {
    Object.defineProperty(map, key, { value, enumerable: true, writable: true, configurable: true });
  } else {
    map[key] = value;
  }
}

/** Property names RocketMQ writes on most messages, grouped by length. */
const KNOWN_KEYS: readonly (readonly string[] | undefined)[] = (() => {
  const names = [
    'TAGS',
    'KEYS',
    'WAIT',
    'DELAY',
    'UNIQ_KEY',
    'CLUSTER',
    'PGROUP',
    'TRAN_MSG',
    'REAL_QID',
    'REAL_TOPIC',
    'RETRY_TOPIC',
    'MIN_OFFSET',
    'MAX_OFFSET',
    'RECONSUME_TIME',
    'MAX_RECONSUME_TIMES',
    'ORIGIN_MESSAGE_ID',
    'CONSUME_START_TIME',
    '__transactionId__',
    'INNER_NUM',
    'INNER_BASE',
  ];
  const byLength: string[][] = [];
  for (const n of names) (byLength[n.length] ??= []).push(n);
  return byLength;
})();

/**
 * The interned constant for a well-known key spelled at `s[start, end)`, else undefined. Using the
 * constant spares a substring and the property-key internalization on every decoded message.
 */
function knownKey(s: string, start: number, end: number): string | undefined {
  const candidates = KNOWN_KEYS[end - start];
  if (candidates === undefined) return undefined;
  for (const k of candidates) if (s.startsWith(k, start)) return k;
  return undefined;
}

/**
 * Splits a properties string. RocketMQ rules: split on 0x02 (a missing final 0x02 is tolerated); the
 * key runs to the first 0x01; a pair is kept only when both key and value are non-empty; a later
 * duplicate wins. Always returns an object (empty for `""`).
 */
export function string2messageProperties(properties: string): Record<string, string> {
  const map: Record<string, string> = {};
  const len = properties.length;
  let index = 0;
  while (index < len) {
    let end = properties.indexOf(PROPERTY_SEPARATOR, index);
    if (end < 0) end = len;
    if (end - index >= 3) {
      const sep = properties.indexOf(NAME_VALUE_SEPARATOR, index);
      if (sep > index && sep < end - 1) {
        setProperty(
          map,
          knownKey(properties, index, sep) ?? properties.substring(index, sep),
          properties.substring(sep + 1, end),
        );
      }
    }
    index = end + 1;
  }
  return map;
}
