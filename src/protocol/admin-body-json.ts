/**
 * JSON as RocketMQ's fastjson writes and reads it, for the admin bodies `mqadmin` exchanges with a
 * broker (ConsumeStats, TopicStatsTable, ResetOffsetBody, ConsumerConnection, TopicList).
 *
 * fastjson sorts an object's keys, leaves out null fields, writes enums by name, and writes the key of
 * a map whose keys are objects (a MessageQueue) as that object itself:
 * `{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"brokerOffset":3,...}}}`. That is not
 * standard JSON, so `JSON.parse` cannot read it; `parseFastJson` can, and it also accepts unquoted
 * numeric keys (`{0:250}`), which fastjson writes for integer-keyed maps. (The remoting header's
 * exact string escapes and lenient reader are in remoting/fastjson-text.ts.)
 * @pure
 */
import { DecodeError } from '../common/errors.js';

/** A map whose keys are values (objects, numbers, strings), serialized the fastjson way. */
export class FastJsonMap<K = unknown, V = unknown> {
  readonly entries: Array<[K, V]>;
  constructor(entries: Iterable<[K, V]> = []) {
    this.entries = [...entries];
  }
}

/**
 * Writes `value` as fastjson does: object keys sorted, `null` and `undefined` fields left out, a
 * `FastJsonMap` written with its keys as JSON values (an object key stays an object).
 */
export function toFastJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value instanceof FastJsonMap) {
    const parts: string[] = [];
    for (const [k, v] of value.entries) {
      if (v === null || v === undefined) continue;
      const key = typeof k === 'string' ? JSON.stringify(k) : toFastJson(k);
      parts.push(`${key}:${toFastJson(v)}`);
    }
    return `{${parts.join(',')}}`;
  }
  if (Array.isArray(value)) return `[${value.map((v) => toFastJson(v)).join(',')}]`;
  if (value instanceof Map) return toFastJson(new FastJsonMap(value.entries()));
  if (value instanceof Set) return toFastJson([...value]);
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      if (!Number.isFinite(value)) return 'null';
      return String(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'object': {
      const obj = value as Record<string, unknown>;
      const keys = Object.keys(obj)
        .filter((k) => obj[k] !== null && obj[k] !== undefined)
        .sort();
      return `{${keys.map((k) => `${JSON.stringify(k)}:${toFastJson(obj[k])}`).join(',')}}`;
    }
    default:
      throw new TypeError(`toFastJson: cannot write a ${typeof value}`);
  }
}

/**
 * Reads fastjson's output. Objects whose keys are all strings (or bare numbers / identifiers, as
 * fastjson may write them) become plain objects with string keys; an object with any object-valued
 * key becomes a `FastJsonMap` of its entries. Throws a `DecodeError` naming the position otherwise.
 */
export function parseFastJson(text: string): unknown {
  const p = new Parser(text);
  p.ws();
  const v = p.value();
  p.ws();
  if (p.i !== text.length) p.fail('unexpected trailing characters');
  return v;
}

class Parser {
  i = 0;
  constructor(private readonly s: string) {}

  fail(what: string): never {
    throw new DecodeError(`fastjson: ${what} at position ${this.i}`, this.i);
  }

  ws(): void {
    while (this.i < this.s.length && /\s/.test(this.s[this.i] ?? '')) this.i++;
  }

  value(): unknown {
    const c = this.s[this.i];
    if (c === '{') return this.object();
    if (c === '[') return this.array();
    if (c === '"' || c === "'") return this.string();
    if (c === undefined) this.fail('unexpected end of input');
    const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)|^(true|false|null)/.exec(this.s.slice(this.i, this.i + 64));
    if (!m) this.fail(`unexpected character ${JSON.stringify(c)}`);
    this.i += m[0].length;
    if (m[1] !== undefined) return Number(m[1]);
    return m[2] === 'true' ? true : m[2] === 'false' ? false : null;
  }

  private array(): unknown[] {
    this.i++;
    const out: unknown[] = [];
    this.ws();
    if (this.s[this.i] === ']') {
      this.i++;
      return out;
    }
    for (;;) {
      this.ws();
      out.push(this.value());
      this.ws();
      const c = this.s[this.i++];
      if (c === ']') return out;
      if (c !== ',') this.fail('expected , or ] in an array');
    }
  }

  private key(): unknown {
    const c = this.s[this.i];
    if (c === '{' || c === '[' || c === '"' || c === "'") return this.value();
    const m = /^[A-Za-z0-9_$.-]+/.exec(this.s.slice(this.i, this.i + 256));
    if (!m) this.fail('expected an object key');
    this.i += m[0].length;
    return m[0];
  }

  private object(): unknown {
    this.i++;
    const entries: Array<[unknown, unknown]> = [];
    this.ws();
    if (this.s[this.i] === '}') {
      this.i++;
      return {};
    }
    for (;;) {
      this.ws();
      const k = this.key();
      this.ws();
      if (this.s[this.i++] !== ':') this.fail('expected : after an object key');
      this.ws();
      entries.push([k, this.value()]);
      this.ws();
      const c = this.s[this.i++];
      if (c === '}') break;
      if (c !== ',') this.fail('expected , or } in an object');
    }
    if (entries.some(([k]) => typeof k === 'object' && k !== null)) return new FastJsonMap(entries);
    const obj: Record<string, unknown> = {};
    for (const [k, v] of entries) obj[String(k)] = v;
    return obj;
  }

  private string(): string {
    const quote = this.s[this.i];
    let j = this.i + 1;
    let out = '';
    while (j < this.s.length && this.s[j] !== quote) {
      if (this.s[j] === '\\') {
        const e = this.s[j + 1];
        if (e === 'u') {
          out += String.fromCharCode(parseInt(this.s.slice(j + 2, j + 6), 16));
          j += 6;
          continue;
        }
        const map: Record<string, string> = { n: '\n', t: '\t', r: '\r', b: '\b', f: '\f' };
        out += e === undefined ? '' : (map[e] ?? e);
        j += 2;
        continue;
      }
      out += this.s[j];
      j++;
    }
    if (j >= this.s.length) this.fail('unterminated string');
    this.i = j + 1;
    return out;
  }
}
