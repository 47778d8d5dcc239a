/**
 * Offset message ids: store host address bytes (4 or 16), port (int), commit-log offset (long), as
 * upper-case hex: 32 chars for IPv4, 56 for IPv6. RocketMQ: MessageDecoder.createMessageId /
 * decodeMessageId.
 * @pure
 */
import type { HostAddress } from '../message.js';
import { InvalidArgumentError } from '../errors.js';
import { bytesToHex, hex64, readInt32, readInt64, writeInt32 } from './bytes.js';
import { ipToBytes, ipv4ToString, ipv6ToString } from './hosts.js';

/** Address bytes of a host, or an InvalidArgumentError naming `field`. */
export function hostBytes(host: HostAddress, field: string): Uint8Array {
  if (host === null || typeof host !== 'object' || typeof host.ip !== 'string') {
    throw new InvalidArgumentError(field, 'must be an object { ip, port }');
  }
  const bytes = ipToBytes(host.ip);
  if (!bytes) throw new InvalidArgumentError(`${field}.ip`, `not an IPv4 or IPv6 address: ${JSON.stringify(host.ip)}`);
  checkPort(host.port, `${field}.port`);
  return bytes;
}

export function checkPort(port: unknown, field: string): asserts port is number {
  if (typeof port !== 'number' || !Number.isInteger(port) || port < 0 || port > 65535) {
    throw new InvalidArgumentError(field, `must be an integer port 0-65535, got ${String(port)}`);
  }
}

export function checkSafeInteger(v: unknown, field: string): asserts v is number {
  if (typeof v !== 'number' || !Number.isSafeInteger(v)) {
    throw new InvalidArgumentError(field, `must be an integer within ±(2^53 - 1), got ${String(v)}`);
  }
}

/** The hex of the last store host seen: a broker writes every id with the same one. */
let lastHost: { ip: string; port: number; hex: string } | null = null;

/** The offset message id of a record stored at `commitLogOffset` by `storeHost`. */
export function createMessageId(storeHost: HostAddress, commitLogOffset: number): string {
  const last = lastHost;
  let hostHex: string;
  if (
    last !== null &&
    storeHost !== null &&
    typeof storeHost === 'object' &&
    storeHost.ip === last.ip &&
    storeHost.port === last.port
  )
    hostHex = last.hex;
  else {
    const addr = hostBytes(storeHost, 'storeHost');
    const b = new Uint8Array(addr.length + 4);
    b.set(addr, 0);
    writeInt32(b, addr.length, storeHost.port);
    hostHex = bytesToHex(b);
    lastHost = { ip: storeHost.ip, port: storeHost.port, hex: hostHex };
  }
  checkSafeInteger(commitLogOffset, 'commitLogOffset');
  return hostHex + hex64(commitLogOffset);
}

/**
 * Splits an offset message id (either case) into store host and commit-log offset. A 32-char id is
 * IPv4, a 56-char id IPv6 (printed as Java prints it; an IPv4-mapped address comes back as IPv4).
 */
export function decodeMessageId(msgId: string): { host: HostAddress; offset: number } {
  if (typeof msgId !== 'string' || (msgId.length !== 32 && msgId.length !== 56) || !/^[0-9a-fA-F]*$/.test(msgId)) {
    throw new InvalidArgumentError('msgId', `not a message id (32 or 56 hex chars): ${JSON.stringify(msgId)}`);
  }
  const b = Buffer.from(msgId, 'hex');
  const ipLen = msgId.length === 32 ? 4 : 16;
  const ip = ipLen === 4 ? ipv4ToString(b, 0) : ipv6ToString(b, 0);
  const port = readInt32(b, ipLen);
  if (port < 0 || port > 65535) throw new InvalidArgumentError('msgId', `port out of range: ${port}`);
  const offset = readInt64(b, ipLen + 4);
  if (Number.isNaN(offset)) throw new InvalidArgumentError('msgId', 'offset beyond ±(2^53 - 1)');
  return { host: { ip, port }, offset };
}
