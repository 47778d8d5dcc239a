// After the whole suite: the work tree must be as globalSetup found it (see worktree-guard.mjs).
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { assertWorktreeUnchanged } from './worktree-guard.mjs';

export default function globalTeardown() {
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
  assertWorktreeUnchanged(root, globalThis.__rocketmqTsWorktreeBefore ?? null);
}
