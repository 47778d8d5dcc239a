/**
 * Every example runs with its documented command (`node examples/NN-*.mjs`), importing the package by
 * its name, against an in-process broker named by ROCKETMQ_TS_ENDPOINTS — as a user runs them. Each
 * runs twice, as a user trying things runs them again: the second run works too (a consumer whose
 * group has read everything says so and ends), and a failure is one readable line.
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

/** Runs `file` twice, one run after the other, checking each with `check(run, nth)`. */
async function runTwice(
  file: string,
  env: Record<string, string>,
  check: (r: Run, nth: number) => void,
): Promise<void> {
  for (const nth of [1, 2]) check(await runExample(file, env), nth);
}

/** A consumer's run when its group has consumed everything: it says so and ends, with no error. */
function expectNothingNew(r: Run): void {
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).not.toMatch(/order-/);
  expect(r.stdout).toMatch(/^(no new|nothing new).*examples\/02-produce\.mjs sends more\)\n$/m);
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
  await runTwice('01-broker-in-code.mjs', {}, (r) => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/broker listening on http:\/\/127\.0\.0\.1:\d+\nbroker stopped/);
  });
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
  expectNothingNew(again);
  // so did the push consumers' groups: their second runs end at once, saying so
  const [tag2, sql2] = await Promise.all([
    runExample('03-push-consumer-tag.mjs', env),
    runExample('04-sql92.mjs', env),
  ]);
  expectNothingNew(tag2);
  expectNothingNew(sql2);
}, 120_000);

test('05 broadcasting delivers every message to both members', async () => {
  await runTwice('05-broadcasting.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address }, (r) => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/member_1 received 4: news 0, news 1, news 2, news 3/);
    expect(r.stdout).toMatch(/member_2 received 4: news 0, news 1, news 2, news 3/);
  });
}, 90_000);

test('07 shuts down cleanly on SIGTERM', async () => {
  for (let nth = 1; nth <= 2; nth++) {
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
  }
}, 90_000);

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
  // the loop committed what it finished: a second run finds nothing new
  expectNothingNew(await runExample('08-lite-pull.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address }));
}, 60_000);

test('09 consumes each order’s steps in send order', async () => {
  await runTwice('09-orderly.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address }, (r) => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    for (let o = 0; o < 4; o++) expect(r.stdout).toContain(`order-${o} in order: created -> paid -> shipped`);
  });
}, 90_000);

test('10 connects through namesrvAddr: the broker’s remoting port answering as a NameServer', async () => {
  const ns = await startBroker({ remotingPort: 0 });
  try {
    await runTwice('10-namesrv.mjs', { NAMESRV_ADDR: ns.broker.remotingAddress ?? '' }, (r) => {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toContain(`brokers: ${ns.broker.remotingAddress}`);
      expect(r.stdout.match(/^received \w+-\d: order \d$/gm)).toHaveLength(4);
      expect(r.stdout).toMatch(/: lag 0\n$/);
    });
  } finally {
    await ns.close();
  }
}, 60_000);

test('11 retries a failing message, parks it in the dead-letter queue and reads it there', async () => {
  await runTwice('11-retry-dead-letter.mjs', { ROCKETMQ_TS_ENDPOINTS: f.broker.address }, (r) => {
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout.match(/^consumed payment-\d$/gm)?.sort()).toEqual(['consumed payment-0', 'consumed payment-2']);
    expect(r.stdout.match(/^attempt \d of payment-1 failed$/gm)).toEqual([
      'attempt 1 of payment-1 failed',
      'attempt 2 of payment-1 failed',
      'attempt 3 of payment-1 failed',
    ]);
    expect(r.stdout).toMatch(/^dead letter payment-1: payment 1 \(from ExamplePayments_\w+, reconsumeTimes 3, /m);
  });
}, 180_000);

test('02 again: 03, 04, 06 and 08 receive just the orders it sent, as many times as it runs', async () => {
  const env = { ROCKETMQ_TS_ENDPOINTS: f.broker.address };
  for (let round = 0; round < 2; round++) {
    expect((await runExample('02-produce.mjs', env)).code).toBe(0);
    const [tag, sql, pull, lite] = await Promise.all([
      runExample('03-push-consumer-tag.mjs', env),
      runExample('04-sql92.mjs', env),
      runExample('06-pull-consumer.mjs', env),
      runExample('08-lite-pull.mjs', env),
    ]);
    for (const r of [tag, sql, pull, lite]) {
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
    }
    expect(tag.stdout.match(/order-\d/g)?.sort()).toEqual(['order-0', 'order-2', 'order-4']);
    expect(sql.stdout.match(/order-\d/g)?.sort()).toEqual(['order-3', 'order-4', 'order-5']);
    expect(pull.stdout.match(/order-\d/g)).toHaveLength(6);
    expect(lite.stdout.match(/order-\d/g)).toHaveLength(6);
  }
}, 180_000);

test('a failure is one readable line: no broker at the address', async () => {
  const closed = await startBroker();
  const address = closed.broker.address;
  await closed.close(); // an address where nothing listens now
  for (const file of ['02-produce.mjs', '03-push-consumer-tag.mjs', '06-pull-consumer.mjs', '08-lite-pull.mjs']) {
    const r = await runExample(file, { ROCKETMQ_TS_ENDPOINTS: address });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(new RegExp(`^${file.replace('.', '\\.')}: .+ \\(is a broker running\\? .+\\)\\n$`));
  }
}, 180_000);

test('a failure is one readable line: a consumer example before 02 created its topic', async () => {
  const empty = await startBroker();
  try {
    for (const file of ['03-push-consumer-tag.mjs', '06-pull-consumer.mjs', '08-lite-pull.mjs']) {
      const r = await runExample(file, { ROCKETMQ_TS_ENDPOINTS: empty.broker.address });
      expect(r.stdout + r.stderr).toMatch(/examples\/02-produce\.mjs/);
      expect(r.stderr).toMatch(/^$|^[^\n]+\n$/);
    }
  } finally {
    await empty.close();
  }
}, 120_000);
