import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AclGuard, httpHeaderFields } from '../../../../src/broker/acl/acl-guard.js';
import { InvalidArgumentError } from '../../../../src/common/errors.js';
import type { Logger } from '../../../../src/common/logger.js';
import { signExtFields } from '../../../../src/remoting/acl-signature.js';
import { waitFor } from '../../../support/broker-fixture.js';

const file = (perm: string): string =>
  `accounts:\n  - accessKey: appUser1\n    secretKey: appSecret1\n    defaultTopicPerm: ${perm}\n`;

function recordingLogger(): Logger & { errors: string[] } {
  const errors: string[] = [];
  return {
    errors,
    debug: () => undefined,
    info: () => undefined,
    warn: () => undefined,
    error: (obj: unknown, msg?: string) => errors.push(`${msg ?? ''} ${JSON.stringify(obj)}`),
  };
}

describe('AclGuard (the ACL file, watched)', () => {
  let dir: string;
  let guard: AclGuard | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-acl-'));
  });
  afterEach(() => {
    guard?.close();
    guard = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const send = (g: AclGuard) =>
    g.checkRemoting(
      310,
      signExtFields({ a: 'pg', b: 'TopicA' }, null, { accessKey: 'appUser1', secretKey: 'appSecret1' }),
      null,
      '127.0.0.1:1',
    );

  it('refuses a bad file at open with its path and line, and a missing one', () => {
    const p = path.join(dir, 'plain_acl.yml');
    writeFileSync(p, 'accounts:\n  - accessKey: appUser1\n    secretKey: appSecret1\n    defaultTopicPerm: ALL\n');
    expect(() => AclGuard.open(p, recordingLogger())).toThrow(InvalidArgumentError);
    expect(() => AclGuard.open(p, recordingLogger())).toThrow(`aclFile: ${p} line 4: defaultTopicPerm`);
    expect(() => AclGuard.open(path.join(dir, 'absent.yml'), recordingLogger())).toThrow(/cannot read .*ENOENT/);
  });

  it('takes a changed file, and keeps the old rules (logging the line) when the change is bad', async () => {
    const p = path.join(dir, 'plain_acl.yml');
    writeFileSync(p, file('DENY'));
    const logger = recordingLogger();
    guard = AclGuard.open(p, logger, { pollIntervalMs: 20, debounceMs: 10 });
    const g = guard;
    expect(send(g)?.remark).toContain('No default permission for topic:TopicA');
    writeFileSync(p, file('PUB|SUB'));
    await waitFor(() => g.reloads === 1, 20_000);
    expect(send(g)).toBeUndefined();
    writeFileSync(p, `${file('PUB')}  - accessKey: broken\n`);
    await waitFor(() => g.reloadFailures === 1, 20_000);
    expect(send(g)).toBeUndefined();
    expect(logger.errors.join('\n')).toMatch(/previous rules stay in force.*line 5/);
    expect(logger.errors.join('\n')).not.toContain('appSecret1');
  });

  it('stops watching on close', async () => {
    const p = path.join(dir, 'plain_acl.yml');
    writeFileSync(p, file('DENY'));
    const g = AclGuard.open(p, recordingLogger(), { pollIntervalMs: 20, debounceMs: 10 });
    // A guard still watching, polling as often: once it has re-read the file, the closed one would have too.
    const witness = AclGuard.open(p, recordingLogger(), { pollIntervalMs: 20, debounceMs: 10 });
    try {
      g.close();
      writeFileSync(p, file('PUB|SUB'));
      await waitFor(() => witness.reloads === 1, 20_000);
      expect(send(witness)).toBeUndefined();
      expect(g.reloads).toBe(0);
      expect(send(g)?.remark).toContain('No default permission for topic:TopicA');
      expect(g.reload()).toBe(false);
    } finally {
      witness.close();
    }
  });

  it('reads an HTTP header as the ext fields its signature covers', () => {
    expect(httpHeaderFields({ topic: 'T', queueId: 3, flag: true, none: null, props: { a: 1 } })).toEqual({
      topic: 'T',
      queueId: '3',
      flag: 'true',
      props: '{"a":1}',
    });
    expect(httpHeaderFields(null)).toEqual({});
  });
});
