import { consoleLogger, defaultLogger } from '../../../src/common/env-logger.js';
import { silentLogger } from '../../../src/common/logger.js';

test('ROCKETMQ_TS_LOG unset or off gives the silent logger; a level gives a console logger', () => {
  for (const v of [undefined, '', '0', 'false', 'silent', 'off']) expect(defaultLogger(v)).toBe(silentLogger);
  for (const v of ['1', 'true', 'debug', 'warn']) expect(defaultLogger(v)).not.toBe(silentLogger);
});

test('the console logger writes one line per record at or above its level, with the fields as JSON', () => {
  const lines: string[] = [];
  const log = consoleLogger('info', (l) => lines.push(l));
  log.debug({ a: 1 }, 'hidden');
  log.info({ topic: 'T', err: new Error('boom') }, 'sent');
  log.warn('plain text');
  expect(lines).toHaveLength(2);
  expect(lines[0]).toMatch(/^\S+Z INFO \[rocketmq-ts\] sent {"topic":"T","err":{"name":"Error","message":"boom"}}\n$/);
  expect(lines[1]).toMatch(/WARN \[rocketmq-ts\] plain text\n$/);
});
