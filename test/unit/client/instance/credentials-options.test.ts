/**
 * The `credentials` option of every client: checked with the other options (an error naming the
 * option, never quoting a secret), held so that printing the resolved options never shows the
 * secret; and the reading of RocketMQ's ACL refusal remarks.
 */
import { inspect } from 'node:util';
import { AdminClient, InvalidArgumentError, Producer } from '../../../../src/index.js';
import { resolveProducerOptions } from '../../../../src/client/producer/producer-options.js';
import { resolvePushConsumerOptions } from '../../../../src/client/consumer/push/push-consumer-options.js';
import { resolveLitePullConsumerOptions } from '../../../../src/client/consumer/lite/lite-pull-consumer-options.js';
import { resolvePullConsumerOptions } from '../../../../src/client/consumer/pull/pull-consumer-options.js';
import { resolveSimpleConsumerOptions } from '../../../../src/client/consumer/simple/simple-consumer-options.js';
import { Credentials, aclRefusal } from '../../../../src/remoting/acl-credentials.js';
import { CredentialsError } from '../../../../src/common/errors.js';
import { ManualClock } from '../../../support/manual-clock.js';

const N = '127.0.0.1:9876';
const GOOD = { accessKey: 'appUser', secretKey: 'appSecret123' };

function errorOf(fn: () => unknown): InvalidArgumentError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidArgumentError);
    return e as InvalidArgumentError;
  }
  throw new Error('expected an InvalidArgumentError');
}

describe('the credentials option', () => {
  test.each<[string, unknown, RegExp]>([
    ['not an object', 'appUser:appSecret123', /must be an object/],
    ['no secret', { accessKey: 'appUser' }, /secretKey must be a non-empty string/],
    ['an empty access key', { accessKey: '', secretKey: 'appSecret123' }, /accessKey must be a non-empty string/],
    ['a number as token', { ...GOOD, securityToken: 5 }, /securityToken/],
  ])('%s is refused naming the option and without quoting the value', (_name, credentials, message) => {
    for (const make of [
      () => new Producer({ namesrvAddr: N, credentials: credentials as never }),
      () => new AdminClient({ namesrvAddr: N, credentials: credentials as never }),
    ]) {
      const err = errorOf(make);
      expect(err.field).toBe('credentials');
      expect(err.message).toMatch(message);
      expect(err.message).not.toContain('appSecret123');
    }
  });

  test('every client takes it, fixed or as a function, and keeps it out of printed options', () => {
    const fn = (): typeof GOOD => GOOD;
    const all = [
      resolveProducerOptions({ namesrvAddr: N, credentials: GOOD }),
      resolvePushConsumerOptions({ namesrvAddr: N, consumerGroup: 'g', credentials: GOOD }),
      resolveLitePullConsumerOptions({ namesrvAddr: N, consumerGroup: 'g', credentials: fn }),
      resolvePullConsumerOptions({
        namesrvAddr: N,
        consumerGroup: 'g',
        credentials: { ...GOOD, securityToken: 'tok' },
      }),
      resolveSimpleConsumerOptions({ endpoints: 'http://127.0.0.1:8081', consumerGroup: 'g', credentials: fn }),
    ];
    for (const o of all) {
      expect(o.credentials).toBeInstanceOf(Credentials);
      for (const text of [inspect(o, { depth: 5 }), JSON.stringify(o), String(o.credentials)]) {
        expect(text).not.toContain('appSecret123');
        expect(text).not.toContain('tok');
      }
    }
    expect(inspect(all[0]?.credentials)).toBe('Credentials(accessKey=appUser)');
    expect(all[2]?.credentials?.dynamic).toBe(true);
  });

  test('fixed credentials are copied: a later change of the caller object does not leak in', () => {
    const mine = { ...GOOD };
    const c = new Credentials(mine);
    mine.secretKey = 'changed';
    expect(c.get(1000, new ManualClock())).toEqual(GOOD);
  });

  test('an async function is bounded by the deadline given', async () => {
    const clock = new ManualClock();
    const c = new Credentials(() => new Promise(() => undefined));
    const p = c.get(500, clock) as Promise<unknown>;
    const seen = p.catch((e: unknown) => e);
    clock.advance(500);
    const err = await seen;
    expect(err).toBeInstanceOf(CredentialsError);
    expect((err as Error).message).toMatch(/within 500 ms/);
  });
});

describe("reading RocketMQ 4.9.8's ACL refusals (NettyRemotingAbstract: the AclException and its first frame)", () => {
  const frame = ', org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:664)';
  const E = 'org.apache.rocketmq.acl.common.AclException: ';
  test.each<[string, string | undefined, object]>([
    ['No accessKey is configured', undefined, { accessKey: undefined, resource: undefined }],
    ['No acl config for nobody', 'nobody', { accessKey: 'nobody' }],
    ['Check signature failed for accessKey=appUser', 'appUser', { accessKey: 'appUser' }],
    ['No default permission for topic:Secret', 'appUser', { accessKey: 'appUser', resource: 'topic:Secret' }],
    ['No default permission for group:g1', 'subUser', { accessKey: 'subUser', resource: 'group:g1' }],
    [
      'Need admin permission for request code=17, but accessKey=appUser is not',
      'appUser',
      { accessKey: 'appUser', adminRequestCode: 17 },
    ],
  ])('%s', (reason, signedWith, expected) => {
    const details = aclRefusal(`${E}${reason}${frame}`, signedWith);
    expect(details).toMatchObject({ ...expected, reason });
  });

  test('other remarks are not refusals', () => {
    expect(aclRefusal('java.lang.NullPointerException, a.B.c(B.java:1)', 'appUser')).toBeNull();
    expect(aclRefusal(undefined, 'appUser')).toBeNull();
    expect(aclRefusal('', undefined)).toBeNull();
  });
});
