/**
 * RocketMQ's remote-address patterns for plain ACL (RemoteAddressStrategyFactory), as `whiteRemoteAddress`
 * and `globalWhiteRemoteAddresses` write them:
 *
 * - blank: matches nothing; `*`, `*.*.*.*`, `*:*:*:*:*:*:*:*`: matches every address;
 * - one address (`192.168.1.7`, `::1`);
 * - a list, `192.168.1.7,192.168.1.8`, or the last part in braces, `192.168.1.{7,8}`;
 * - a range: `192.168.1.*`, `192.168.*.*`, `192.168.1.10-20`, `192.168.1-5.*` (IPv6 the same with
 *   hexadecimal groups, `fe80::1-ff`).
 *
 * A pattern that is none of these throws, so a bad file is refused at load, as RocketMQ refuses it.
 */
import { isIPv4, isIPv6 } from 'node:net';

/** Whether an address (without its port) is allowed by a pattern. */
export type AddressMatcher = (address: string) => boolean;

/** One group of a range pattern: `lo..hi` inclusive. */
interface GroupRange {
  lo: number;
  hi: number;
}

/** The eight 16-bit groups of an IPv6 address (`::` expanded), or undefined when it is not one. */
function ipv6Groups(address: string): number[] | undefined {
  if (!isIPv6(address)) return undefined;
  let text = address;
  // An embedded IPv4 tail (::ffff:1.2.3.4) counts as two groups.
  const v4 = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? (text.split('::') as [string, string]) : [text, undefined];
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const fill = tail === undefined ? 0 : 8 - left.length - right.length;
  return [...left, ...Array<string>(fill).fill('0'), ...right].map((g) => parseInt(g, 16));
}

/** `address` as the broker compares it: an IPv4-mapped IPv6 address is its IPv4 address. */
export function normalizeAddress(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? (mapped[1] as string) : address;
}

/** The same address in one spelling (IPv6 expanded), for exact comparison. */
function canonical(address: string): string | undefined {
  const a = normalizeAddress(address.trim());
  if (isIPv4(a)) return a;
  return ipv6Groups(a)?.join(':');
}

function oneAddress(text: string, pattern: string): string {
  const c = canonical(text);
  if (c === undefined) throw new Error(`"${text}" is not an IP address (in the pattern "${pattern}")`);
  return c;
}

/** A range pattern's groups: each a literal, `*` or `lo-hi`; after the first non-literal, only `*`. */
function rangeGroups(pattern: string, v6: boolean): GroupRange[] {
  const max = v6 ? 0xffff : 255;
  const radix = v6 ? 16 : 10;
  let parts: string[];
  if (v6) {
    const [head, tail] = pattern.includes('::') ? (pattern.split('::') as [string, string]) : [pattern, undefined];
    const left = head === '' ? [] : head.split(':');
    const right = tail === undefined || tail === '' ? [] : tail.split(':');
    const fill = tail === undefined ? 0 : 8 - left.length - right.length;
    if (fill < 0) throw new Error(`"${pattern}" has more than 8 groups`);
    parts = [...left, ...Array<string>(fill).fill('0'), ...right];
  } else {
    parts = pattern.split('.');
  }
  const want = v6 ? 8 : 4;
  if (parts.length !== want) throw new Error(`"${pattern}" does not have ${want} parts`);
  const number = (s: string): number => {
    const ok = v6 ? /^[0-9a-fA-F]{1,4}$/.test(s) : /^\d{1,3}$/.test(s);
    const n = ok ? parseInt(s, radix) : NaN;
    if (!(n >= 0 && n <= max))
      throw new Error(`"${s}" is not a valid part of an address (in the pattern "${pattern}")`);
    return n;
  };
  let open = false;
  return parts.map((raw, i) => {
    const s = raw.trim();
    if (s === '*') {
      if (i === 0) throw new Error(`"${pattern}": the first part of a range pattern must be a number`);
      open = true;
      return { lo: 0, hi: max };
    }
    if (open) throw new Error(`"${pattern}": only * may follow a * or a range`);
    const dash = s.indexOf('-');
    if (dash < 0) {
      const n = number(s);
      return { lo: n, hi: n };
    }
    if (i === 0) throw new Error(`"${pattern}": the first part of a range pattern must be a number`);
    const lo = number(s.slice(0, dash));
    const hi = number(s.slice(dash + 1));
    if (lo > hi) throw new Error(`"${pattern}": the range ${s} runs backwards`);
    open = true;
    return { lo, hi };
  });
}

/** The groups of an address in the family of a range pattern, or undefined for the other family. */
function addressGroups(address: string, v6: boolean): number[] | undefined {
  const a = normalizeAddress(address.trim());
  if (!v6) return isIPv4(a) ? a.split('.').map(Number) : undefined;
  return ipv6Groups(a);
}

/**
 * The matcher of one pattern (RocketMQ: RemoteAddressStrategyFactory.getRemoteAddressStrategy). Throws
 * an Error naming what is wrong for a pattern RocketMQ would refuse (and for a few it would misread).
 */
export function remoteAddressMatcher(pattern: string | null | undefined): AddressMatcher {
  const p = (pattern ?? '').trim();
  if (p === '') return () => false;
  if (p === '*' || p === '*.*.*.*' || p === '*:*:*:*:*:*:*:*') return () => true;
  const v6 = p.includes(':');
  if (p.endsWith('}')) {
    const open = p.lastIndexOf('{');
    const sep = v6 ? ':' : '.';
    if (open < 0 || (open > 0 && p[open - 1] !== sep)) {
      throw new Error(`"${p}": a {a,b} list must be the last part of the address`);
    }
    const prefix = p.slice(0, open);
    const set = new Set(
      p
        .slice(open + 1, -1)
        .split(',')
        .map((s) => oneAddress(prefix + s.trim(), p)),
    );
    return (address) => set.has(canonical(address) ?? '');
  }
  if (p.includes(',')) {
    const set = new Set(p.split(',').map((s) => oneAddress(s, p)));
    return (address) => set.has(canonical(address) ?? '');
  }
  if (p.includes('*') || p.includes('-')) {
    const groups = rangeGroups(p, v6);
    return (address) => {
      const a = addressGroups(address, v6);
      return a !== undefined && groups.every((g, i) => (a[i] as number) >= g.lo && (a[i] as number) <= g.hi);
    };
  }
  const one = oneAddress(p, p);
  return (address) => canonical(address) === one;
}
