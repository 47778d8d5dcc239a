#!/usr/bin/env node
// `npm pack` / `npm publish` hooks. The repository's package.json has a `prepare` script so that a clone
// and a git-URL install build dist/. A packed tarball ships dist/ already, and npm warns about any
// install script of a dependency, so `prepack` removes `prepare` from package.json for the tarball and
// `postpack` puts the file back exactly as it was.
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const manifest = path.join(root, 'package.json');
const saved = path.join(root, '.package.json.prepack');

if (process.argv[2] === 'strip') {
  const text = readFileSync(manifest, 'utf8');
  if (!existsSync(saved)) writeFileSync(saved, text);
  const pkg = JSON.parse(text);
  delete pkg.scripts.prepare;
  writeFileSync(manifest, JSON.stringify(pkg, null, 2) + '\n');
} else if (process.argv[2] === 'restore') {
  if (existsSync(saved)) renameSync(saved, manifest);
} else {
  process.stderr.write('usage: pack-manifest.mjs strip|restore\n');
  process.exit(2);
}
