/**
 * How the remoting listener frames its answers and numbers the requests it starts itself.
 */
import {
  encodeRemotingCommand,
  markResponse,
  type RemotingCommandInput,
  type SerializeType,
} from '../../remoting/remoting-command.js';

/**
 * The frame of the response `command` to the request `opaque` as its head (length, header) and its body
 * apart, so a large body is written as it is rather than copied into one buffer with the header. The
 * response flag is set here; the command itself is left as it is (one object of one shape is encoded,
 * not a spread copy per answer).
 */
export function encodeResponseParts(
  command: RemotingCommandInput,
  opaque: number,
  serializeType: SerializeType,
): { head: Buffer; body: Uint8Array | null } {
  const body = command.body ?? null;
  const parts = {
    code: command.code,
    language: command.language,
    version: command.version,
    opaque,
    flag: markResponse(command.flag ?? 0),
    remark: command.remark,
    extFields: command.extFields,
    body: null as Uint8Array | null,
  };
  const head = encodeRemotingCommand(parts, { serializeType });
  if (body === null || body.length === 0) return { head, body: null };
  // The total length at the front counts the body too (see remoting-command.ts for the frame's layout).
  const total = head.readInt32BE(0) + body.length;
  if (total > 0x7fffffff) {
    parts.body = body; // refused there, naming the body
    return { head: encodeRemotingCommand(parts, { serializeType }), body: null };
  }
  head.writeInt32BE(total, 0);
  return { head, body };
}

let nextServerOpaque = 0;
/** Opaque for server-initiated requests (RocketMQ: one process-wide counter). */
export function nextOpaque(): number {
  nextServerOpaque = (nextServerOpaque + 1) | 0;
  return nextServerOpaque;
}
