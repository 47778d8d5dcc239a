/**
 * The compiled CLI (`dist/cli.js`) as a child process, the way a user runs `rocketmq-ts ...`: output is
 * collected, and the announced addresses are waited for as conditions (never a fixed sleep).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const CLI_PATH = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../dist/cli.js');

/** Child processes start slowly on a busy machine. */
export const CLI_TEST_TIMEOUT_MS = 60_000;

export interface CliRun {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /**
   * The exit code (null when killed by a signal), once the process has exited and its output has been
   * read to the end ('close': 'exit' can come before the last of stderr arrives).
   */
  exit: Promise<number | null>;
  /** Waits until stdout matches `pattern` and returns its first group; throws if the CLI exits first. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<string>;
}

/** Starts `node dist/cli.js ...args`; `env` is merged over the test's environment. */
export function runCli(args: string[], env: Record<string, string> = {}): CliRun {
  const child = spawn(process.execPath, [CLI_PATH, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
  const waitFor = async (pattern: RegExp, timeoutMs = 40_000): Promise<string> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const m = pattern.exec(out);
      if (m) return m[1] ?? m[0];
      if (child.exitCode !== null) throw new Error(`CLI exited early (${child.exitCode}): ${err}`);
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`CLI never printed ${pattern}: ${out} ${err}`);
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  };
  return { child, stdout: () => out, stderr: () => err, exit, waitFor };
}

/** The HTTP address the broker announces (`rocketmq-ts broker listening on http://...`). */
export function listeningAddress(run: CliRun, timeoutMs?: number): Promise<string> {
  return run.waitFor(/rocketmq-ts broker listening on (http:\/\/\S+)/, timeoutMs);
}
