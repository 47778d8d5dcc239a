/**
 * From a decoded frame to a processor's answer, independent of HTTP: the command lookup by path
 * segment, the validation of the header (and of a JSON body) with the command's zod schemas, and the
 * call of the processor registered for the request code, with every failure inside a processor turned
 * into SYSTEM_ERROR (the broker never answers 500, docs/protocol.md).
 */
import { z } from 'zod';
import type { Logger } from '../common/logger.js';
import { tieredSafeParse } from '../common/option-errors.js';
import {
  COMMANDS,
  COMMANDS_BY_NAME,
  ResponseCode,
  describeZodError,
  type CommandSpec,
  type RemotingResponse,
} from '../protocol/index.js';
import { checkHeader } from '../protocol/header-check.js';
import type { BrokerContext, BrokerRequest, ConnectionInfo, Processor } from './broker-context.js';

/** The command named by a path segment (`PULL_MESSAGE` or `11`). */
export interface CommandLookup {
  /** The request code when the segment is a number or a known name. */
  code: number | undefined;
  spec: CommandSpec | undefined;
  /** The segment as given, for remarks. */
  segment: string;
}

/** Lookups of known commands by segment (bounded: known names and codes of at most 9 digits). */
const KNOWN_LOOKUPS = new Map<string, CommandLookup>();

export function lookupCommand(segment: string): CommandLookup {
  const known = KNOWN_LOOKUPS.get(segment);
  if (known) return known;
  let lookup: CommandLookup;
  if (/^\d{1,9}$/.test(segment)) {
    const code = Number(segment);
    lookup = { code, spec: COMMANDS.get(code), segment };
  } else {
    const spec = COMMANDS_BY_NAME.get(segment);
    lookup = { code: spec?.code, spec, segment };
  }
  if (lookup.spec) KNOWN_LOOKUPS.set(segment, Object.freeze(lookup));
  return lookup;
}

/**
 * RocketMQ 4.9.8 request codes (RequestCode) that only mean something between brokers of a cluster or
 * between a broker and a name server: a slave's sync of a master, a broker's (un)registration, the name
 * server's check of a broker's data version. This broker is its own name server and has no slave, so it
 * names the code and the reason instead of the generic remark.
 */
const SINGLE_BROKER_UNSUPPORTED = new Map<number, { name: string; reason: string }>([
  [
    43,
    { name: 'GET_ALL_CONSUMER_OFFSET', reason: 'a slave broker syncs consumer offsets with it, and there is no slave' },
  ],
  [
    45,
    { name: 'GET_ALL_DELAY_OFFSET', reason: 'a slave broker syncs delay-level offsets with it, and there is no slave' },
  ],
  [103, { name: 'REGISTER_BROKER', reason: 'the broker is its own name server, no other broker can join it' }],
  [104, { name: 'UNREGISTER_BROKER', reason: 'the broker is its own name server, no other broker is registered' }],
  [322, { name: 'QUERY_DATA_VERSION', reason: 'only a name server asks a registered broker for its data version' }],
]);
const SINGLE_BROKER_UNSUPPORTED_BY_NAME = new Map(
  [...SINGLE_BROKER_UNSUPPORTED].map(([code, entry]) => [entry.name, code] as const),
);

/**
 * RocketMQ: an unknown request code is answered REQUEST_CODE_NOT_SUPPORTED " request type <code> not supported";
 * a cluster-only code (by number, or by name on HTTP) gets a remark naming it and why it has no meaning here.
 */
export function requestCodeNotSupported(what: string | number): RemotingResponse {
  const code = typeof what === 'number' ? what : SINGLE_BROKER_UNSUPPORTED_BY_NAME.get(what);
  const known = code === undefined ? undefined : SINGLE_BROKER_UNSUPPORTED.get(code);
  const remark = known
    ? `${known.name} (code ${code}) is not supported on a single broker: ${known.reason}`
    : ` request type ${what} not supported`;
  return { code: ResponseCode.REQUEST_CODE_NOT_SUPPORTED, header: {}, remark };
}

export type ValidationResult = { ok: true; request: BrokerRequest } | { ok: false; field: string; message: string };

/**
 * Validates a request header (and a JSON body when the spec has one) with the command's schemas.
 * `headerParsed`: the header is already the output of the command's header schema (the remoting
 * listener reads extFields through it), so it is not parsed a second time.
 */
export function validateRequest(
  spec: CommandSpec,
  header: unknown,
  body: Buffer | undefined,
  headerParsed = false,
): ValidationResult {
  let data = header as Record<string, unknown>;
  if (!headerParsed) {
    const checked = checkHeader(spec.requestHeader, header);
    if (!checked.ok) return checked;
    data = checked.data;
  }
  const request: BrokerRequest = { code: spec.code, header: data, body };
  if (spec.requestBody) {
    if (!body || body.length === 0) return { ok: false, field: '(body)', message: 'a JSON body is required' };
    let json: unknown;
    try {
      json = JSON.parse(body.toString('utf8'));
    } catch (e) {
      return { ok: false, field: '(body)', message: `the body is not valid JSON: ${(e as Error).message}` };
    }
    const bodyParsed = tieredSafeParse(spec.requestBody as z.ZodType, json);
    if (!bodyParsed.success) {
      const d = describeZodError(bodyParsed.error);
      return { ok: false, field: d.field === '(root)' ? '(body)' : `body.${d.field}`, message: d.message };
    }
    request.parsedBody = bodyParsed.data;
  }
  return { ok: true, request };
}

/** Runs the processor of `request.code`; unknown codes and processor failures become response codes. */
export async function handleRequest(
  ctx: BrokerContext,
  table: ReadonlyMap<number, Processor>,
  request: BrokerRequest,
  connection: ConnectionInfo,
  logger: Logger,
): Promise<RemotingResponse> {
  const processor = table.get(request.code);
  if (!processor) return requestCodeNotSupported(request.code);
  try {
    return await processor(ctx, request, connection);
  } catch (e) {
    logger.error({ err: e, code: request.code }, 'processor failed');
    const message = e instanceof Error ? e.message : String(e);
    return { code: ResponseCode.SYSTEM_ERROR, header: {}, remark: message || 'system error' };
  }
}
