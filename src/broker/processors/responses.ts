/**
 * Small helpers shared by the processors: building answers and reading the peer's address.
 */
import type { HostAddress } from '../../common/message.js';
import { ResponseCode, type RemotingResponse } from '../../protocol/index.js';

export function ok(header: Record<string, unknown> = {}, remark?: string, body?: Buffer): RemotingResponse {
  return { code: ResponseCode.SUCCESS, header, remark, body };
}

export function fail(code: number, remark: string, header: Record<string, unknown> = {}): RemotingResponse {
  return { code, header, remark };
}

/** `ip:port` (IPv6 unbracketed, as Node reports it) → HostAddress; IPv4-mapped IPv6 becomes IPv4. */
export function parseHostAddress(remoteAddress: string): HostAddress {
  const i = remoteAddress.lastIndexOf(':');
  let ip = i > 0 ? remoteAddress.slice(0, i) : remoteAddress;
  const port = i > 0 ? Number(remoteAddress.slice(i + 1)) : 0;
  if (ip.startsWith('::ffff:') && /^\d+\.\d+\.\d+\.\d+$/.test(ip.slice(7))) ip = ip.slice(7);
  if (!/^[0-9a-fA-F:.]+$/.test(ip)) ip = '127.0.0.1';
  return { ip, port: Number.isInteger(port) && port >= 0 && port <= 65535 ? port : 0 };
}
