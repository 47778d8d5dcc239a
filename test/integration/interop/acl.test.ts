/**
 * Our clients with credentials against a stock Apache RocketMQ 4.9.8 broker with plain ACL turned on
 * (the kit's RMQ_ACL_FILE): the right account works end to end (an admin account creates the topics,
 * the Producer sends, the PushConsumer and LitePullConsumer consume); no credentials, a wrong secret,
 * a DENY topic and a SUB-only account sending each fail fast with AclAccessDeniedError naming the
 * account and the resource; credentials rotated through the function form while consuming keep working.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import { AdminClient } from '../../../src/client/admin/admin-client.js';
import { LitePullConsumer } from '../../../src/client/consumer/lite/lite-pull-consumer.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { Producer } from '../../../src/client/producer/producer.js';
import { AclAccessDeniedError } from '../../../src/common/errors.js';
import type { AclCredentials } from '../../../src/remoting/acl-credentials.js';
import { waitFor } from '../../support/broker-fixture.js';
import { kitDescribe, startKit, type RocketMQKit } from '../../support/rocketmq-kit.js';

const APP = { accessKey: 'appUser', secretKey: 'appSecret123' };
const ROTATED = { accessKey: 'rotUser2', secretKey: 'rotSecret456' };
const SUB_ONLY = { accessKey: 'subUser', secretKey: 'subSecret123' };
const ADMIN = { accessKey: 'adminUser', secretKey: 'adminSecret123' };
const DENIED_TOPIC = 'AclSecretTopic';

// RocketMQ 4.9.8's plain_acl.yml: app accounts publish and subscribe everywhere but the DENY topic.
const ACL_YML = `globalWhiteRemoteAddresses: []
accounts:
- accessKey: ${APP.accessKey}
  secretKey: ${APP.secretKey}
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: PUB|SUB
  defaultGroupPerm: SUB
  topicPerms: [ "${DENIED_TOPIC}=DENY" ]
- accessKey: ${ROTATED.accessKey}
  secretKey: ${ROTATED.secretKey}
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: PUB|SUB
  defaultGroupPerm: SUB
- accessKey: ${SUB_ONLY.accessKey}
  secretKey: ${SUB_ONLY.secretKey}
  whiteRemoteAddress:
  admin: false
  defaultTopicPerm: SUB
  defaultGroupPerm: SUB
- accessKey: ${ADMIN.accessKey}
  secretKey: ${ADMIN.secretKey}
  whiteRemoteAddress:
  admin: true
`;

let seq = 0;
const uniq = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}_${++seq}`;

/** The rejection of `p`, failing the test when it resolves. */
async function rejectionOf(p: Promise<unknown>): Promise<unknown> {
  return p.then(
    () => {
      throw new Error('expected a rejection');
    },
    (e: unknown) => e,
  );
}

