// `npm test` leaves no new files in the work tree: a file a test writes into the checkout (a tool's dump
// relative to the working directory, a forgotten temp file) ends up committed by the next `git add -A`.
// globalSetup records `git status`; globalTeardown compares and fails the run listing the untracked
// files that are new. Changes to tracked files are not counted: a developer editing during a run makes
// them too. Outside a git checkout (a tarball, no git installed) nothing is checked.
import { spawnSync } from 'node:child_process';

/**
 * The `git status --porcelain` entries of the work tree holding `dir` (untracked files one by one,
 * ignored files left out), or null when `dir` is not in a git work tree or git cannot run.
 */
export function worktreeStatus(dir) {
  const r = spawnSync('git', ['status', '--porcelain=v1', '--untracked-files=all', '-z'], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (r.error || r.status !== 0) return null;
  return r.stdout.split('\0').filter((e) => e !== '');
}

/** The untracked files (`?? path` entries) of `after` that were not in `before`. */
export function newEntries(before, after) {
  const seen = new Set(before);
  return after.filter((e) => e.startsWith('?? ') && !seen.has(e));
}

/** Throws, listing them, when the work tree has untracked files it did not have in `before`; null skips. */
export function assertWorktreeUnchanged(dir, before) {
  if (before === null) return;
  const after = worktreeStatus(dir);
  if (after === null) return;
  const added = newEntries(before, after);
  if (added.length > 0) {
    throw new Error(
      `the tests left files in the work tree (write them under os.tmpdir() instead):\n  ${added.join('\n  ')}`,
    );
  }
}
