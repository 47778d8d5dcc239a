/**
 * The broker with a plain_acl.yml: signed requests over both listeners, RocketMQ's refusals (code and
 * remark), a bad file refused at start, and an edit of the file taking effect while it runs.
 */
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { httpHeaderFields } from '../../../src/broker/acl/acl-guard.js';
import { Broker } from '../../../src/broker/index.js';
import { RequestCode, ResponseCode, encodeFrame } from '../../../src/protocol/index.js';
import { buildPullSysFlag } from '../../../src/protocol/pull-sys-flag.js';
import { signExtFields, type AclCredentials } from '../../../src/remoting/acl-signature.js';
import { parseAnswer, uniqueName } from '../../support/broker-client.js';
import { tempStorePath, waitFor } from '../../support/broker-fixture.js';
import { heartbeatBody } from '../../support/remoting-test-client.js';
import { sendV2, useAclBroker } from '../../support/acl-broker.js';
import { CLI_TEST_TIMEOUT_MS, listeningAddress, runCli } from '../../support/cli-process.js';
import { TestBrokerClient } from '../../support/broker-client.js';

const APP: AclCredentials = { accessKey: 'appUser1', secretKey: 'appSecret1' };
const READER: AclCredentials = { accessKey: 'readOnly1', secretKey: 'readSecret1' };
const ADMIN: AclCredentials = { accessKey: 'adminUser1', secretKey: 'adminSecret1' };

const aclYaml = (readerTopicPerm: string): string => `globalWhiteRemoteAddresses: []
accounts:
  - accessKey: appUser1
    secretKey: appSecret1
    defaultTopicPerm: PUB|SUB
    defaultGroupPerm: SUB
    topicPerms:
      - DeniedTopic=DENY
  - accessKey: readOnly1
    secretKey: readSecret1
    defaultTopicPerm: ${readerTopicPerm}
    defaultGroupPerm: SUB
  - accessKey: adminUser1
    secretKey: adminSecret1
    admin: true
`;

const ACL = 'org.apache.rocketmq.acl.common.AclException';

