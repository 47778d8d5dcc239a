/**
 * `npm run demo` (scripts/demo.mjs) as a user runs it, not on a terminal: plain progress lines, a
 * true summary (every matching message consumed, lag 0 in both groups), everything closed, and the
 * end reached soon after the last message was consumed — not after a held pull's 15 s timeout.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

test('the demo consumes everything, reports lag 0 and ends promptly', async () => {
  const r = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [path.join(root, 'scripts', 'demo.mjs')], {
      cwd: root,
      env: { ...process.env, DEMO_MESSAGES: '300' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(
    /^produced 300\/300 {2}demo_paid_orders: consumed 200\/200 lag 0 {2}demo_big_orders: consumed 150\/150 lag 0$/m,
  );
  expect(r.stdout).toMatch(/demo_paid_orders +tag 'Paid' +consumed 200 of 200 matching .*, lag 0\n/);
  expect(r.stdout).toMatch(/demo_big_orders +SQL 'amount >= 50' +consumed 150 of 150 matching .*, lag 0\n/);
  expect(r.stdout).toMatch(/everything closed\.\n$/);
  // from the last send to lag 0 in both groups: well under a held pull's 15 s
  const produceMs = Number(/produced +300 messages in (\d+) ms/.exec(r.stdout)?.[1]);
  const totalMs = Number(/consumed +\d+ messages in (\d+) ms/.exec(r.stdout)?.[1]);
  expect(totalMs - produceMs).toBeLessThan(10_000);
}, 120_000);
