/**
 * Client message ids (the UNIQ_KEY property), RocketMQ's MessageClientIDSetter. Bytes, as upper-case
 * hex: IP (4 bytes), `(short) pid`, an int fixed per process (Java's class-loader hash code; a random
 * int here), an int of milliseconds since the start of the current month in local time, a short
 * counter — 16 bytes, 32 chars. (Java may put a 16-byte IPv6 address first: 56 chars; the parsing
 * helpers accept both.)
 */
import { networkInterfaces } from 'node:os';
import { InvalidArgumentError } from '../errors.js';
import { systemClock, type Clock } from '../clock.js';
import { bytesToHex, hex32 } from './bytes.js';
import { ipToIPv6Str, ipv4ToString } from './hosts.js';

/** The first non-internal IPv4 address of this machine, else 127.0.0.1 (RocketMQ: UtilAll.getIP). */
function localIPv4(): Uint8Array {
  try {
    for (const list of Object.values(networkInterfaces())) {
      for (const a of list ?? []) {
        if (a.family === 'IPv4' && !a.internal) {
          const parts = a.address.split('.').map(Number);
          if (parts.length === 4 && parts.every((n) => Number.isInteger(n) && n >= 0 && n <= 255)) {
            return Uint8Array.from(parts);
          }
        }
      }
    }
  } catch {
    // no interface information (sandboxes): fall back to loopback
  }
  return Uint8Array.of(127, 0, 0, 1);
}

let fixPrefix: string | undefined;
let counter = 0;
let startTime = 0;
let nextStartTime = 0;

function prefix(): string {
  if (fixPrefix === undefined) {
    const ip = localIPv4();
    const pid = process.pid & 0xffff;
    const loaderHash = Math.floor(Math.random() * 0x100000000) | 0;
    fixPrefix = bytesToHex(ip) + hex32(pid).slice(4) + hex32(loaderHash);
  }
  return fixPrefix;
}

/** Start of the month containing `ms` and of the next one, in local time. */
function setStartTime(ms: number): void {
  const d = new Date(ms);
  const start = new Date(d.getFullYear(), d.getMonth(), 1, 0, 0, 0, 0);
  startTime = start.getTime();
  nextStartTime = new Date(d.getFullYear(), d.getMonth() + 1, 1, 0, 0, 0, 0).getTime();
}

/** A new UNIQ_KEY (RocketMQ: MessageClientIDSetter.createUniqID). */
export function createUniqId(clock: Clock = systemClock): string {
  const now = clock.now();
  if (now >= nextStartTime || now < startTime - 1_000_000) setStartTime(now);
  let diff = now - startTime;
  if (diff < 0) diff = 0; // RocketMQ: a small step back (NTP) is clamped to 0
  const c = counter;
  counter = (counter + 1) & 0xffff;
  return prefix() + hex32(diff | 0) + hex32(c).slice(4);
}

function idBytes(id: string): Buffer {
  if (typeof id !== 'string' || (id.length !== 32 && id.length !== 56) || !/^[0-9a-fA-F]*$/.test(id)) {
    throw new InvalidArgumentError('uniqId', `not a message id (32 or 56 hex chars): ${JSON.stringify(id)}`);
  }
  return Buffer.from(id, 'hex');
}

/** The IP bytes of a uniq id (RocketMQ: getIPFromID): 4, or 16 for a 56-char id. */
export function getIPFromUniqId(id: string): Uint8Array {
  const b = idBytes(id);
  return new Uint8Array(b.subarray(0, b.length === 28 ? 16 : 4));
}

/** The IP text of a uniq id (RocketMQ: getIPStrFromID; IPv6 as eight 4-digit groups). */
export function getIPStrFromUniqId(id: string): string {
  const ip = getIPFromUniqId(id);
  return ip.length === 16 ? ipToIPv6Str(ip) : ipv4ToString(ip);
}

/** The pid field of a uniq id, unsigned 16-bit (RocketMQ: getPidFromID). */
export function getPidFromUniqId(id: string): number {
  const b = idBytes(id);
  const p = b.length - 12;
  return ((b[p] as number) << 8) | (b[p + 1] as number);
}

/**
 * The approximate creation time of a uniq id (RocketMQ: getNearlyTimeFromID): the month-relative
 * milliseconds applied to the current month, or the previous one when that would be in the future.
 */
export function getNearlyTimeFromUniqId(id: string, clock: Clock = systemClock): Date {
  const b = idBytes(id);
  const p = b.length - 6;
  const span =
    (((b[p] as number) << 24) | ((b[p + 1] as number) << 16) | ((b[p + 2] as number) << 8) | (b[p + 3] as number)) >>>
    0;
  const now = new Date(clock.now());
  let monthStart = new Date(now.getFullYear(), now.getMonth(), 1).getTime();
  if (monthStart + span >= now.getTime()) monthStart = new Date(now.getFullYear(), now.getMonth() - 1, 1).getTime();
  return new Date(monthStart + span);
}