kitDescribe('our clients on Apache RocketMQ 4.9.8 with plain ACL', () => {
  let kit: RocketMQKit;
  let aclDir: string;
  let topic: string;
  const closers: Array<() => Promise<unknown>> = [];

  const producer = (credentials?: ConstructorParameters<typeof Producer>[0]['credentials']): Producer => {
    const p = new Producer({
      namesrvAddr: kit.namesrvAddr,
      producerGroup: uniq('AclPG'),
      ...(credentials === undefined ? {} : { credentials }),
    });
    closers.push(() => p.shutdown());
    return p;
  };

  beforeAll(async () => {
    aclDir = mkdtempSync(path.join(os.tmpdir(), 'acl-interop-'));
    const aclFile = path.join(aclDir, 'plain_acl.yml');
    writeFileSync(aclFile, ACL_YML);
    kit = await startKit({ aclFile });
    topic = uniq('AclTopic');
    const admin = new AdminClient({ namesrvAddr: kit.namesrvAddr, credentials: ADMIN });
    try {
      await admin.createTopic(topic, { readQueueNums: 2, writeQueueNums: 2 });
      await admin.createTopic(DENIED_TOPIC, { readQueueNums: 1, writeQueueNums: 1 });
    } finally {
      await admin.shutdown();
    }
  }, 240_000);

  afterEach(async () => {
    await Promise.allSettled(closers.splice(0).map((c) => c()));
  });

  afterAll(async () => {
    await kit?.stop();
    if (aclDir) rmSync(aclDir, { recursive: true, force: true });
  }, 90_000);

  it('an admin account creates topics; an app account is refused an admin request, naming itself', async () => {
    const admin = new AdminClient({ namesrvAddr: kit.namesrvAddr, credentials: ADMIN });
    const app = new AdminClient({ namesrvAddr: kit.namesrvAddr, credentials: APP });
    const anonymous = new AdminClient({ namesrvAddr: kit.namesrvAddr });
    closers.push(
      () => admin.shutdown(),
      () => app.shutdown(),
      () => anonymous.shutdown(),
    );
    const t = uniq('AclAdminTopic');
    await admin.createTopic(t, { readQueueNums: 1, writeQueueNums: 1 });
    expect((await admin.topicStatus(t)).length).toBe(1);
    const refused = await rejectionOf(app.createTopic(uniq('AclNope'), { readQueueNums: 1, writeQueueNums: 1 }));
    expect(refused).toBeInstanceOf(AclAccessDeniedError);
    expect(refused).toMatchObject({ accessKey: APP.accessKey, retriable: false });
    expect((refused as AclAccessDeniedError).adminRequestCode).toBeGreaterThan(0);
    const noKey = await rejectionOf(anonymous.createTopic(uniq('AclNope'), { readQueueNums: 1, writeQueueNums: 1 }));
    expect(noKey).toBeInstanceOf(AclAccessDeniedError);
    expect((noKey as AclAccessDeniedError).reason).toMatch(/No accessKey is configured/);
  }, 60_000);

  it('the right credentials: our Producer sends, a PushConsumer and a LitePullConsumer consume', async () => {
    const p = producer(APP);
    await p.start();
    const bodies = Array.from({ length: 8 }, (_, i) => `${topic}-ok-${i}`);
    for (const b of bodies) expect((await p.send({ topic, body: Buffer.from(b) })).sendStatus).toBe('SEND_OK');

    const pushed = new Set<string>();
    const push = new PushConsumer({
      namesrvAddr: kit.namesrvAddr,
      consumerGroup: uniq('AclPushG'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      credentials: APP,
    });
    closers.push(() => push.shutdown());
    push.subscribe(topic, '*').registerMessageListener((msgs) => {
      for (const m of msgs) pushed.add(m.body!.toString());
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await push.start();

    const lite = new LitePullConsumer({
      namesrvAddr: kit.namesrvAddr,
      consumerGroup: uniq('AclLiteG'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      credentials: async () => APP,
    });
    closers.push(() => lite.shutdown());
    lite.subscribe(topic, '*');
    await lite.start();
    const pulled = new Set<string>();
    for await (const m of lite.messages({ signal: AbortSignal.timeout(40_000) })) {
      if (m.body!.toString().includes('-ok-')) pulled.add(m.body!.toString());
      if (pulled.size === bodies.length) break;
    }
    expect(pulled).toEqual(new Set(bodies));
    await waitFor(() => bodies.every((b) => pushed.has(b)), 40_000);
  }, 120_000);

  it.each<[string, AclCredentials | undefined, () => string, RegExp, string | undefined, string | undefined]>([
    ['no credentials', undefined, () => topic, /No accessKey is configured/, undefined, undefined],
    [
      'a wrong secret',
      { accessKey: APP.accessKey, secretKey: 'wrongSecret999' },
      () => topic,
      /Check signature failed/,
      APP.accessKey,
      undefined,
    ],
    ['a DENY topic', APP, () => DENIED_TOPIC, /No default permission/, APP.accessKey, `topic:${DENIED_TOPIC}`],
    ['a SUB-only account sending', SUB_ONLY, () => topic, /No default permission/, SUB_ONLY.accessKey, 'topic:'],
  ])(
    '%s: the send fails with AclAccessDeniedError (not a timeout, not retriable)',
    async (_n, creds, to, reason, ak, resource) => {
      const p = producer(creds);
      await p.start();
      const err = await rejectionOf(p.send({ topic: to(), body: Buffer.from('refused') }));
      expect(err).toBeInstanceOf(AclAccessDeniedError);
      const e = err as AclAccessDeniedError;
      expect(e.retriable).toBe(false);
      expect(e.reason).toMatch(reason);
      expect(e.accessKey).toBe(ak);
      if (resource === 'topic:') expect(e.resource).toBe(`topic:${to()}`);
      else expect(e.resource).toBe(resource);
      if (creds) expect(e.message).not.toContain(creds.secretKey);
    },
    60_000,
  );

  it("a PushConsumer without credentials: start() rejects with the broker's refusal", async () => {
    const c = new PushConsumer({
      namesrvAddr: kit.namesrvAddr,
      consumerGroup: uniq('AclAnonG'),
      startTimeoutMs: 30_000,
    });
    closers.push(() => c.shutdown());
    c.subscribe(topic, '*').registerMessageListener(() => ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
    const err = await rejectionOf(c.start());
    expect(err).toBeInstanceOf(AclAccessDeniedError);
    expect((err as AclAccessDeniedError).reason).toMatch(/No accessKey is configured/);
  }, 60_000);

  it('credentials rotated through the function form while consuming: a broken secret is refused, the new account consumes', async () => {
    let current: AclCredentials = APP;
    const asked = new Set<string>();
    const c = new PushConsumer({
      namesrvAddr: kit.namesrvAddr,
      consumerGroup: uniq('AclRotG'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      pullTimeDelayMsWhenException: 200,
      credentials: async () => {
        asked.add(current.accessKey + (current === APP || current === ROTATED ? '' : '!'));
        return current;
      },
    });
    closers.push(() => c.shutdown());
    const got = new Set<string>();
    const refusals: AclAccessDeniedError[] = [];
    c.on('pullError', ({ error }) => {
      if (error instanceof AclAccessDeniedError) refusals.push(error);
    });
    c.subscribe(topic, '*').registerMessageListener((msgs) => {
      for (const m of msgs) got.add(m.body!.toString());
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    await c.start();
    const p = producer(APP);
    await p.start();
    await p.send({ topic, body: Buffer.from(`${topic}-rot-before`) });
    await waitFor(() => got.has(`${topic}-rot-before`), 40_000);

    current = { accessKey: APP.accessKey, secretKey: 'expiredSecret0' };
    await waitFor(() => refusals.length > 0, 40_000);
    expect(refusals[0]?.accessKey).toBe(APP.accessKey);

    current = ROTATED;
    const after = Array.from({ length: 4 }, (_, i) => `${topic}-rot-after-${i}`);
    for (const b of after) await p.send({ topic, body: Buffer.from(b) });
    await waitFor(() => after.every((b) => got.has(b)), 40_000);
    expect(asked).toEqual(new Set([APP.accessKey, `${APP.accessKey}!`, ROTATED.accessKey]));
  }, 150_000);
});
