import { jest } from '@jest/globals';
import { publicRemark } from '../../../src/broker/remoting/public-remark.js';

const logger = {
  error: jest.fn(),
  warn: jest.fn(),
  info: jest.fn(),
  debug: jest.fn(),
  trace: jest.fn(),
  fatal: jest.fn(),
};

test('a remark naming a file-system path is replaced by a generic one that keeps the error code', () => {
  const raw = "ENOSPC: no space left on device, write '/tmp/rmq-store-x/commitlog/00000000000000000000'";
  const out = publicRemark(raw, logger as never, {});
  expect(out).toBe('system error (ENOSPC), details in the broker log');
  expect(out).not.toContain('/tmp');
  expect(logger.error).toHaveBeenCalled();
  expect(publicRemark('EACCES C:\\data\\store\\commitlog', logger as never, {})).not.toContain('C:\\');
});

test('other remarks are left as they are', () => {
  for (const r of [
    'bad header field <topic>: required',
    '[OVERLOAD]system busy, start flow control for a while',
    'topic %RETRY%g-1 not exist, apply first please!',
    'sysFlag 0x8 has bits 1/2 this broker does not accept',
  ])
    expect(publicRemark(r, logger as never, {})).toBe(r);
});
