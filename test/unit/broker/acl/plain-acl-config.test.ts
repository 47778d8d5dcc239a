import { AclConfigError, Perm, parsePlainAclConfig } from '../../../../src/broker/acl/plain-acl-config.js';

/** RocketMQ 4.9.8's distribution/conf/plain_acl.yml, word for word in what it sets. */
const DISTRIBUTION = `globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
    groupPerms:
      # the group should convert to retry topic
      - groupA=DENY
      - groupB=PUB|SUB
      - groupC=SUB

  - accessKey: rocketmq2
    secretKey: 12345678
    whiteRemoteAddress: 192.168.1.*
    # if it is admin, it could access all resources
    admin: true
`;

function lineOf(text: string): number {
  try {
    parsePlainAclConfig(text);
  } catch (e) {
    expect(e).toBeInstanceOf(AclConfigError);
    return (e as AclConfigError).line;
  }
  throw new Error('the file was accepted');
}

describe('plain_acl.yml loader', () => {
  it("reads every field of RocketMQ's own example", () => {
    const c = parsePlainAclConfig(DISTRIBUTION);
    expect(c.globalWhiteRemoteAddresses).toHaveLength(2);
    expect(c.globalWhiteRemoteAddresses[0]!('10.10.103.4')).toBe(true);
    expect(c.globalWhiteRemoteAddresses[1]!('192.168.0.9')).toBe(true);
    const a = c.accounts.get('RocketMQ')!;
    // A number in YAML is the key as written.
    expect(a.secretKey).toBe('12345678');
    expect(a.admin).toBe(false);
    expect(a.whiteRemoteAddress('10.0.0.1')).toBe(false);
    expect(a.defaultTopicPerm).toBe(Perm.DENY);
    expect(a.defaultGroupPerm).toBe(Perm.SUB);
    expect(Object.fromEntries(a.resourcePerms!)).toEqual({
      topicA: Perm.DENY,
      topicB: Perm.PUB | Perm.SUB,
      topicC: Perm.SUB,
      '%RETRY%groupA': Perm.DENY,
      '%RETRY%groupB': Perm.PUB | Perm.SUB,
      '%RETRY%groupC': Perm.SUB,
    });
    const admin = c.accounts.get('rocketmq2')!;
    expect(admin.admin).toBe(true);
    expect(admin.whiteRemoteAddress('192.168.1.20')).toBe(true);
    // No default permission is DENY; no lists at all is no map (an admin then passes everything).
    expect(admin.defaultTopicPerm).toBe(Perm.DENY);
    expect(admin.resourcePerms).toBeUndefined();
  });

  it('SUB|PUB is PUB|SUB, empty lists are no lists, dataVersion is accepted', () => {
    const c = parsePlainAclConfig(
      'dataVersion:\n  - counter: 1\n    timestamp: 1\naccounts:\n  - accessKey: account1\n    secretKey: secret12\n    defaultTopicPerm: SUB|PUB\n    topicPerms: []\n',
    );
    const a = c.accounts.get('account1')!;
    expect(a.defaultTopicPerm).toBe(Perm.PUB | Perm.SUB);
    expect(a.resourcePerms).toBeUndefined();
  });

  it('an empty file has no accounts', () => {
    expect(parsePlainAclConfig('').accounts.size).toBe(0);
    expect(parsePlainAclConfig('# nothing yet\n').accounts.size).toBe(0);
  });

  it('names the line of each mistake', () => {
    const account = (extra: string): string => `accounts:\n  - accessKey: account1\n    secretKey: secret12\n${extra}`;
    expect(lineOf('accounts:\n  - accessKey: [a\n')).toBeGreaterThanOrEqual(2);
    expect(lineOf('accounts:\n  - accessKey: account1\n')).toBe(2);
    expect(lineOf('accounts:\n  - accessKey: account1\n    secretKey: short\n')).toBe(3);
    expect(lineOf('accounts:\n  - secretKey: secret12\n')).toBe(2);
    expect(lineOf('accounts:\n  - accessKey: abc\n    secretKey: secret12\n')).toBe(2);
    expect(lineOf(account('    defaultTopicPerm: READ\n'))).toBe(4);
    expect(lineOf(account('    topicPerms:\n      - t1=PUB\n      - t2\n'))).toBe(6);
    expect(lineOf(account('    groupPerms:\n      - g1=ALL\n'))).toBe(5);
    expect(lineOf(account('    whiteRemoteAddress: 300.1.1.1\n'))).toBe(4);
    expect(lineOf(account('    admin: yes please\n'))).toBe(4);
    expect(lineOf(account('    topicPerm:\n      - t1=PUB\n'))).toBe(4);
    expect(lineOf(account('    topicPerms: t1=PUB\n'))).toBe(4);
    expect(lineOf(`${account('')}  - accessKey: account1\n    secretKey: secret34\n`)).toBe(4);
    expect(lineOf('globalWhiteRemoteAddresses:\n  - 10.0.0.1\n  - 10.0.0.x\n')).toBe(3);
    expect(lineOf('accountz: []\n')).toBe(1);
    expect(lineOf('- just a list\n')).toBe(1);
    expect(lineOf('accounts: 5\n')).toBe(1);
  });

  it('never puts a secret in an error', () => {
    try {
      parsePlainAclConfig('accounts:\n  - accessKey: account1\n    secretKey: sixsix\n');
      throw new Error('accepted');
    } catch (e) {
      expect((e as Error).message).not.toContain('sixsix');
      expect((e as Error).message).toMatch(/line 3: the account account1 needs a secretKey/);
    }
  });
});
