/**
 * mqadmin's ACL administration over TCP (UPDATE_AND_CREATE_ACL_CONFIG, DELETE_ACL_CONFIG,
 * GET_BROKER_CLUSTER_ACL_INFO, UPDATE_GLOBAL_WHITE_ADDRS_CONFIG): the file rewritten, the change in force
 * for the next request, only an admin heard, bad values refused, and a broker without ACL saying so.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parsePlainAclConfig } from '../../../src/broker/acl/plain-acl-config.js';
import { RequestCode, ResponseCode } from '../../../src/protocol/index.js';
import type { AclCredentials } from '../../../src/remoting/acl-signature.js';
import { uniqueName } from '../../support/broker-client.js';
import { sendV2, useAclBroker } from '../../support/acl-broker.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

const APP: AclCredentials = { accessKey: 'appUser1', secretKey: 'appSecret1' };
const ADMIN: AclCredentials = { accessKey: 'adminUser1', secretKey: 'adminSecret1' };
const NEW: AclCredentials = { accessKey: 'newUser01', secretKey: 'newSecret01' };

const ACL_YAML = `# hand-written comment that must survive
globalWhiteRemoteAddresses: []
accounts:
  - accessKey: appUser1
    secretKey: appSecret1
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
  - accessKey: adminUser1
    secretKey: adminSecret1
    admin: true
`;

describe('broker ACL administration', () => {
  const acl = useAclBroker(ACL_YAML, 'rmq-aclops-it-');
  const tcp = (code: number, fields: Record<string, string>, creds?: AclCredentials, body?: Buffer) =>
    acl.tcp(code, fields, body ?? null, creds);
  const onDisk = () => parsePlainAclConfig(readFileSync(acl.aclFile, 'utf8'));
  const send = (topic: string, creds: AclCredentials) =>
    tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), creds, Buffer.from('x'));
  const info = async () => {
    const res = await tcp(RequestCode.GET_BROKER_CLUSTER_ACL_INFO, {}, ADMIN);
    expect(res.code).toBe(ResponseCode.SUCCESS);
    return res.extFields as Record<string, string | undefined>;
  };

  test('create: the new account is written beside the others and can send at once; update changes it', async () => {
    const before = JSON.parse((await info()).version as string) as { counter: number };
    const topic = uniqueName('AclOps');
    expect((await send(topic, NEW)).code).toBe(ResponseCode.SYSTEM_ERROR);

    const created = await tcp(
      RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
      {
        accessKey: NEW.accessKey,
        secretKey: NEW.secretKey,
        whiteRemoteAddress: '',
        defaultTopicPerm: 'DENY',
        defaultGroupPerm: 'SUB',
        admin: 'false',
        topicPerms: `${topic}=PUB,Other1=SUB`,
        groupPerms: 'G1=SUB',
      },
      ADMIN,
    );
    expect(created.code).toBe(ResponseCode.SUCCESS);
    expect((await send(topic, NEW)).code).toBe(ResponseCode.SUCCESS);
    expect((await send(uniqueName('AclOpsOther'), NEW)).code).toBe(ResponseCode.SYSTEM_ERROR);

    const text = readFileSync(acl.aclFile, 'utf8');
    expect(text).toContain('# hand-written comment that must survive');
    const disk = onDisk();
    expect([...disk.accounts.keys()]).toEqual([APP.accessKey, ADMIN.accessKey, NEW.accessKey]);
    expect(disk.accounts.get(NEW.accessKey)?.resourcePerms?.get(topic)).toBe(4);
    const after = JSON.parse((await info()).version as string) as { counter: number };
    expect(after.counter).toBe(before.counter + 1);

    // Update: the account may now send anywhere; its secret changes too.
    const updated = { ...NEW, secretKey: 'otherSecret02' };
    const res = await tcp(
      RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
      { accessKey: NEW.accessKey, secretKey: updated.secretKey, defaultTopicPerm: 'PUB', admin: 'false' },
      ADMIN,
    );
    expect(res.code).toBe(ResponseCode.SUCCESS);
    expect((await send(uniqueName('AclOpsAny'), updated)).code).toBe(ResponseCode.SUCCESS);
    expect((await send(topic, NEW)).code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(onDisk().accounts.get(NEW.accessKey)?.defaultTopicPerm).toBe(4);
    // Untouched fields stay.
    expect(onDisk().accounts.get(NEW.accessKey)?.defaultGroupPerm).toBe(8);
    expect(acl.logged.join('\n')).not.toContain('otherSecret02');
    expect(acl.logged.join('\n')).not.toContain(NEW.secretKey);
  });

  test('a created then deleted account leaves the file readable and no reload refused', async () => {
    const reloadsBefore = acl.logged.filter((l) => l.includes('not reloaded')).length;
    await tcp(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, { accessKey: 'tmpUser01', secretKey: 'tmpSecret01' }, ADMIN);
    expect(onDisk().accounts.has('tmpUser01')).toBe(true);
    const del = await tcp(RequestCode.DELETE_ACL_CONFIG, { accessKey: 'tmpUser01' }, ADMIN);
    expect(del.code).toBe(ResponseCode.SUCCESS);
    expect(onDisk().accounts.has('tmpUser01')).toBe(false);
    expect(acl.logged.filter((l) => l.includes('not reloaded')).length).toBe(reloadsBefore);
  });

  test('delete: the account is gone at once; deleting it again fails with DELETE_ACL_CONFIG_FAILED', async () => {
    await tcp(
      RequestCode.UPDATE_AND_CREATE_ACL_CONFIG,
      { accessKey: 'goneUser1', secretKey: 'goneSecret1', defaultTopicPerm: 'PUB' },
      ADMIN,
    );
    const gone: AclCredentials = { accessKey: 'goneUser1', secretKey: 'goneSecret1' };
    expect((await send(uniqueName('AclOpsDel'), gone)).code).toBe(ResponseCode.SUCCESS);
    expect((await tcp(RequestCode.DELETE_ACL_CONFIG, { accessKey: gone.accessKey }, ADMIN)).code).toBe(
      ResponseCode.SUCCESS,
    );
    const refused = await send(uniqueName('AclOpsDel'), gone);
    expect(refused.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(refused.remark).toContain('No acl config for goneUser1');
    const again = await tcp(RequestCode.DELETE_ACL_CONFIG, { accessKey: gone.accessKey }, ADMIN);
    expect(again.code).toBe(210);
    expect(again.remark).toBe('The accesskey[goneUser1] corresponding to accessConfig has been deleted failed.');
    expect([...onDisk().accounts.keys()]).toEqual(expect.arrayContaining([APP.accessKey, ADMIN.accessKey]));
  });

  test('global white addresses: written and in force (an unsigned request passes), then taken back', async () => {
    const topic = uniqueName('AclOpsWhite');
    const unsigned = () => tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), undefined, Buffer.from('x'));
    expect((await unsigned()).code).toBe(ResponseCode.SYSTEM_ERROR);
    const set = await tcp(
      RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
      { globalWhiteAddrs: '10.10.10.1,127.0.0.1', aclFileFullPath: acl.aclFile },
      ADMIN,
    );
    expect(set.code).toBe(ResponseCode.SUCCESS);
    expect(onDisk().globalWhiteRemoteAddresses).toHaveLength(2);
    expect((await unsigned()).code).toBe(ResponseCode.SUCCESS);
    // Another file than the broker's is refused; the list stays.
    const other = await tcp(
      RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
      { globalWhiteAddrs: '', aclFileFullPath: path.join(acl.dir, 'other.yml') },
      ADMIN,
    );
    expect(other.code).toBe(211);
    // Emptied (as a blank value); the refusal comes back.
    const cleared = await tcp(
      RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
      { globalWhiteAddrs: '', aclFileFullPath: '' },
      ADMIN,
    );
    expect(cleared.code).toBe(ResponseCode.SUCCESS);
    expect(onDisk().globalWhiteRemoteAddresses).toHaveLength(0);
    expect((await unsigned()).code).toBe(ResponseCode.SYSTEM_ERROR);
  });

  test('the info answer: version, every file version, broker name, address and cluster', async () => {
    const h = await info();
    const version = JSON.parse(h.version as string) as { counter: number; timestamp: number };
    expect(version.counter).toBeGreaterThan(0);
    expect(version.timestamp).toBeGreaterThan(0);
    expect(JSON.parse(h.allAclFileVersion as string)).toEqual({ [path.resolve(acl.aclFile)]: version });
    expect(h.brokerName).toBe(acl.fx.broker.options.brokerName);
    expect(h.clusterName).toBe(acl.fx.broker.options.clusterName);
    expect(h.brokerAddr).toMatch(/:\d+$/);
  });

  test('a non-admin account is refused every ACL command, and the file is left alone', async () => {
    const before = readFileSync(acl.aclFile, 'utf8');
    for (const [code, fields] of [
      [RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, { accessKey: APP.accessKey, secretKey: APP.secretKey, admin: 'true' }],
      [RequestCode.DELETE_ACL_CONFIG, { accessKey: ADMIN.accessKey }],
      [RequestCode.GET_BROKER_CLUSTER_ACL_INFO, {}],
      [RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, { globalWhiteAddrs: '*', aclFileFullPath: '' }],
    ] as const) {
      const res = await tcp(code, fields, APP);
      expect(res.code).toBe(ResponseCode.SYSTEM_ERROR);
      expect(res.remark).toContain(`Need admin permission for request code=${code}, but accessKey=appUser1 is not`);
    }
    expect(readFileSync(acl.aclFile, 'utf8')).toBe(before);
  });

  test('bad values are refused with the FAILED code and a remark naming the value, never the secret', async () => {
    const before = readFileSync(acl.aclFile, 'utf8');
    const upd = (fields: Record<string, string>) => tcp(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, fields, ADMIN);
    const short = await upd({ accessKey: 'badUser01', secretKey: 'tiny' });
    expect(short.code).toBe(209);
    expect(short.remark).toContain('The accesskey[badUser01]');
    expect(short.remark).not.toContain('tiny');
    const perm = await upd({ accessKey: 'badUser01', secretKey: 'goodSecret01', defaultTopicPerm: 'WRITE' });
    expect(perm.code).toBe(209);
    expect(perm.remark).toContain('"WRITE" is not a permission');
    expect(perm.remark).not.toContain('goodSecret01');
    const topicPerm = await upd({ accessKey: 'badUser01', secretKey: 'goodSecret01', topicPerms: 'T1=ALL' });
    expect(topicPerm.code).toBe(209);
    expect(topicPerm.remark).toContain('topicPerms: "ALL" is not a permission');
    const address = await upd({ accessKey: 'badUser01', secretKey: 'goodSecret01', whiteRemoteAddress: '300.1.1.1' });
    expect(address.code).toBe(209);
    expect(address.remark).toContain('300.1.1.1');
    const white = await tcp(
      RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG,
      { globalWhiteAddrs: 'not-an-address', aclFileFullPath: '' },
      ADMIN,
    );
    expect(white.code).toBe(211);
    expect(white.remark).toContain('not-an-address');
    expect(readFileSync(acl.aclFile, 'utf8')).toBe(before);
    expect(acl.logged.join('\n')).not.toContain('goodSecret01');
  });
});

describe('broker ACL administration without an ACL file', () => {
  let fx: BrokerFixture;
  let remoting: RemotingTestClient;
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0 });
    remoting = await RemotingTestClient.connect(fx.broker.remotingAddress as string);
  });
  afterAll(async () => {
    await remoting?.close();
    await fx?.close();
  });

  test('each command says that ACL is not enabled', async () => {
    const cases = [
      [RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, { accessKey: NEW.accessKey, secretKey: NEW.secretKey }, 209],
      [RequestCode.DELETE_ACL_CONFIG, { accessKey: NEW.accessKey }, 210],
      [RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, { globalWhiteAddrs: '*', aclFileFullPath: '' }, 211],
      [RequestCode.GET_BROKER_CLUSTER_ACL_INFO, {}, ResponseCode.SYSTEM_ERROR],
    ] as const;
    for (const [code, fields, expected] of cases) {
      const res = await remoting.request(code, { ...fields });
      expect(res.code).toBe(expected);
      expect(res.remark).toContain('ACL is not enabled');
    }
  });
});
