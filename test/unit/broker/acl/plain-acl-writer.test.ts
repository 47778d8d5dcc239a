import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync, type Stats } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AclGuard } from '../../../../src/broker/acl/acl-guard.js';
import { parsePlainAclConfig } from '../../../../src/broker/acl/plain-acl-config.js';
import {
  AclChangeError,
  deleteAccount,
  readDataVersion,
  rewriteAclFile,
  setGlobalWhiteAddrs,
  upsertAccount,
} from '../../../../src/broker/acl/plain-acl-writer.js';
import type { Logger } from '../../../../src/common/logger.js';

const quiet: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

const START = `# kept
globalWhiteRemoteAddresses:
  - 10.0.0.1
accounts:
  - accessKey: appUser1
    secretKey: appSecret1
    defaultTopicPerm: PUB   # trailing comment
    topicPerms:
      - T1=SUB
`;

describe('plain_acl.yml rewriting', () => {
  let dir: string;
  let file: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-aclw-'));
    file = path.join(dir, 'plain_acl.yml');
    writeFileSync(file, START, { mode: 0o640 });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('updates an account in place, keeping its other fields, the comments and the file mode', () => {
    const done = rewriteAclFile(
      file,
      START,
      upsertAccount({ accessKey: 'appUser1', secretKey: '12345678', admin: true, defaultGroupPerm: 'SUB' }),
      1000,
    );
    expect(done?.version).toEqual({ counter: 1, timestamp: 1000 });
    const text = readFileSync(file, 'utf8');
    expect(text).toContain('# kept');
    expect(text).toContain('# trailing comment');
    const account = parsePlainAclConfig(text).accounts.get('appUser1');
    expect(account?.secretKey).toBe('12345678');
    expect(account?.admin).toBe(true);
    expect(account?.defaultTopicPerm).toBe(4);
    expect(account?.resourcePerms?.get('T1')).toBe(8);
    expect(statSync(file).mode & 0o777).toBe(0o640);
    expect(readDataVersion(text, 0)).toEqual({ counter: 1, timestamp: 1000 });
  });

  it('adds to an empty file, deletes, sets the white list; a change with nothing to do writes nothing', () => {
    writeFileSync(file, '');
    rewriteAclFile(file, '', upsertAccount({ accessKey: 'newUser1', secretKey: 'newSecret1', admin: false }), 5);
    expect([...parsePlainAclConfig(readFileSync(file, 'utf8')).accounts.keys()]).toEqual(['newUser1']);
    const text = readFileSync(file, 'utf8');
    expect(rewriteAclFile(file, text, deleteAccount('nobody01'), 6)).toBeUndefined();
    expect(readFileSync(file, 'utf8')).toBe(text);
    rewriteAclFile(file, text, deleteAccount('newUser1'), 7);
    rewriteAclFile(file, readFileSync(file, 'utf8'), setGlobalWhiteAddrs(['192.168.1.*']), 8);
    const config = parsePlainAclConfig(readFileSync(file, 'utf8'));
    expect(config.accounts.size).toBe(0);
    expect(config.globalWhiteRemoteAddresses[0]?.('192.168.1.9')).toBe(true);
    expect(readDataVersion(readFileSync(file, 'utf8'), 0).counter).toBe(3);
  });

  it('refuses a value the loader refuses, leaving the file as it was', () => {
    expect(() =>
      rewriteAclFile(
        file,
        START,
        upsertAccount({ accessKey: 'appUser1', secretKey: 'appSecret1', admin: false, defaultTopicPerm: 'ALL' }),
        1,
      ),
    ).toThrow(AclChangeError);
    expect(readFileSync(file, 'utf8')).toBe(START);
  });

  it("the guard puts a change in force and its poller does not take the guard's own write for a foreign one", () => {
    const guard = AclGuard.open(file, quiet, { pollIntervalMs: 60_000 });
    try {
      guard.updateAccount({ accessKey: 'newUser1', secretKey: 'newSecret1', admin: false, defaultTopicPerm: 'PUB' });
      expect(guard.dataVersion.counter).toBe(1);
      // What the poller does on its next tick, done now so the test does not wait on a timer.
      const internals = guard as unknown as {
        onStat(err: Error | null, st: Stats | undefined): void;
        timer: ReturnType<typeof setTimeout> | undefined;
      };
      internals.onStat(null, statSync(file));
      expect(internals.timer).toBeUndefined();
      expect(guard.deleteAccount('newUser1')).toBe(true);
      expect(guard.deleteAccount('newUser1')).toBe(false);
      internals.onStat(null, statSync(file));
      expect(internals.timer).toBeUndefined();
      expect(guard.reloads).toBe(0);
    } finally {
      guard.close();
    }
  });
});
