/**
 * How the remoting listener frames its answers and numbers the requests it starts itself.
 */
import type { Logger } from '../../common/logger.js';
import { ResponseCode } from '../../protocol/index.js';
import {
  encodeRemotingCommand,
  markResponse,
  type RemotingCommandInput,
  type SerializeType,
} from '../../remoting/remoting-command.js';
import { publicRemark } from './public-remark.js';

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

/**
 * The frame of an answer to the request `code`/`opaque` from `remote`: its remark made fit for clients
 * (no file-system paths), and SYSTEM_ERROR when the answer cannot be encoded (logged).
 */
export function answerFrame(
  response: RemotingCommandInput,
  request: { code: number; opaque: number },
  serializeType: SerializeType,
  logger: Logger,
  remote: string,
): { head: Buffer; body: Uint8Array | null } {
  if (response.remark) {
    const remark = publicRemark(response.remark, logger, { code: request.code, remote });
    if (remark !== response.remark) response = { ...response, remark };
  }
  try {
    return encodeResponseParts(response, request.opaque, serializeType);
  } catch (e) {
    logger.error({ err: e, code: request.code }, 'remoting response could not be encoded');
    const error = { code: ResponseCode.SYSTEM_ERROR, opaque: request.opaque, flag: markResponse(0) };
    return { head: encodeRemotingCommand({ ...error, remark: 'system error' }, { serializeType }), body: null };
  }
}
