/**
 * The clients' `tls` option: what it resolves to, what it refuses (with the option named), and how a
 * failed handshake is told apart and worded (tls-options.ts).
 */
import { InvalidArgumentError, TransportError } from '../../../../src/common/errors.js';
import { resolveProducerOptions } from '../../../../src/client/producer/producer-options.js';
import { AdminClient } from '../../../../src/client/admin/admin-client.js';
import { TlsError, isTlsFailure, tlsHandshakeError } from '../../../../src/remoting/tls-options.js';

const ns = { namesrvAddr: '127.0.0.1:9876', producerGroup: 'g' };

test('true stands for the default options, false and absence for none, an object is kept', () => {
  expect(resolveProducerOptions({ ...ns, tls: true }).tls).toEqual({});
  expect(resolveProducerOptions({ ...ns, tls: false }).tls).toBeUndefined();
  expect(resolveProducerOptions(ns).tls).toBeUndefined();
  const tls = { ca: '-----BEGIN CERTIFICATE-----', servername: 'mq', rejectUnauthorized: false };
  expect(resolveProducerOptions({ ...ns, tls }).tls).toEqual(tls);
  expect(resolveProducerOptions({ endpoints: 'https://127.0.0.1:8081', producerGroup: 'g', tls: true }).tls).toEqual(
    {},
  );
});

test('a tls value of the wrong shape, an unknown TLS option or an http:// endpoint is refused, naming what is wrong', () => {
  const refused = (options: unknown): InvalidArgumentError => {
    try {
      resolveProducerOptions(options as Parameters<typeof resolveProducerOptions>[0]);
    } catch (e) {
      expect(e).toBeInstanceOf(InvalidArgumentError);
      return e as InvalidArgumentError;
    }
    throw new Error('accepted');
  };
  expect(refused({ ...ns, tls: 'yes' }).field).toMatch(/^tls/);
  // An unknown key is named by itself, as everywhere in the options.
  expect(refused({ ...ns, tls: { ciphers: 'NULL' } }).field).toBe('ciphers');
  expect(refused({ ...ns, tls: { rejectUnauthorized: 'no' } }).field).toMatch(/^tls/);
  const plain = refused({ endpoints: ['https://a:1', 'http://b:2'], producerGroup: 'g', tls: true });
  expect(plain.field).toBe('tls');
  expect(plain.message).toContain('http://b:2');
  expect(() => new AdminClient({ endpoints: 'http://127.0.0.1:1', tls: true })).toThrow(InvalidArgumentError);
});

test('certificate and TLS-layer failures are TLS failures; a refused TCP connect is not', () => {
  expect(
    isTlsFailure(Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' })),
  ).toBe(true);
  expect(isTlsFailure(Object.assign(new Error('wrong version'), { code: 'ERR_SSL_WRONG_VERSION_NUMBER' }))).toBe(true);
  expect(isTlsFailure(Object.assign(new Error('altname'), { code: 'ERR_TLS_CERT_ALTNAME_INVALID' }))).toBe(true);
  expect(isTlsFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }))).toBe(false);
  expect(isTlsFailure(undefined)).toBe(false);
});

test('a handshake error names the address, keeps the TLS code, and hints at a port without TLS when that is likely', () => {
  const cert = tlsHandshakeError(
    '10.0.0.5:9876',
    Object.assign(new Error('self-signed certificate'), { code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }),
  );
  expect(cert).toBeInstanceOf(TlsError);
  expect(cert).toBeInstanceOf(TransportError);
  expect(cert.code).toBe('ERR_TRANSPORT');
  expect(cert.retriable).toBe(true);
  expect(cert.address).toBe('10.0.0.5:9876');
  expect(cert.tlsCode).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  expect(cert.message).toBe('TLS handshake with 10.0.0.5:9876 failed: self-signed certificate');
  const reset = tlsHandshakeError('10.0.0.5:9876', Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }));
  expect(reset.message).toMatch(/is the server listening with TLS on that port\?/);
  expect(tlsHandshakeError('h:1', null).message).toBe(
    'TLS handshake with h:1 failed: the server closed the connection (is the server listening with TLS on that port?)',
  );
});
