/**
 * How the command model (typed header, raw body) maps onto RocketMQ remoting commands on TCP:
 *
 * - the typed header becomes `extFields` through the command's zod schema (SEND_MESSAGE_V2 and
 *   SEND_BATCH_MESSAGE with RocketMQ's one-letter keys), and the answer's `extFields` are read back
 *   through the response schema;
 * - a JSON request body (HeartbeatData) is re-written the way fastjson writes it, so a broker sees
 *   the bytes a Java client sends;
 * - a JSON response body (TopicRouteData, the consumer list) is read with fastjson's leniency — a
 *   NameServer answering an old client writes integer map keys unquoted, `{0:"host:port"}` — and
 *   handed on as standard JSON.
 *
 * Codes without a command file (admin codes, broker-initiated requests) pass their header values
 * through as strings.
 * @pure
 */
import { InvalidArgumentError, RocketMQError } from '../common/errors.js';
import type { RemotingRequest, RemotingResponse } from '../protocol/command.js';
import { COMMANDS } from '../protocol/commands/index.js';
import { checkHeader } from '../protocol/header-check.js';
import {
  requestHeaderToExtFields,
  responseHeaderFromExtFields,
  usesSendMessageV2Keys,
} from '../protocol/ext-fields.js';
import { fastjsonStringify, jsonValueToPlain, parseLenientJson } from './fastjson-text.js';
import type { ExtFields, RemotingCommand } from './remoting-command.js';

/** The extFields and body of `request` as they go on the wire. Throws an `InvalidArgumentError` naming a bad field. */
export function requestToWire(request: RemotingRequest): { extFields: Record<string, string>; body: Buffer | null } {
  const spec = COMMANDS.get(request.code);
  const header = request.header ?? {};
  let extFields: Record<string, string>;
  if (spec || usesSendMessageV2Keys(request.code)) {
    if (spec && request.headerChecked !== true) {
      const checked = checkHeader(spec.requestHeader, header);
      if (!checked.ok) throw new InvalidArgumentError(`${spec.name}.${checked.field}`, checked.message);
    }
    extFields = requestHeaderToExtFields(request.code, header);
  } else {
    extFields = {};
    for (const [k, v] of Object.entries(header)) {
      if (v === undefined || v === null) continue;
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
        throw new InvalidArgumentError(`header.${k}`, 'must be a string, number or boolean');
      extFields[k] = String(v);
    }
  }
  let body = request.body ?? null;
  if (body && body.length > 0 && spec?.requestBody) body = Buffer.from(toFastjson(body), 'utf8');
  return { extFields, body: body && body.length > 0 ? body : null };
}

function toFastjson(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    return fastjsonStringify(JSON.parse(text));
  } catch {
    // Not standard JSON: the caller's bytes go as they are; the broker judges them.
    return text;
  }
}

/** The answer to a request with `requestCode`, in the command model. */
export function responseFromWire(requestCode: number, cmd: RemotingCommand): RemotingResponse {
  const spec = COMMANDS.get(requestCode);
  let header: Record<string, unknown>;
  const ext = cmd.extFields ?? {};
  if (spec || usesSendMessageV2Keys(requestCode)) {
    try {
      header = responseHeaderFromExtFields(requestCode, ext);
    } catch (e) {
      throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${(e as Error).message}`, { cause: e });
    }
  } else {
    header = stringHeader(ext);
  }
  let body = cmd.body ?? undefined;
  if (body && spec?.responseBody) body = Buffer.from(standardJson(body), 'utf8');
  return { code: cmd.code, remark: cmd.remark ?? undefined, header, body };
}

/** extFields without null values, as a header of strings. */
export function stringHeader(ext: ExtFields): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(ext)) if (v !== null) out[k] = v;
  return out;
}

function standardJson(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    return JSON.stringify(jsonValueToPlain(parseLenientJson(text)));
  } catch {
    // Left as it came: the command's own body check reports it.
    return text;
  }
}
