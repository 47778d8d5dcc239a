// Tests that run code in a child process (crash tests, the CLI) use the compiled package: build it
// once before the suite (tsc is incremental, so a repeated run is quick). A failed build does not
// stop the suite — `npm test` type-checks first, and only the child-process tests need dist/ — but
// it is reported loudly.
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import path from 'node:path';
import { worktreeStatus } from './worktree-guard.mjs';

export default function globalSetup() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  // read back by global-teardown.js: the run must not leave new files in the work tree
  globalThis.__rocketmqTsWorktreeBefore = worktreeStatus(root);
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'],
    { cwd: root, encoding: 'utf8' },
  );
  if (r.status !== 0) {
    process.stderr.write(
      `\n[global-setup] building dist/ failed; child-process tests will fail:\n${r.stdout}${r.stderr}\n`,
    );
  }
}
