/**
 * `npx rocketmq-ts broker` runs the broker under npm and a shell, and a SIGTERM to npm ends both of
 * them without reaching the broker. A broker started through npm (npm's environment variables set)
 * therefore shuts down once its launcher is gone. Here a small wrapper process plays npm: it starts
 * the CLI broker with npm's variables and is then killed outright.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { tempStorePath, waitFor } from '../../support/broker-fixture.js';
import { CLI_PATH, CLI_TEST_TIMEOUT_MS } from '../../support/cli-process.js';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

test(
  'a broker started through npm shuts down when its launcher dies',
  async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-cli-launcher-'));
    const store = tempStorePath('rmq-cli-');
    const log = path.join(dir, 'broker.log');
    const wrapper = path.join(dir, 'launcher.mjs');
    // the launcher: starts the broker (output to a file, so it outlives the launcher's pipes), says its pid
    writeFileSync(
      wrapper,
      `import { spawn } from 'node:child_process';
import { openSync } from 'node:fs';
const out = openSync(${JSON.stringify(log)}, 'a');
const child = spawn(process.execPath, [${JSON.stringify(CLI_PATH)}, 'broker', '--store', ${JSON.stringify(store)}, '--port', '0', '--log-level', 'silent'], {
  stdio: ['ignore', out, out],
  env: { ...process.env, npm_lifecycle_event: 'npx', npm_execpath: '/usr/lib/node_modules/npm/bin/npm-cli.js', npm_command: 'exec' },
});
console.log(child.pid);
setInterval(() => {}, 1000);
`,
    );
    const launcher = spawn(process.execPath, [wrapper], { stdio: ['ignore', 'pipe', 'inherit'] });
    let brokerPid = 0;
    try {
      let out = '';
      launcher.stdout.on('data', (d: Buffer) => (out += d.toString()));
      await waitFor(() => /^\d+\n/.test(out), 30_000);
      brokerPid = Number(out.trim());
      await waitFor(() => readFileSync(log, 'utf8').includes('listening on'), 40_000);

      launcher.kill('SIGKILL'); // as npm and its shell vanish: nothing forwards a signal to the broker
      await waitFor(() => !alive(brokerPid), 20_000);
      expect(readFileSync(log, 'utf8')).toMatch(/rocketmq-ts broker: its launcher \(npm\) exited, shutting down/);
    } finally {
      launcher.kill('SIGKILL');
      if (brokerPid > 0 && alive(brokerPid)) process.kill(brokerPid, 'SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      rmSync(store, { recursive: true, force: true });
    }
  },
  CLI_TEST_TIMEOUT_MS,
);
