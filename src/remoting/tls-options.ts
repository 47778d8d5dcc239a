/**
 * TLS for the client transports (RocketMQ: TlsHelper on the client side, `tls.enable`): the options a
 * client gives, and how a failed handshake is told apart from an ordinary connection failure so that it
 * surfaces as a `TlsError` naming the address.
 * @pure
 */
import { TransportError } from '../common/errors.js';

/** PEM text or DER bytes, as Node's `tls.connect` takes them. */
export type TlsMaterial = string | Buffer | ReadonlyArray<string | Buffer>;

/**
 * The subset of Node's `tls.ConnectionOptions` a client passes on: `true` stands for `{}` (the system's
 * trusted CAs, the peer's certificate checked).
 */
export interface TlsOptions {
  /** Trusted CA certificates (PEM); replaces the system's list. */
  ca?: TlsMaterial;
  /** The client certificate chain (PEM), for servers that ask for one. */
  cert?: TlsMaterial;
  /** The client certificate's private key (PEM). */
  key?: TlsMaterial;
  /** The server name sent in SNI and checked against the certificate. Default: the host, when it is a name. */
  servername?: string;
  /** Refuse a server whose certificate is not trusted or does not match. Default true. */
  rejectUnauthorized?: boolean;
}

/**
 * A TLS handshake with `address` failed: the certificate was refused, or the server does not speak TLS
 * on that port. A `TransportError` (`ERR_TRANSPORT`, retriable: the server may be reconfigured), so
 * the client treats the address as unreachable; `address` names it and `tlsCode` is what Node's TLS
 * layer said (`DEPTH_ZERO_SELF_SIGNED_CERT`, `ERR_SSL_WRONG_VERSION_NUMBER`, `ECONNRESET`, ...).
 */
export class TlsError extends TransportError {
  readonly address: string;
  readonly tlsCode: string | undefined;
  constructor(address: string, message: string, tlsCode?: string) {
    super(message);
    this.address = address;
    this.tlsCode = tlsCode;
  }
}

/** Node's certificate verification codes (X509_V_ERR_* without the prefix) and TLS-layer codes. */
const CERT_CODE = /^(ERR_SSL_|ERR_TLS_|DEPTH_ZERO|SELF_SIGNED|UNABLE_TO_|CERT_|HOSTNAME_MISMATCH)/;

/** Whether `err` came from the TLS layer (a verification or protocol failure), not from TCP. */
export function isTlsFailure(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && CERT_CODE.test(code)) return true;
  const message = (err as { message?: unknown } | null)?.message;
  return typeof message === 'string' && /before secure TLS connection was established/.test(message);
}

/** The `TlsError` for a handshake with `address` that ended with `err` (or with the peer closing). */
export function tlsHandshakeError(address: string, err: unknown): TlsError {
  const code = (err as { code?: unknown } | null)?.code;
  const said = err instanceof Error || (typeof err === 'object' && err !== null && 'message' in err);
  const reason = said ? String((err as { message: unknown }).message) : 'the server closed the connection';
  const notTls =
    !said || code === 'ECONNRESET' || code === 'ERR_SSL_WRONG_VERSION_NUMBER' || /before secure TLS/.test(reason);
  const hint = notTls ? ' (is the server listening with TLS on that port?)' : '';
  return new TlsError(
    address,
    `TLS handshake with ${address} failed: ${reason}${hint}`,
    typeof code === 'string' ? code : undefined,
  );
}

/** `tls: true | TlsOptions | false | undefined` as the options object Node's `tls.connect` gets, or undefined. */
export function tlsConnectOptions(tls: boolean | TlsOptions | undefined): TlsOptions | undefined {
  if (tls === undefined || tls === false) return undefined;
  return tls === true ? {} : tls;
}
