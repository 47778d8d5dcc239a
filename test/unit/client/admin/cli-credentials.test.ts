/**
 * The admin commands' ACL account: --access-key / --secret-key, else ROCKETMQ_ACCESS_KEY /
 * ROCKETMQ_SECRET_KEY; both halves or neither; a secret on the command line earns a warning.
 */
import { UsageError, cliCredentials } from '../../../../src/cli-admin.js';

describe('cliCredentials', () => {
  const warnings: string[] = [];
  const warn = (t: string): void => {
    warnings.push(t);
  };
  afterEach(() => {
    warnings.length = 0;
  });

  test('none given: no credentials', () => {
    expect(cliCredentials({}, {}, warn)).toBeUndefined();
  });

  test('from the environment, without a warning', () => {
    expect(cliCredentials({}, { ROCKETMQ_ACCESS_KEY: 'ak1', ROCKETMQ_SECRET_KEY: 'sk1' }, warn)).toEqual({
      accessKey: 'ak1',
      secretKey: 'sk1',
    });
    expect(warnings).toEqual([]);
  });

  test('the flags win over the environment; a secret flag warns without printing the secret', () => {
    const env = { ROCKETMQ_ACCESS_KEY: 'ak1', ROCKETMQ_SECRET_KEY: 'sk1' };
    expect(cliCredentials({ 'access-key': 'ak2', 'secret-key': 'sk2' }, env, warn)).toEqual({
      accessKey: 'ak2',
      secretKey: 'sk2',
    });
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/ROCKETMQ_SECRET_KEY/);
    expect(warnings[0]).not.toContain('sk2');
  });

  test.each([
    [{ 'access-key': 'ak' }, {}, /--secret-key/],
    [{}, { ROCKETMQ_SECRET_KEY: 'sk' }, /--access-key/],
  ])('half an account is a usage error', (flags, env, message) => {
    expect(() => cliCredentials(flags, env, warn)).toThrow(UsageError);
    expect(() => cliCredentials(flags, env, warn)).toThrow(message);
  });
});
