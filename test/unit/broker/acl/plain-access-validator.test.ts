import { parsePlainAclConfig } from '../../../../src/broker/acl/plain-acl-config.js';
import { checkAccess, requestResources } from '../../../../src/broker/acl/plain-access-validator.js';
import { signExtFields } from '../../../../src/remoting/acl-signature.js';

const config = parsePlainAclConfig(`globalWhiteRemoteAddresses:
  - 10.10.103.*
accounts:
  - accessKey: appUser1
    secretKey: appSecret1
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - TopicPub=PUB
      - TopicSub=SUB
      - TopicBoth=PUB|SUB
      - TopicDeny=DENY
    groupPerms:
      - GroupDeny=DENY
  - accessKey: adminUser
    secretKey: adminSecret
    admin: true
  - accessKey: whiteUser
    secretKey: whiteSecret
    whiteRemoteAddress: 192.168.7.*
`);

const USER = { accessKey: 'appUser1', secretKey: 'appSecret1' };
const ADMIN = { accessKey: 'adminUser', secretKey: 'adminSecret' };
const FROM = '127.0.0.1:50000';

const check = (
  code: number,
  fields: Record<string, string>,
  creds: { accessKey: string; secretKey: string } | null = USER,
  body: Buffer | null = null,
  from = FROM,
) =>
  checkAccess(config, {
    code,
    fields: creds ? signExtFields(fields, body, creds) : fields,
    body,
    remoteAddress: from,
  });

const ACL = 'org.apache.rocketmq.acl.common.AclException';

