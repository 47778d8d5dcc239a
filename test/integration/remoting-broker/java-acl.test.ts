/**
 * RocketMQ's own Java client (4.9.8, signing with AclClientRPCHook) and `mqadmin` (signing with the
 * kit's RMQ_ACCESS_KEY / RMQ_SECRET_KEY) against the bundled broker started with a plain_acl.yml: the
 * right credentials send and consume; no credentials, a wrong secret, a DENY topic, a SUB-only account
 * sending and a non-admin updateTopic are each refused with RocketMQ's AclException text; mqadmin's
 * updateAclConfig, clusterAclConfigVersion and deleteAclConfig change and read the file. One JVM serves
 * the client cases (Driver.java); skipped with one line when Java or the kit is missing.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { parsePlainAclConfig } from '../../../src/broker/acl/plain-acl-config.js';
import { Broker } from '../../../src/broker/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { tempStorePath } from '../../support/broker-fixture.js';
import {
  DRIVER_SOURCE,
  JavaDriver,
  compileJava,
  describeWithJava,
  javaKit,
  waitUntil,
} from '../../support/java-client.js';

const run = promisify(execFile);

const ACL_FILE = `globalWhiteRemoteAddresses: []
accounts:
  - accessKey: appUser1
    secretKey: appSecret1
    admin: false
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
    topicPerms:
      - DeniedTopic=DENY
  - accessKey: readOnly1
    secretKey: readSecret1
    defaultTopicPerm: SUB
    defaultGroupPerm: SUB
  - accessKey: adminUser1
    secretKey: adminSecret1
    admin: true
`;

describeWithJava('RocketMQ Java client and mqadmin against the bundled broker with plain ACL', () => {
  let classes: string;
  let dir: string;
  let aclFile: string;
  let storePath: string;
  let broker: Broker;
  let java: JavaDriver;
  let ns: string;
  const topic = uniqueName('AclJ');

  /** The kit's mqadmin in a JVM of its own, signing with `creds` when given; its output (it exits 0 on failure). */
  const mqadmin = async (creds: [string, string] | undefined, ...args: string[]): Promise<string> => {
    const kit = javaKit()!;
    const env: NodeJS.ProcessEnv = { ...process.env, RMQ_CLIENT_DIR: path.join(dir, 'mqadmin') };
    delete env.RMQ_ACCESS_KEY;
    delete env.RMQ_SECRET_KEY;
    if (creds) [env.RMQ_ACCESS_KEY, env.RMQ_SECRET_KEY] = creds;
    const r = await run(path.join(kit.dir, 'bin', 'mqadmin'), [...args, '-n', ns], { env, timeout: 120_000 });
    return `${r.stdout}\n${r.stderr}`;
  };

  beforeAll(async () => {
    const kit = javaKit();
    if (!kit) return;
    classes = compileJava(kit, [DRIVER_SOURCE]);
    dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-java-acl-'));
    aclFile = path.join(dir, 'plain_acl.yml');
    writeFileSync(aclFile, ACL_FILE);
    storePath = tempStorePath('rmq-java-acl-');
    broker = await Broker.start({ storePath, port: 0, remotingPort: 0, aclFile });
    ns = broker.remotingAddress as string;
    java = await JavaDriver.start(kit, classes);
  }, 90_000);

  afterAll(async () => {
    await java?.close();
    await broker?.shutdown();
    if (storePath) rmSync(storePath, { recursive: true, force: true });
    if (dir) rmSync(dir, { recursive: true, force: true });
    if (classes) rmSync(classes, { recursive: true, force: true });
  }, 60_000);

  test('mqadmin: an admin account creates a topic; a non-admin account and no credentials are refused', async () => {
    const created = await mqadmin(['adminUser1', 'adminSecret1'], 'updateTopic', '-c', 'DefaultCluster', '-t', topic);
    expect(created).toContain(`create topic to ${ns} success.`);
    expect(broker.topicConfigManager.selectTopicConfig(topic)).toBeDefined();

    const other = uniqueName('AclJ');
    const refused = await mqadmin(['appUser1', 'appSecret1'], 'updateTopic', '-c', 'DefaultCluster', '-t', other);
    expect(refused).toContain('Need admin permission for request code=17, but accessKey=appUser1 is not');
    const unsigned = await mqadmin(undefined, 'updateTopic', '-c', 'DefaultCluster', '-t', other);
    expect(unsigned).toContain('AclException: No accessKey is configured');
    expect(broker.topicConfigManager.selectTopicConfig(other)).toBeUndefined();
  }, 300_000);

  test('mqadmin: updateAclConfig, clusterAclConfigVersion and deleteAclConfig with an admin account; a non-admin is refused', async () => {
    const admin: [string, string] = ['adminUser1', 'adminSecret1'];
    const accounts = () => parsePlainAclConfig(readFileSync(aclFile, 'utf8')).accounts;
    const created = await mqadmin(
      admin,
      'updateAclConfig',
      '-b',
      ns,
      '-a',
      'javaUser01',
      '-s',
      'javaSecret01',
      '-i',
      'PUB',
      '-u',
      'SUB',
      '-t',
      'TopicJ1=SUB',
      '-m',
      'false',
    );
    expect(created).toContain(`create or update plain access config to ${ns} success.`);
    expect(accounts().get('javaUser01')?.resourcePerms?.get('TopicJ1')).toBe(8);

    const refused = await mqadmin(
      ['appUser1', 'appSecret1'],
      'updateAclConfig',
      '-b',
      ns,
      '-a',
      'appUser1',
      '-s',
      'appSecret1',
      '-m',
      'true',
    );
    expect(refused).toContain('Need admin permission for request code=50, but accessKey=appUser1 is not');
    expect(accounts().get('appUser1')?.admin).toBe(false);

    const versions = await mqadmin(admin, 'clusterAclConfigVersion', '-c', 'DefaultCluster');
    expect(versions).toContain(path.resolve(aclFile));
    expect(versions).toMatch(new RegExp(`DefaultCluster\\s+broker-a\\s+\\S+\\s+\\S+\\s+1\\s`));
    expect(versions).toContain("get cluster's plain access config version success.");

    const deleted = await mqadmin(admin, 'deleteAclConfig', '-b', ns, '-a', 'javaUser01');
    expect(deleted).toContain(`delete plain access config account from ${ns} success.`);
    expect(accounts().has('javaUser01')).toBe(false);
  }, 300_000);

  test('Java client: the right credentials send and consume', async () => {
    await java.command('producer', 'JP-ok', ns, 'ak=appUser1', 'sk=appSecret1');
    const sent = await java.command('send', 'JP-ok', topic, 'TagA', 'k1', 'acl-hello');
    expect(sent.status).toBe('SEND_OK');
    const group = uniqueName('AclG');
    await java.command('consumer', 'JC-ok', ns, group, topic, 'tag', '*', 'ok', '16', 'ak=readOnly1', 'sk=readSecret1');
    await waitUntil(
      () => java.messages.some((m) => m.c === 'JC-ok' && m.body === 'acl-hello'),
      60_000,
      () => java.log,
    );
    await java.command('stop', 'JC-ok');
  }, 120_000);

  test.each([
    ['no credentials', [], topic, 'AclException: No accessKey is configured'],
    ['a wrong secret', ['ak=appUser1', 'sk=wrongSecret'], topic, 'Check signature failed for accessKey=appUser1'],
    ['a DENY topic', ['ak=appUser1', 'sk=appSecret1'], 'DeniedTopic', 'No default permission for topic:DeniedTopic'],
    ['a SUB-only account', ['ak=readOnly1', 'sk=readSecret1'], topic, `No default permission for topic:${topic}`],
  ])(
    'Java client: %s is refused',
    async (_case, creds, target, message) => {
      const name = uniqueName('JP');
      await java.command('producer', name, ns, ...creds);
      try {
        await expect(java.command('send', name, target, 'TagA', '', 'refused')).rejects.toThrow(message);
      } finally {
        await java.command('stop', name);
      }
    },
    120_000,
  );
});
