/**
 * Host addresses as RocketMQ stores them: 4 (IPv4) or 16 (IPv6) address bytes. Text is printed the way
 * Java's `InetAddress.getHostAddress` prints it: dotted IPv4, and IPv6 as eight lower-case hex groups
 * without compression (`0:0:0:0:0:0:0:1`). An IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) is IPv4 to
 * Java (`InetAddress.getByAddress` returns an Inet4Address), so it is IPv4 here too.
 * @pure
 */

const IPV4_RE = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

function parseIPv4(s: string, out: Uint8Array, at: number): boolean {
  const m = IPV4_RE.exec(s);
  if (!m) return false;
  for (let i = 0; i < 4; i++) {
    const part = m[i + 1] as string;
    const n = Number(part);
    if (n > 255) return false;
    out[at + i] = n;
  }
  return true;
}

function parseIPv6(text: string): Uint8Array | null {
  let s = text;
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1);
  const zone = s.indexOf('%');
  if (zone >= 0) s = s.slice(0, zone); // the scope id is not part of the stored address bytes
  const out = new Uint8Array(16);
  const halves = s.split('::');
  if (halves.length > 2) return null;
  const parseGroups = (part: string, groups: number[]): number => {
    // returns the number of 16-bit groups written, or -1
    if (part === '') return 0;
    const items = part.split(':');
    let count = 0;
    for (let i = 0; i < items.length; i++) {
      const item = items[i] as string;
      if (i === items.length - 1 && item.includes('.')) {
        const v4 = new Uint8Array(4);
        if (!parseIPv4(item, v4, 0)) return -1;
        groups.push(((v4[0] as number) << 8) | (v4[1] as number), ((v4[2] as number) << 8) | (v4[3] as number));
        count += 2;
        continue;
      }
      if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return -1;
      groups.push(parseInt(item, 16));
      count++;
    }
    return count;
  };
  const head: number[] = [];
  const tail: number[] = [];
  if (parseGroups(halves[0] as string, head) < 0) return null;
  if (halves.length === 2) {
    if (parseGroups(halves[1] as string, tail) < 0) return null;
    if (head.length + tail.length > 7) return null;
  } else if (head.length !== 8) return null;
  const groups = [...head, ...new Array<number>(8 - head.length - tail.length).fill(0), ...tail];
  groups.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 255;
  });
  return out;
}

/** Whether 16 address bytes are an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`). */
export function isIPv4Mapped(b: Uint8Array, p = 0): boolean {
  for (let i = 0; i < 10; i++) if (b[p + i] !== 0) return false;
  return b[p + 10] === 0xff && b[p + 11] === 0xff;
}

/**
 * The address bytes of an IP text: 4 bytes for IPv4 (including IPv4-mapped IPv6 text, as Java reads
 * it), 16 for IPv6; `null` when the text is not an IP address (host names are not resolved).
 */
export function ipToBytes(ip: string): Uint8Array | null {
  const v4 = new Uint8Array(4);
  if (parseIPv4(ip, v4, 0)) return v4;
  if (!ip.includes(':')) return null;
  const v6 = parseIPv6(ip);
  if (!v6) return null;
  return isIPv4Mapped(v6) ? v6.slice(12, 16) : v6;
}

/** Dotted text of 4 bytes at `p`. */
export function ipv4ToString(b: Uint8Array, p = 0): string {
  return `${b[p] as number}.${b[p + 1] as number}.${b[p + 2] as number}.${b[p + 3] as number}`;
}

/** Java's text of 16 address bytes at `p`: IPv4 for a mapped address, else 8 uncompressed hex groups. */
export function ipv6ToString(b: Uint8Array, p = 0): string {
  if (isIPv4Mapped(b, p)) return ipv4ToString(b, p + 12);
  let s = '';
  for (let i = 0; i < 16; i += 2) {
    if (i > 0) s += ':';
    s += ((((b[p + i] as number) << 8) | (b[p + i + 1] as number)) >>> 0).toString(16);
  }
  return s;
}

/** RocketMQ's `UtilAll.ipToIPv6Str`: eight 4-digit lower-case hex groups (used by the uniq-id helpers). */
export function ipToIPv6Str(b: Uint8Array): string {
  let s = '';
  for (let i = 0; i < 16; i++) {
    s += (b[i] as number).toString(16).padStart(2, '0');
    if (i % 2 === 1 && i < 15) s += ':';
  }
  return s;
}