describe('plain ACL validator (PlainAccessValidator / PlainPermissionManager)', () => {
  it('lets a signed request with the permission through', () => {
    expect(check(310, { a: 'pg', b: 'TopicPub' })).toBeUndefined();
    expect(check(10, { producerGroup: 'pg', topic: 'TopicBoth' })).toBeUndefined();
    expect(check(11, { consumerGroup: 'cg', topic: 'TopicSub' })).toBeUndefined();
  });

  it('refuses what RocketMQ refuses, with its code and remark', () => {
    expect(check(310, { a: 'pg', b: 'TopicPub' }, null)).toEqual({
      code: 1,
      remark: `${ACL}: No accessKey is configured, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:664)`,
    });
    expect(check(310, { a: 'pg', b: 'TopicPub' }, { accessKey: 'nobody1', secretKey: 'x' })?.remark).toBe(
      `${ACL}: No acl config for nobody1, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:668)`,
    );
    expect(check(310, { a: 'pg', b: 'TopicPub' }, { accessKey: 'appUser1', secretKey: 'wrong' })?.remark).toBe(
      `${ACL}: Check signature failed for accessKey=appUser1, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:684)`,
    );
    expect(check(310, { a: 'pg', b: 'TopicDeny' })?.remark).toBe(
      `${ACL}: No default permission for topic:TopicDeny, org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:611)`,
    );
    expect(check(310, { a: 'pg', b: 'TopicSub' })?.remark).toContain('No default permission for topic:TopicSub');
    expect(check(310, { a: 'pg', b: 'Unlisted' })?.remark).toBe(
      `${ACL}: No default permission for topic:Unlisted, org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:606)`,
    );
    expect(check(11, { consumerGroup: 'cg', topic: 'TopicPub' })?.remark).toContain('topic:TopicPub');
  });

  it('a missing signature, one of the wrong length and a changed body are refused, never thrown', () => {
    const signed = signExtFields({ a: 'pg', b: 'TopicPub' }, Buffer.from('hello'), USER);
    const base = { code: 310, remoteAddress: FROM };
    expect(checkAccess(config, { ...base, fields: signed, body: Buffer.from('hello') })).toBeUndefined();
    expect(checkAccess(config, { ...base, fields: signed, body: Buffer.from('hellO') })?.remark).toContain(
      'Check signature failed for accessKey=appUser1',
    );
    const { Signature: _, ...unsigned } = signed;
    expect(checkAccess(config, { ...base, fields: unsigned, body: Buffer.from('hello') })?.remark).toContain(
      'Check signature failed',
    );
    for (const bad of ['', 'AA==', `${signed.Signature}AAAA`, '\u0000'.repeat(28)]) {
      expect(
        checkAccess(config, { ...base, fields: { ...signed, Signature: bad }, body: Buffer.from('hello') })?.remark,
      ).toContain('Check signature failed');
    }
    expect(checkAccess(config, { ...base, fields: null, body: null })?.remark).toContain('No accessKey is configured');
  });

  it('groups are checked as their retry topics; sends to a retry topic need SUB on the group', () => {
    expect(check(11, { consumerGroup: 'GroupDeny', topic: 'TopicSub' })?.remark).toContain(
      'No default permission for group:GroupDeny',
    );
    expect(check(36, { group: 'GroupDeny' })?.remark).toContain('group:GroupDeny');
    expect(check(36, { group: 'cg' })).toBeUndefined();
    expect(check(310, { a: 'cg', b: '%RETRY%cg' })).toBeUndefined();
    expect(check(310, { a: 'GroupDeny', b: '%RETRY%GroupDeny' })?.remark).toContain('group:GroupDeny');
    expect(check(15, { consumerGroup: 'cg', topic: 'TopicDeny' })?.remark).toContain('topic:TopicDeny');
    expect(check(35, { consumerGroup: 'GroupDeny', clientID: 'c' })?.remark).toContain('group:GroupDeny');
    expect(check(38, { consumerGroup: 'GroupDeny' })?.remark).toContain('group:GroupDeny');
  });

  it("reads a heartbeat's consumer groups and subscriptions from its body", () => {
    const body = (group: string, topic: string): Buffer =>
      Buffer.from(
        JSON.stringify({
          clientID: 'c1',
          producerDataSet: [{ groupName: 'pg' }],
          consumerDataSet: [{ groupName: group, subscriptionDataSet: [{ topic, subString: '*' }] }],
        }),
      );
    expect(check(34, {}, USER, body('cg', 'TopicSub'))).toBeUndefined();
    expect(check(34, {}, USER, body('cg', 'TopicPub'))?.remark).toContain('topic:TopicPub');
    expect(check(34, {}, USER, body('GroupDeny', 'TopicSub'))?.remark).toContain('group:GroupDeny');
    // fastjson's unquoted numeric keys are read as RocketMQ writes them
    const resources = requestResources(
      34,
      {},
      Buffer.from('{"consumerDataSet":[{"groupName":"g","subscriptionDataSet":[{"topic":"t"}]}],1:2}'),
    );
    expect([...resources.keys()]).toEqual(['%RETRY%g', 't']);
    expect(check(34, {}, USER, Buffer.from('{not json'))).toMatchObject({
      code: 1,
      remark: expect.stringMatching(/^org\.apache\.rocketmq\.acl\.common\.AclException: .*PlainAccessValidator\.parse/),
    });
  });

  it('SEND_MESSAGE_V2 and SEND_BATCH_MESSAGE are read by their short keys, HTTP names too', () => {
    expect([...requestResources(310, { a: 'pg', b: 'T1' }, null)]).toEqual([['T1', 4]]);
    expect([...requestResources(320, { a: 'pg', b: 'T2' }, null)]).toEqual([['T2', 4]]);
    expect([...requestResources(320, { producerGroup: 'pg', topic: 'T3' }, null)]).toEqual([['T3', 4]]);
  });

  it('admin-only codes are refused to other accounts; an admin without lists may do anything', () => {
    for (const code of [17, 25, 200, 207, 215]) {
      expect(check(code, { topic: 'TopicBoth' })?.remark).toBe(
        `${ACL}: Need admin permission for request code=${code}, but accessKey=appUser1 is not, org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:581)`,
      );
      expect(check(code, { topic: 'TopicBoth' }, ADMIN)).toBeUndefined();
    }
    expect(check(310, { a: 'pg', b: 'Anything' }, ADMIN)).toBeUndefined();
    // Codes RocketMQ does not list need only a valid signature.
    expect(check(30, { topic: 'TopicDeny', queueId: '0' })).toBeUndefined();
    expect(check(30, { topic: 'TopicDeny', queueId: '0' }, null)?.remark).toContain('No accessKey');
  });

  it('white addresses: global ones skip every check, an account one skips signature and permissions', () => {
    expect(check(17, {}, null, null, '10.10.103.9:1234')).toBeUndefined();
    expect(check(17, {}, null, null, '::ffff:10.10.103.9:1234')).toBeUndefined();
    expect(
      checkAccess(config, {
        code: 310,
        fields: { AccessKey: 'whiteUser', b: 'X' },
        body: null,
        remoteAddress: '192.168.7.3:9',
      }),
    ).toBeUndefined();
    expect(
      checkAccess(config, {
        code: 310,
        fields: { AccessKey: 'whiteUser', b: 'X' },
        body: null,
        remoteAddress: '192.168.8.3:9',
      })?.remark,
    ).toContain('Check signature failed for accessKey=whiteUser');
  });

  it('message traces may be published without a topic permission; route lookups need no signature', () => {
    expect(check(310, { a: 'pg', b: 'RMQ_SYS_TRACE_TOPIC' })).toBeUndefined();
    expect(check(105, { topic: 'TopicDeny' }, null)).toBeUndefined();
    expect(check(106, {}, null)).toBeUndefined();
  });

  it('never names a secret in a remark', () => {
    const r = check(310, { a: 'pg', b: 'TopicDeny' }, { accessKey: 'appUser1', secretKey: 'appSecret1' });
    expect(JSON.stringify(r)).not.toContain('appSecret1');
  });
});
