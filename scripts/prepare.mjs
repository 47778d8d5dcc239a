#!/usr/bin/env node
// npm runs `prepare` after `npm install` in a clone and when the package is installed from a git URL.
// Build dist/ there (the sources are present and the TypeScript compiler is installed); in every other
// install — a packed tarball or a registry, which ship dist/ already — do nothing and print nothing.
import { existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (existsSync(path.join(root, 'src')) && existsSync(tsc)) {
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  process.exit(r.status ?? 1);
}
