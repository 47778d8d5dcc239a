/**
 * The W3C Trace Context carried in a message: `traceparent` and `tracestate` as user properties, the
 * names OpenTelemetry's W3C propagator gives them, so RocketMQ's Java client with OpenTelemetry's
 * instrumentation (which puts them in the message's user properties too) reads ours and we read its.
 * @pure
 */
import type { OtelSpanContext } from './otel-api.js';

export const TRACEPARENT = 'traceparent';
export const TRACESTATE = 'tracestate';

/** W3C: a tracestate longer than this may be dropped; a traceparent of a future version is still short. */
export const MAX_TRACESTATE_LENGTH = 512;
const MAX_TRACEPARENT_LENGTH = 256;

const TRACEPARENT_RE = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

/** `traceparent` of a span context (version 00). */
export function formatTraceparent(sc: OtelSpanContext): string {
  return `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
}

/** A valid span context: a trace id and a span id that are not all zeros. */
export function isValidSpanContext(sc: OtelSpanContext): boolean {
  return (
    /^[0-9a-f]{32}$/.test(sc.traceId) &&
    sc.traceId !== ZERO_TRACE &&
    /^[0-9a-f]{16}$/.test(sc.spanId) &&
    sc.spanId !== ZERO_SPAN
  );
}

/** What a message's trace properties say. */
export type ParsedTraceparent =
  | { ok: true; traceId: string; spanId: string; traceFlags: number; traceState: string | undefined }
  | { ok: false; problem: string }
  | undefined;

/**
 * Reads `traceparent` (and `tracestate`) as the W3C rules say: undefined when there is none; a problem
 * for one that is oversized, malformed, of version ff, or with an all-zero id (version 00 allows nothing
 * after the flags). An oversized tracestate is dropped, keeping the parent.
 */
export function parseTraceparent(traceparent: string | undefined, tracestate: string | undefined): ParsedTraceparent {
  if (traceparent === undefined) return undefined;
  if (traceparent.length > MAX_TRACEPARENT_LENGTH) return { ok: false, problem: 'oversized traceparent' };
  const m = TRACEPARENT_RE.exec(traceparent.trim());
  if (!m) return { ok: false, problem: 'malformed traceparent' };
  const [, version, traceId, spanId, flags, rest] = m as unknown as [string, string, string, string, string, string?];
  if (version === 'ff' || (version === '00' && rest !== undefined))
    return { ok: false, problem: 'malformed traceparent' };
  if (traceId === ZERO_TRACE || spanId === ZERO_SPAN) return { ok: false, problem: 'traceparent with a zero id' };
  const state = tracestate !== undefined && tracestate.length <= MAX_TRACESTATE_LENGTH ? tracestate : undefined;
  return { ok: true, traceId, spanId, traceFlags: parseInt(flags, 16), traceState: state };
}
