/**
 * The check that `npm test` leaves the work tree clean (jest's globalSetup records `git status`, its
 * globalTeardown fails the run listing what is new), on a scratch git repository.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assertWorktreeUnchanged, worktreeStatus } from '../../support/worktree-guard.mjs';

let repo: string;
const git = (...args: string[]): void => {
  const r = spawnSync('git', args, { cwd: repo, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
};

beforeEach(() => {
  repo = mkdtempSync(path.join(os.tmpdir(), 'rmq-worktree-'));
  git('init', '-q');
  writeFileSync(path.join(repo, '.gitignore'), 'dist/\nnode_modules/\n');
  writeFileSync(path.join(repo, 'README.md'), 'hello\n');
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@example.com', 'commit', '-q', '-m', 'init');
});
afterEach(() => {
  rmSync(repo, { recursive: true, force: true });
});

test('a file the run wrote into the work tree fails the check, named', () => {
  writeFileSync(path.join(repo, 'notes.txt'), 'a developer’s own untracked file, there before the run\n');
  const before = worktreeStatus(repo);
  expect(before).toEqual(['?? notes.txt']);
  // what a test run might do: a dump in a new folder (as mqadmin consumerStatus writes), a stray file
  mkdirSync(path.join(repo, '1796139315060'));
  writeFileSync(path.join(repo, '1796139315060', '192.0.2.2@1734#1'), '#Consumer Properties#\n');
  writeFileSync(path.join(repo, 'out.log'), 'x\n');
  expect(() => assertWorktreeUnchanged(repo, before)).toThrow(
    /left files in the work tree[^]*:\n {2}\?\? 1796139315060\/192\.0\.2\.2@1734#1\n {2}\?\? out\.log$/,
  );
});

test('edits to tracked files do not count: a developer may be editing while the tests run', () => {
  const before = worktreeStatus(repo);
  writeFileSync(path.join(repo, 'README.md'), 'changed\n');
  expect(worktreeStatus(repo)).toEqual([' M README.md']);
  expect(() => assertWorktreeUnchanged(repo, before)).not.toThrow();
});

test('ignored output (dist/, node_modules/) and files there before the run pass', () => {
  writeFileSync(path.join(repo, 'notes.txt'), 'there before\n');
  const before = worktreeStatus(repo);
  mkdirSync(path.join(repo, 'dist'));
  writeFileSync(path.join(repo, 'dist', 'index.js'), 'built\n');
  expect(() => assertWorktreeUnchanged(repo, before)).not.toThrow();
});

test('outside a git checkout there is nothing to check', () => {
  const plain = mkdtempSync(path.join(os.tmpdir(), 'rmq-not-a-repo-'));
  try {
    expect(worktreeStatus(plain)).toBeNull();
    expect(() => assertWorktreeUnchanged(plain, null)).not.toThrow();
  } finally {
    rmSync(plain, { recursive: true, force: true });
  }
});
