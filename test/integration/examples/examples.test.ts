/**
 * Every example runs with its documented command (`node examples/NN-*.mjs`), importing the package by
 * its name, against an in-process broker named by ROCKETMQ_TS_ENDPOINTS — as a user runs them.
 */
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function runExample(
  file: string,
  env: Record<string, string>,
  onStdout?: (text: string, kill: () => void) => void,
): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join('examples', file)], {
      cwd: root,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => {
      stdout += d.toString();
      onStdout?.(stdout, () => child.kill('SIGTERM'));
    });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

let f: BrokerFixture;
beforeAll(async () => {
  f = await startBroker();
});
afterAll(async () => {
  await f.close();
});

test('the examples are numbered programs', () => {
  const files = readdirSync(path.join(root, 'examples')).filter((n) => /^\d\d-.*\.mjs$/.test(n));
  expect(files.length).toBeGreaterThanOrEqual(7);
});

test('01 starts and stops a broker in code', async () => {
  const r = await runExample('01-broker-in-code.mjs', {});
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/broker listening on http:\/\/127\.0\.0\.1:\d+\nbroker stopped/);
}, 60_000);

test('02 produces; 03 (tag), 04 (SQL92) and 06 (pull, manual offsets) receive what they should', async () => {
  const env = { ROCKETMQ_TS_ENDPOINTS: f.broker.address };
  const produced = await runExample('02-produce.mjs', env);
  expect(produced.stderr).toBe('');
  expect(produced.stdout.match(/^sent order-\d: SEND_OK/gm)).toHaveLength(6);
  const [tag, sql, pull] = await Promise.all([
    runExample('03-push-consumer-tag.mjs', env),
    runExample('04-sql92.mjs', env),
    runExample('06-pull-consumer.mjs', env),
  ]);
  expect(tag.code).toBe(0);
  expect(tag.stdout.match(/order-\d/g)?.sort()).toEqual(['order-0', 'order-2', 'order-4']);
  expect(sql.code).toBe(0);
  expect(sql.stdout.match(/order-\d/g)?.sort()).toEqual(['order-3', 'order-4', 'order-5']);
  expect(pull.code).toBe(0);
  expect(pull.stdout.match(/order-\d/g)?.sort()).toEqual([
    'order-0',
    'order-1',
    'order-2',
    'order-3',
    'order-4',
    'order-5',
  ]);
  // the pull consumer committed its offsets: a second run finds nothing new
  const again = await runExample('06-pull-consumer.mjs', env);
  expect(again.code).toBe(0);
  expect(again.stdout).not.toMatch(/order-/);
}, 120_000);

test('05 broadcasting delivers every message to both members', async () => {
  const r = await runExample('05-broadcasting.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/member_1 received 4: news 0, news 1, news 2, news 3/);
  expect(r.stdout).toMatch(/member_2 received 4: news 0, news 1, news 2, news 3/);
}, 60_000);

test('07 shuts down cleanly on SIGTERM', async () => {
  let killed = false; // a second signal would force the exit, as a second Ctrl-C does
  const r = await runExample('07-graceful-shutdown.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address }, (out, kill) => {
    if (!killed && out.includes('press Ctrl-C')) {
      killed = true;
      kill();
    }
  });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/SIGTERM: shutting down after \d+ messages\nconsumer stopped cleanly/);
}, 60_000);

test('08 polls, with for await, the six orders 02 produced', async () => {
  const r = await runExample('08-lite-pull.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout.match(/order-\d/g)?.sort()).toEqual([
    'order-0',
    'order-1',
    'order-2',
    'order-3',
    'order-4',
    'order-5',
  ]);
}, 60_000);

test('09 consumes each order’s steps in send order', async () => {
  const r = await runExample('09-orderly.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  for (let o = 0; o < 4; o++) expect(r.stdout).toContain(`order-${o} in order: created -> paid -> shipped`);
}, 60_000);

test('10 connects through namesrvAddr: the broker’s remoting port answering as a NameServer', async () => {
  const ns = await startBroker({ remotingPort: 0 });
  try {
    const r = await runExample('10-namesrv.mjs', { NAMESRV_ADDR: ns.broker.remotingAddress ?? '' });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`brokers: ${ns.broker.remotingAddress}`);
    expect(r.stdout.match(/^received \w+-\d: order \d$/gm)).toHaveLength(4);
    expect(r.stdout).toMatch(/: lag 0\n$/);
  } finally {
    await ns.close();
  }
}, 60_000);

test('11 retries a failing message, parks it in the dead-letter queue and reads it there', async () => {
  const r = await runExample('11-retry-dead-letter.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout.match(/^consumed payment-\d$/gm)?.sort()).toEqual(['consumed payment-0', 'consumed payment-2']);
  expect(r.stdout.match(/^attempt \d of payment-1 failed$/gm)).toEqual([
    'attempt 1 of payment-1 failed',
    'attempt 2 of payment-1 failed',
    'attempt 3 of payment-1 failed',
  ]);
  expect(r.stdout).toMatch(/^dead letter payment-1: payment 1 \(from ExamplePayments_\w+, reconsumeTimes 3, /m);
}, 90_000);
