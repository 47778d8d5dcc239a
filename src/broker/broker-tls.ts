/**
 * The broker's TLS settings (RocketMQ: TlsSystemConfig, `tls.server.mode`, `tls.server.certPath`,
 * `tls.server.keyPath`): the certificate and key read from their PEM files and checked at start, so a
 * file that does not parse stops the broker with an error naming it instead of failing each handshake.
 */
import { X509Certificate, createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import tls from 'node:tls';
import { InvalidArgumentError } from '../common/errors.js';

/**
 * RocketMQ's `tls.server.mode`: `disabled` serves plain connections only; `permissive` serves TLS and
 * plain connections on the same port (told apart by the first byte); `enforcing` serves TLS only.
 */
export type TlsMode = 'disabled' | 'permissive' | 'enforcing';

export const TLS_MODES: readonly TlsMode[] = Object.freeze(['disabled', 'permissive', 'enforcing']);

/** `Broker.start({ tls })`: paths of PEM files, and the mode (default `enforcing`). */
export interface BrokerTlsOptions {
  /** Path of the server certificate (chain), PEM. */
  cert: string;
  /** Path of its private key, PEM (unencrypted). */
  key: string;
  /** Default `enforcing`. */
  mode?: TlsMode;
}

/** What the listeners use: the loaded (and checked) certificate and key. */
export interface BrokerTls {
  mode: 'permissive' | 'enforcing';
  cert: Buffer;
  key: Buffer;
}

function readPem(file: string, field: string, what: string): Buffer {
  try {
    return readFileSync(file);
  } catch (e) {
    throw new InvalidArgumentError(field, `cannot read the ${what} file '${file}': ${(e as Error).message}`);
  }
}

/** Reads and checks the files; undefined when TLS is off. Throws InvalidArgumentError naming the bad file. */
export function loadBrokerTls(options: BrokerTlsOptions | undefined): BrokerTls | undefined {
  if (options === undefined || options.mode === 'disabled') return undefined;
  const cert = readPem(options.cert, 'tls.cert', 'certificate');
  const key = readPem(options.key, 'tls.key', 'private key');
  try {
    new X509Certificate(cert);
  } catch (e) {
    throw new InvalidArgumentError('tls.cert', `'${options.cert}' is not a PEM certificate: ${(e as Error).message}`);
  }
  try {
    createPrivateKey(key);
  } catch (e) {
    throw new InvalidArgumentError('tls.key', `'${options.key}' is not a PEM private key: ${(e as Error).message}`);
  }
  try {
    tls.createSecureContext({ cert, key });
  } catch (e) {
    throw new InvalidArgumentError(
      'tls.key',
      `the key in '${options.key}' does not go with the certificate in '${options.cert}': ${(e as Error).message}`,
    );
  }
  return { mode: options.mode ?? 'enforcing', cert, key };
}
