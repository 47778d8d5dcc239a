/**
 * How the admin CLI fails: with --json, a script reads the failure from stdout as one JSON document
 * `{ "error": { "code", "message" } }` (exit code non-zero as before); without it, one line on stderr.
 * And an endpoint whose only problem is its port says so.
 */
import { Producer, PushConsumer } from '../../../src/index.js';
import { rocketmq } from '../../support/admin-fixtures.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let f: BrokerFixture;
beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

interface JsonError {
  error: { code: string; message: string };
}

test('--json: every kind of failure is a JSON error document on stdout, with a non-zero exit code', async () => {
  const [missingTopic, usage, unknownFlag, badEndpoint, down] = await Promise.all([
    rocketmq(['topicStatus', '-t', 'NoSuchTopic', '--json', '--endpoints', f.broker.address]),
    rocketmq(['topicStatus', '--json', '--endpoints', f.broker.address]),
    rocketmq(['topicStatus', '--json', '--bogus']),
    rocketmq(['topicList', '--json', '--endpoints', 'ftp://127.0.0.1:8081']),
    rocketmq(['topicList', '--json', '--endpoints', 'http://127.0.0.1:1']),
  ]);
  const parsed = (r: { stdout: string }): JsonError => JSON.parse(r.stdout) as JsonError;
  expect(missingTopic.code).toBe(1);
  expect(parsed(missingTopic)).toEqual({
    error: { code: 'ERR_TOPIC_NOT_EXIST', message: expect.stringMatching(/NoSuchTopic.* not exist/) as string },
  });
  expect(usage.code).toBe(2);
  expect(parsed(usage)).toEqual({ error: { code: 'ERR_USAGE', message: '-t is required' } });
  expect(unknownFlag.code).toBe(2);
  expect(parsed(unknownFlag).error).toEqual({
    code: 'ERR_PARSE_ARGS_UNKNOWN_OPTION',
    message: expect.stringMatching(/--bogus/) as string,
  });
  expect(badEndpoint.code).toBe(2);
  expect(parsed(badEndpoint).error.code).toBe('ERR_INVALID_ARGUMENT');
  expect(down.code).toBe(1);
  expect(parsed(down).error.code).toMatch(/^ERR_/);
  for (const r of [missingTopic, usage, unknownFlag, badEndpoint, down]) expect(r.stderr).toBe('');
}, 60_000);

test('without --json a failure stays one readable line on stderr', async () => {
  const r = await rocketmq(['topicStatus', '-t', 'NoSuchTopic', '--endpoints', f.broker.address]);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe('');
  expect(r.stderr).toMatch(/^rocketmq-ts topicStatus: .*not exist\n$/);
}, 60_000);

test('an endpoint with a port out of range says the port is the problem', async () => {
  const [admin, json] = await Promise.all([
    rocketmq(['topicList', '--endpoints', 'http://127.0.0.1:99999']),
    rocketmq(['topicList', '--json', '--endpoints', 'http://127.0.0.1:99999']),
  ]);
  expect(admin.code).toBe(2);
  expect(admin.stderr).toMatch(/port 99999 is out of range/);
  expect(admin.stderr).not.toMatch(/must be an http:\/\/ or https:\/\//);
  expect((JSON.parse(json.stdout) as JsonError).error.message).toMatch(/port 99999 is out of range/);
}, 60_000);

test('the clients say the same of an out-of-range port in `endpoints`', () => {
  expect(() => new Producer({ producerGroup: 'g', endpoints: 'http://127.0.0.1:99999' })).toThrow(
    /endpoints: the port 99999 is out of range: it must be within 1\.\.65535/,
  );
  expect(() => new PushConsumer({ consumerGroup: 'g', endpoints: ['http://[::1]:70000/'] })).toThrow(
    /the port 70000 is out of range/,
  );
  expect(() => new Producer({ producerGroup: 'g', endpoints: 'tcp://127.0.0.1:8081' })).toThrow(
    /must be an http:\/\/ or https:\/\/ broker URL/,
  );
});
