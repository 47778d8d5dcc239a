/**
 * One error base for the whole SDK: a stable string `code`, a `retriable` flag and
 * `cause`. Subclasses exist only where callers branch on them. `docs/errors.md` lists the codes.
 * @pure
 */

export interface RocketMQErrorOptions {
  retriable?: boolean;
  cause?: unknown;
  /** The broker's numeric response code, when the error came from a response. */
  responseCode?: number;
}

/**
 * The base of every error the SDK throws: `code` is a stable string to branch on (`docs/errors.md`
 * lists them), `retriable` says whether trying again may succeed, `responseCode` is the broker's
 * numeric code when the error came from a response, and `cause` is the underlying error.
 */
export class RocketMQError extends Error {
  /** Stable, documented string code, e.g. `ERR_TOPIC_NOT_EXIST`. */
  readonly code: string;
  /** Whether repeating the same call later may succeed. */
  readonly retriable: boolean;
  /** The broker's response code, for errors mapped from a response. */
  readonly responseCode: number | undefined;

  constructor(code: string, message: string, options: RocketMQErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.retriable = options.retriable ?? false;
    this.responseCode = options.responseCode;
  }
}

/**
 * Makes an error without capturing its stack trace. For errors a peer's bytes cause on a server's hot
 * path (a malformed frame): their stack is always the same reader's and says nothing, and capturing it
 * is most of an error's cost, which a flood of bad frames pays thousands of times a second.
 */
export function withoutStack<E extends Error>(make: () => E): E {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return make();
  } finally {
    Error.stackTraceLimit = limit;
  }
}

/** An option or argument given by the caller is invalid; `field` names it. */
export class InvalidArgumentError extends RocketMQError {
  readonly field: string;
  constructor(field: string, message: string, options: RocketMQErrorOptions = {}) {
    super('ERR_INVALID_ARGUMENT', `${field}: ${message}`, options);
    this.field = field;
  }
}

/** A buffer could not be decoded (truncated, corrupt, wrong magic); never retriable. */
export class DecodeError extends RocketMQError {
  /** Byte position in the input where decoding failed. */
  readonly position: number;
  constructor(message: string, position: number, options: RocketMQErrorOptions = {}) {
    super('ERR_DECODE', message, options);
    this.position = position;
  }
}

export interface TransportErrorOptions extends RocketMQErrorOptions {
  /** The call outlived its deadline: the code is `ERR_TIMEOUT` (else `ERR_TRANSPORT`). */
  timeout?: boolean;
}

/**
 * A transport-level failure: `ERR_TIMEOUT` when the caller says the call timed out, else
 * `ERR_TRANSPORT` (connection refused or reset, a non-command answer). Retriable.
 */
export class TransportError extends RocketMQError {
  constructor(message: string, options: TransportErrorOptions = {}) {
    const { timeout, ...rest } = options;
    super(timeout ? 'ERR_TIMEOUT' : 'ERR_TRANSPORT', message, { retriable: true, ...rest });
  }
}

/** The object was shut down (or not started) when the call was made. */
export class StateError extends RocketMQError {
  constructor(message: string) {
    super('ERR_STATE', message);
  }
}

/**
 * A client's `start()` could not reach its broker (route fetched, heartbeat accepted) within
 * `startTimeoutMs`. Retriable: starting again once the broker is up succeeds. `address` names the
 * broker (or endpoint) last tried and `cause` is the last failure seen.
 */
export class StartTimeoutError extends RocketMQError {
  /** The broker or endpoint address that could not be reached. */
  readonly address: string | undefined;
  constructor(message: string, address: string | undefined, options: RocketMQErrorOptions = {}) {
    super('ERR_START_TIMEOUT', message, { retriable: true, ...options });
    this.address = address;
  }
}

/** What the broker named when it refused a request under its ACL, as far as its answer says. */
export interface AclRefusalDetails {
  /** The account the refusal names (or, when the broker named none, the one the request was signed with). */
  readonly accessKey: string | undefined;
  /** The resource refused, as RocketMQ prints it: `topic:Name` or `group:Name`; undefined when not named. */
  readonly resource: string | undefined;
  /** The request code refused for lack of admin rights, when that was the reason. */
  readonly adminRequestCode: number | undefined;
  /** The broker's reason (RocketMQ's `AclException` message, without the class and stack frame). */
  readonly reason: string;
}

/**
 * The broker refused a request under its access control (RocketMQ's plain ACL): no credentials, an
 * unknown account, a wrong signature, a resource the account may not use, or an admin request from a
 * non-admin account. Not retriable: the same request with the same credentials is refused again.
 * `accessKey` and `resource` name the account and the topic or group when the broker's answer does.
 */
export class AclAccessDeniedError extends RocketMQError implements AclRefusalDetails {
  readonly accessKey: string | undefined;
  readonly resource: string | undefined;
  readonly adminRequestCode: number | undefined;
  readonly reason: string;
  /** The address of the broker that refused. */
  readonly address: string;
  constructor(message: string, address: string, details: AclRefusalDetails, options: RocketMQErrorOptions = {}) {
    super('ERR_ACL_ACCESS_DENIED', message, { ...options, retriable: false });
    this.accessKey = details.accessKey;
    this.resource = details.resource;
    this.adminRequestCode = details.adminRequestCode;
    this.reason = details.reason;
    this.address = address;
  }
}

/**
 * The client's credentials could not be had for a request: the credentials function threw, rejected,
 * returned something that is not `{ accessKey, secretKey }`, or did not answer within the request's
 * deadline. The request was not sent. Retriable: a provider that fails now (an STS endpoint down) may
 * answer later.
 */
export class CredentialsError extends RocketMQError {
  constructor(message: string, options: RocketMQErrorOptions = {}) {
    super('ERR_CREDENTIALS', message, { retriable: true, ...options });
  }
}