describe('broker with a plain ACL file', () => {
  const acl = useAclBroker(aclYaml('SUB'), 'rmq-acl-it-');
  const tcp = acl.tcp;

  /** An HTTP call whose header carries AccessKey and Signature over its fields as strings. */
  const http = async (
    command: string,
    header: Record<string, unknown>,
    body: Buffer | null,
    creds?: AclCredentials,
  ) => {
    const fields = creds ? signExtFields(httpHeaderFields(header), body, creds) : undefined;
    const signed = fields ? { ...header, AccessKey: fields.AccessKey, Signature: fields.Signature } : header;
    const res = await acl.fx.client.raw(`/v1/${command}`, { body: encodeFrame(signed, body ?? undefined) });
    return parseAnswer(res);
  };

  const httpSendHeader = (topic: string) => ({
    producerGroup: 'PG',
    topic,
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: 4,
    queueId: 0,
    sysFlag: 0,
    bornTimestamp: Date.now(),
    flag: 0,
  });

  test('remoting: the right credentials send; none, a wrong secret, a DENY topic and a SUB-only account are refused', async () => {
    const topic = uniqueName('AclT');
    const body = Buffer.from('hello');
    expect((await tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), body, APP)).code).toBe(ResponseCode.SUCCESS);

    const none = await tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), body);
    expect(none.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(none.remark).toBe(
      `${ACL}: No accessKey is configured, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:664)`,
    );
    const wrong = await tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), body, { ...APP, secretKey: 'notTheSecret' });
    expect(wrong.remark).toContain('Check signature failed for accessKey=appUser1');
    const denied = await tcp(RequestCode.SEND_MESSAGE_V2, sendV2('DeniedTopic'), body, APP);
    expect(denied.remark).toContain('No default permission for topic:DeniedTopic');
    const reader = await tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), body, READER);
    expect(reader.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(reader.remark).toContain(`No default permission for topic:${topic}`);

    // A signed request replayed with another body.
    const signed = signExtFields(sendV2(topic), body, APP) as Record<string, string>;
    const replay = await acl.remoting.request(RequestCode.SEND_MESSAGE_V2, signed, { body: Buffer.from('HELLO') });
    expect(replay.remark).toContain('Check signature failed');
    // A signature of the wrong length, and an AccessKey without a Signature.
    const short = await acl.remoting.request(RequestCode.SEND_MESSAGE_V2, { ...signed, Signature: 'abc' }, { body });
    expect(short.remark).toContain('Check signature failed');
    const { Signature: _, ...unsigned } = signed;
    const missing = await acl.remoting.request(RequestCode.SEND_MESSAGE_V2, unsigned, { body });
    expect(missing.remark).toContain('Check signature failed');

    // Route lookups need no signature (RocketMQ's name server checks none); the stored message is there.
    expect((await tcp(RequestCode.GET_ROUTEINFO_BY_TOPIC, { topic }, null)).code).toBe(ResponseCode.SUCCESS);
  });

  test('remoting: heartbeats are checked by their subscriptions; admin codes need an admin', async () => {
    const topic = uniqueName('AclT');
    expect((await tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), Buffer.from('x'), APP)).code).toBe(0);
    const hb = heartbeatBody('client-1', uniqueName('G'), topic);
    expect((await tcp(RequestCode.HEART_BEAT, {}, hb, READER)).code).toBe(ResponseCode.SUCCESS);
    const deniedHb = heartbeatBody('client-2', uniqueName('G'), 'DeniedTopic');
    expect((await tcp(RequestCode.HEART_BEAT, {}, deniedHb, APP)).remark).toContain('topic:DeniedTopic');

    const create = { topic: uniqueName('Created'), readQueueNums: '4', writeQueueNums: '4', perm: '6' };
    const refused = await tcp(RequestCode.UPDATE_AND_CREATE_TOPIC, create, null, APP);
    expect(refused.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(refused.remark).toContain('Need admin permission for request code=17, but accessKey=appUser1 is not');
    expect((await tcp(RequestCode.UPDATE_AND_CREATE_TOPIC, create, null, ADMIN)).code).toBe(ResponseCode.SUCCESS);
  });

  test('HTTP: the same validator, the header signed as its fields', async () => {
    const topic = uniqueName('AclH');
    const body = Buffer.from('over http');
    const ok = await http('SEND_MESSAGE', httpSendHeader(topic), body, APP);
    expect(ok.error ?? ok.code).toBe(ResponseCode.SUCCESS);
    const none = await http('SEND_MESSAGE', httpSendHeader(topic), body);
    expect(none.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(none.remark).toContain('No accessKey is configured');
    expect((await http('SEND_MESSAGE', httpSendHeader(topic), body, { ...APP, secretKey: 'x' })).remark).toContain(
      'Check signature failed',
    );
    expect((await http('SEND_MESSAGE', httpSendHeader('DeniedTopic'), body, APP)).remark).toContain(
      'topic:DeniedTopic',
    );
    expect((await http('SEND_MESSAGE', httpSendHeader(topic), body, READER)).remark).toContain(`topic:${topic}`);
    const pulled = await http(
      'PULL_MESSAGE',
      {
        consumerGroup: uniqueName('G'),
        topic,
        queueId: 0,
        queueOffset: 0,
        maxMsgNums: 32,
        sysFlag: buildPullSysFlag(false, false, true),
        commitOffset: 0,
        suspendTimeoutMillis: 0,
        subscription: '*',
        subVersion: 0,
      },
      null,
      READER,
    );
    expect(pulled.code).toBe(ResponseCode.SUCCESS);
    expect(pulled.body.includes(body)).toBe(true);
    const create = { topic: uniqueName('Created'), readQueueNums: 4, writeQueueNums: 4, perm: 6 };
    expect((await http('UPDATE_AND_CREATE_TOPIC', create, null, APP)).remark).toContain('Need admin permission');
  });

  test('an edit of the file takes effect; a bad edit keeps the rules in force', async () => {
    const topic = uniqueName('AclR');
    const send = () => tcp(RequestCode.SEND_MESSAGE_V2, sendV2(topic), Buffer.from('r'), READER);
    expect((await send()).code).toBe(ResponseCode.SYSTEM_ERROR);
    writeFileSync(acl.aclFile, aclYaml('PUB|SUB'));
    await waitFor(async () => (await send()).code === ResponseCode.SUCCESS, 30_000);
    writeFileSync(acl.aclFile, `${aclYaml('SUB')}  - accessKey: oops\n`);
    await waitFor(
      () => acl.logged.some((l) => l.includes('previous rules stay in force') && l.includes('line 16')),
      30_000,
    );
    expect((await send()).code).toBe(ResponseCode.SUCCESS);
    expect(acl.logged.join('\n')).not.toContain('readSecret1');
  }, 90_000);

  test('an access token and a remoting port go together once the ACL guards the remoting port', async () => {
    const file = path.join(acl.dir, 'token.yml');
    writeFileSync(file, aclYaml('SUB'));
    const storePath = tempStorePath();
    try {
      await expect(Broker.start({ port: 0, storePath, remotingPort: 0, accessToken: 'tok' })).rejects.toThrow(
        /accessToken/,
      );
      const b = await Broker.start({ port: 0, storePath, remotingPort: 0, accessToken: 'tok', aclFile: file });
      await b.shutdown();
    } finally {
      rmSync(storePath, { recursive: true, force: true });
    }
  });

  test('a bad file stops the start, naming the line', async () => {
    const bad = path.join(acl.dir, 'bad.yml');
    writeFileSync(bad, 'accounts:\n  - accessKey: appUser1\n    secretKey: appSecret1\n    topicPerms:\n      - T1\n');
    const storePath = tempStorePath();
    try {
      await expect(Broker.start({ port: 0, storePath, aclFile: bad })).rejects.toThrow(
        `aclFile: ${bad} line 5: topicPerms: "T1" is not of the form name=PERM`,
      );
    } finally {
      rmSync(storePath, { recursive: true, force: true });
    }
  });

  test(
    'CLI: --acl-file turns the ACL on; a bad file exits 2 naming the line',
    async () => {
      const store = tempStorePath('rmq-cli-acl-');
      // A file of its own: the shared one is left with a bad edit by the reload test.
      const good = path.join(acl.dir, 'cli-good.yml');
      writeFileSync(good, aclYaml('SUB'));
      const r = runCli(['broker', '--store', store, '--port', '0', '--acl-file', good]);
      const client = new TestBrokerClient(await listeningAddress(r));
      try {
        const refused = await client.send(uniqueName('Cli'), 'x');
        expect(refused.code).toBe(ResponseCode.SYSTEM_ERROR);
        expect(refused.remark).toContain('No accessKey is configured');
      } finally {
        await client.close();
        r.child.kill('SIGTERM');
      }
      expect(await r.exit).toBe(0);

      const bad = path.join(acl.dir, 'cli-bad.yml');
      writeFileSync(bad, 'accounts:\n  - accessKey: appUser1\n    secretKey: appSecret1\n    admin: maybe\n');
      const failed = runCli(['broker', '--store', store, '--port', '0', '--acl-file', bad]);
      expect(await failed.exit).toBe(2);
      expect(failed.stderr()).toContain(`aclFile: ${bad} line 4: admin must be true or false`);
      expect(failed.stderr()).not.toContain('appSecret1');
      rmSync(store, { recursive: true, force: true });
    },
    CLI_TEST_TIMEOUT_MS,
  );
});
