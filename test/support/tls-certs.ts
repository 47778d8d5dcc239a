/**
 * Self-signed test certificates, made with the `openssl` command at test time into a temp dir (no key
 * is ever committed). `makeTestCert()` returns undefined when openssl is missing; `openSslMissing()`
 * says so in one line for the suites to skip.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

export interface TestCert {
  dir: string;
  /** Paths of the PEM files. */
  certFile: string;
  keyFile: string;
  /** Their contents (the certificate is its own CA: trust it with `ca: certPem`). */
  certPem: string;
  keyPem: string;
  remove(): void;
}

/** Null when openssl runs, else the reason it does not. */
export function openSslMissing(): string | null {
  const r = spawnSync('openssl', ['version'], { encoding: 'utf8' });
  return r.status === 0 ? null : 'no openssl on PATH (needed to make test certificates)';
}

/** A P-256 certificate for `localhost` and 127.0.0.1, valid for two days, with its key. */
export function makeTestCert(cn = 'localhost'): TestCert | undefined {
  if (openSslMissing()) return undefined;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  const r = spawnSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:prime256v1',
      '-nodes',
      '-keyout',
      keyFile,
      '-out',
      certFile,
      '-days',
      '2',
      '-subj',
      `/CN=${cn}`,
      '-addext',
      'subjectAltName=DNS:localhost,IP:127.0.0.1',
    ],
    { encoding: 'utf8' },
  );
  if (r.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`openssl could not make a test certificate: ${r.stderr}`);
  }
  return {
    dir,
    certFile,
    keyFile,
    certPem: readFileSync(certFile, 'utf8'),
    keyPem: readFileSync(keyFile, 'utf8'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
