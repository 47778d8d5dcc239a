/**
 * Errors raised by a transport beyond the shared ones (`TransportError` in src/common/errors.ts):
 *
 * | class | code | retriable | when |
 * |---|---|---|---|
 * | `TransportError` | `ERR_TRANSPORT` | yes | connection refused or reset, a non-command answer (5xx) |
 * | `TransportError` | `ERR_TIMEOUT` | yes | the call outlived its `timeoutMs` |
 * | `AbortError` | `ERR_ABORTED` | no | the caller's `AbortSignal` fired |
 * | `RequestRejectedError` | `ERR_BAD_REQUEST`, `ERR_UNAUTHORIZED`, `ERR_NOT_FOUND`, ... | no | HTTP 4xx: the broker refused the request itself |
 * | `ClosedError` | `ERR_CLOSED` | no | the transport was closed |
 * @pure
 */
import { RocketMQError, type RocketMQErrorOptions } from '../common/errors.js';

/** The caller aborted the call through its AbortSignal. `name` is `'AbortError'`, as for fetch. */
export class AbortError extends RocketMQError {
  constructor(message = 'the operation was aborted', options: RocketMQErrorOptions = {}) {
    super('ERR_ABORTED', message, { ...options, retriable: false });
    this.name = 'AbortError';
  }
}

/**
 * The broker refused the request before running it (an HTTP 4xx): a malformed frame, a header field
 * missing or of the wrong type (`field` names it), a missing or wrong access token, an unknown path,
 * a body over the broker's limit. Repeating the same request cannot succeed.
 */
export class RequestRejectedError extends RocketMQError {
  /** The HTTP status. */
  readonly status: number;
  /** The header field the broker named, when it named one. */
  readonly field: string | undefined;
  constructor(status: number, code: string, message: string, field?: string) {
    super(`ERR_${code}`, message, { retriable: false });
    this.status = status;
    this.field = field;
  }
}

/** The transport (or the object owning it) was closed when the call was made. */
export class ClosedError extends RocketMQError {
  constructor(message = 'the client is closed') {
    super('ERR_CLOSED', message, { retriable: false });
  }
}

/** Whether `err` is (or wraps) a transport failure worth retrying on another broker or later. */
export function isRetriable(err: unknown): boolean {
  return err instanceof RocketMQError && err.retriable;
}
