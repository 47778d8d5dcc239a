/**
 * The client side of RocketMQ's plain ACL, for both transports: where a request's credentials come
 * from (fixed ones, or a function asked for every request so that rotated and STS credentials take
 * effect without a restart), and how a broker's ACL refusal is recognised in its answer.
 *
 * A RocketMQ 4.x broker refuses in its RPC hook (`PlainAccessValidator`): the hook throws an
 * `AclException`, and `NettyRemotingAbstract` answers SYSTEM_ERROR with a remark made of the
 * exception (`org.apache.rocketmq.acl.common.AclException: <message>`) and its first stack frame.
 * The messages come from `PlainPermissionManager`; the ones that name an account or a resource are
 * read here so the error can name them too.
 */
import { inspect } from 'node:util';
import { AclAccessDeniedError, CredentialsError, type AclRefusalDetails } from '../common/errors.js';
import { onAbort } from '../common/abort.js';
import type { Clock, TimerHandle } from '../common/clock.js';
import {
  ACL_ACCESS_KEY,
  ACL_SECURITY_TOKEN,
  ACL_SIGNATURE,
  signExtFields,
  type AclCredentials,
} from './acl-signature.js';
import type { ExtFields } from './remoting-command-model.js';

export type { AclCredentials } from './acl-signature.js';

/** Credentials, or a function returning them (sync or async), asked for every request. */
export type CredentialsSource = AclCredentials | (() => AclCredentials | PromiseLike<AclCredentials>);

/** Why `v` is not usable credentials, or null. Never quotes a value: it may be a secret. */
export function credentialsProblem(v: unknown): string | null {
  if (v === null || typeof v !== 'object') return 'must be an object { accessKey, secretKey, securityToken? }';
  const c = v as Record<string, unknown>;
  if (typeof c.accessKey !== 'string' || c.accessKey.length === 0) return 'accessKey must be a non-empty string';
  if (typeof c.secretKey !== 'string' || c.secretKey.length === 0) return 'secretKey must be a non-empty string';
  if (c.securityToken !== undefined && (typeof c.securityToken !== 'string' || c.securityToken.length === 0))
    return 'securityToken, when given, must be a non-empty string';
  return null;
}

/** A copy of valid credentials, reduced to the three fields (nothing else of the caller's object is kept). */
function copy(c: AclCredentials): AclCredentials {
  return Object.freeze(
    c.securityToken === undefined
      ? { accessKey: c.accessKey, secretKey: c.secretKey }
      : { accessKey: c.accessKey, secretKey: c.secretKey, securityToken: c.securityToken },
  );
}

