#!/usr/bin/env node
// npm runs `prepare` after `npm install` in a clone and when the package is installed from a git URL.
// Build dist/ there (the sources are present and the TypeScript compiler is installed); in every other
// install — a packed tarball or a registry, which ship dist/ already — do nothing and print nothing.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const tsc = path.join(root, 'node_modules', 'typescript', 'bin', 'tsc');
if (existsSync(path.join(root, 'src')) && existsSync(tsc)) {
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status === 0) pruneStale(path.join(root, 'dist'), path.join(root, 'src'));
  process.exit(r.status ?? 1);
}

/**
 * Removes what the incremental build left of a source file that was since deleted or renamed (its .js,
 * .d.ts and maps): `npm pack` runs this script, and a tarball must not ship a module nobody maintains.
 * Only files without a source go, so a test or demo reading dist/ meanwhile is not disturbed.
 */
function pruneStale(dir, srcDir) {
  if (!existsSync(dir)) return;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const file = path.join(dir, e.name);
    if (e.isDirectory()) {
      pruneStale(file, path.join(srcDir, e.name));
      if (readdirSync(file).length === 0) rmSync(file, { recursive: true, force: true });
      continue;
    }
    const stem = /^(.*?)(\.d)?\.js(\.map)?$|^(.*?)\.d\.ts(\.map)?$/.exec(e.name);
    const base = stem?.[1] ?? stem?.[4];
    if (base !== undefined && !existsSync(path.join(srcDir, `${base}.ts`))) rmSync(file, { force: true });
  }
}