function isPromiseLike(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

/**
 * Holds a client's credentials source. Printing it (`inspect`, `toString`, `JSON.stringify`) shows
 * the access key at most, never the secret key or the security token.
 */
export class Credentials {
  readonly #fixed: AclCredentials | undefined;
  readonly #fn: (() => AclCredentials | PromiseLike<AclCredentials>) | undefined;

  /** Throws a `CredentialsError` when fixed credentials are incomplete. */
  constructor(source: CredentialsSource) {
    if (typeof source === 'function') {
      this.#fn = source;
      return;
    }
    const problem = credentialsProblem(source);
    if (problem) throw new CredentialsError(`credentials: ${problem}`, { retriable: false });
    this.#fixed = copy(source);
  }

  /** True when the credentials come from a function. */
  get dynamic(): boolean {
    return this.#fn !== undefined;
  }

  /**
   * The credentials for one request: at once for fixed ones and a function that returns a value,
   * else a promise bounded by `timeoutMs` and `signal`. Fails with a `CredentialsError`, never with
   * the function's own error text alone (it may quote a secret, so it stays in `cause`).
   */
  get(timeoutMs: number, clock: Clock, signal?: AbortSignal): AclCredentials | Promise<AclCredentials> {
    if (this.#fixed) return this.#fixed;
    let out: unknown;
    try {
      out = (this.#fn as () => unknown)();
    } catch (e) {
      throw new CredentialsError('the credentials function threw', { cause: e });
    }
    if (!isPromiseLike(out)) return checked(out);
    return bounded(out, timeoutMs, clock, signal);
  }

  toString(): string {
    return this.#fixed ? `Credentials(accessKey=${this.#fixed.accessKey})` : 'Credentials(function)';
  }

  toJSON(): Record<string, string> {
    return this.#fixed ? { accessKey: this.#fixed.accessKey, secretKey: '<hidden>' } : { source: 'function' };
  }

  [inspect.custom](): string {
    return this.toString();
  }
}

function checked(v: unknown): AclCredentials {
  const problem = credentialsProblem(v);
  if (problem)
    throw new CredentialsError(`the credentials function returned unusable credentials: ${problem}`, {
      retriable: false,
    });
  return copy(v as AclCredentials);
}

function bounded(
  p: PromiseLike<unknown>,
  timeoutMs: number,
  clock: Clock,
  signal?: AbortSignal,
): Promise<AclCredentials> {
  let timer: TimerHandle | undefined;
  let unlisten: (() => void) | undefined;
  return new Promise<AclCredentials>((resolve, reject) => {
    timer = clock.setTimeout(
      () => reject(new CredentialsError(`the credentials function did not answer within ${timeoutMs} ms`)),
      timeoutMs,
    );
    if (signal)
      unlisten = onAbort(signal, () =>
        reject(new CredentialsError('aborted while waiting for the credentials function', { cause: signal.reason })),
      );
    Promise.resolve(p).then(
      (v) => {
        try {
          resolve(checked(v));
        } catch (e) {
          reject(e as Error);
        }
      },
      (e: unknown) => reject(new CredentialsError('the credentials function rejected', { cause: e })),
    );
  }).finally(() => {
    if (timer !== undefined) clock.clearTimeout(timer);
    unlisten?.();
  });
}

const ACL_EXCEPTION = 'org.apache.rocketmq.acl.common.AclException: ';

/**
 * The refusal an answer carries, or null: a remark that is RocketMQ's `AclException` (the broker's
 * ACL hook threw it). `signedWith` is the access key the request carried, named when the broker's
 * message names no account.
 */
export function aclRefusal(
  remark: string | null | undefined,
  signedWith: string | undefined,
): AclRefusalDetails | null {
  if (!remark) return null;
  const at = remark.indexOf(ACL_EXCEPTION);
  if (at < 0) return null;
  let reason = remark.slice(at + ACL_EXCEPTION.length);
  // exceptionSimpleDesc appends ", <first stack frame>": a Java frame such as `a.b.C.m(C.java:12)`.
  const frame = /, [\w$.]+\([^()]*\)$/.exec(reason);
  if (frame) reason = reason.slice(0, frame.index);
  const account = /(?:accessKey=|No acl config for )([^\s,]+)/.exec(reason)?.[1] ?? signedWith ?? undefined;
  const resource = /No default permission for ((?:topic|group):\S+)/.exec(reason)?.[1];
  const admin = /Need admin permission for request code=(\d+)/.exec(reason)?.[1];
  return {
    accessKey: account,
    resource,
    adminRequestCode: admin === undefined ? undefined : Number(admin),
    reason,
  };
}

/** The typed error for a refusal found by `aclRefusal`. */
export function aclDeniedError(
  what: string,
  addr: string,
  details: AclRefusalDetails,
  responseCode: number,
): AclAccessDeniedError {
  const who = details.accessKey === undefined ? 'no accessKey' : `accessKey ${details.accessKey}`;
  const on = details.resource === undefined ? '' : ` on ${details.resource}`;
  return new AclAccessDeniedError(
    `${what} to ${addr} refused by the broker's ACL (${who}${on}): ${details.reason}`,
    addr,
    details,
    { responseCode },
  );
}

/**
 * The fields of an HTTP command header as the ACL signs them: each field's value as a string (a
 * string as it is, a number or boolean as `String` writes it, anything else as JSON), null and
 * undefined fields left out. The broker signs the header it received the same way.
 */
export function aclFieldsOfHeader(header: Readonly<Record<string, unknown>> | null | undefined): ExtFields {
  const out: ExtFields = {};
  if (!header) return out;
  for (const [k, v] of Object.entries(header)) {
    if (v === null || v === undefined) continue;
    out[k] = typeof v === 'string' ? v : typeof v === 'object' ? JSON.stringify(v) : String(v as number | boolean);
  }
  return out;
}

/** `header` with `AccessKey`, `SecurityToken` when given and `Signature` over it and `body` (as sent). */
export function signHttpHeader(
  header: Readonly<Record<string, unknown>> | null | undefined,
  body: Buffer | null | undefined,
  credentials: AclCredentials,
): Record<string, unknown> {
  const signed = signExtFields(aclFieldsOfHeader(header), body ?? null, credentials);
  // Filled in order rather than copied and then deleted from, which would make a slow dictionary-mode object.
  const out: Record<string, unknown> = {};
  if (header)
    for (const key of Object.keys(header)) {
      if (key === ACL_SECURITY_TOKEN) continue;
      if (key === '__proto__')
        Object.defineProperty(out, key, { value: header[key], enumerable: true, writable: true, configurable: true });
      else out[key] = header[key];
    }
  out[ACL_ACCESS_KEY] = signed[ACL_ACCESS_KEY];
  if (signed[ACL_SECURITY_TOKEN] !== undefined) out[ACL_SECURITY_TOKEN] = signed[ACL_SECURITY_TOKEN];
  out[ACL_SIGNATURE] = signed[ACL_SIGNATURE];
  return out;
}
