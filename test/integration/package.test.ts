/**
 * What `npm pack` ships: the compiled package, its docs, README and LICENSE — no sources, tests,
 * build caches, or source maps pointing at files that are not there — and shipped comments that speak
 * to users (no references to the team's internal documents).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

let files: string[];

beforeAll(() => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: root,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  });
  files = (JSON.parse(out) as Array<{ files: Array<{ path: string }> }>)[0]?.files.map((f) => f.path) ?? [];
}, 60_000);

test('ships dist, docs, README and LICENSE, and nothing from the workspace', () => {
  expect(files).toEqual(
    expect.arrayContaining(['LICENSE', 'README.md', 'package.json', 'dist/index.js', 'dist/index.d.ts', 'dist/cli.js']),
  );
  const stray = files.filter(
    (f) => !/^(dist\/|docs\/[^/]+\.md$|LICENSE$|README\.md$|package\.json$)/.test(f) || f.includes('tsbuildinfo'),
  );
  expect(stray).toEqual([]);
  expect(readFileSync(path.join(root, 'LICENSE'), 'utf8')).toMatch(/Apache License\s+Version 2\.0/);
});

test('every source map carries its sources', () => {
  const maps = files.filter((f) => f.endsWith('.map'));
  expect(maps.length).toBeGreaterThan(0);
  const empty = maps.filter((f) => {
    const m = JSON.parse(readFileSync(path.join(root, f), 'utf8')) as { sources: string[]; sourcesContent?: unknown[] };
    return !Array.isArray(m.sourcesContent) || m.sourcesContent.length !== m.sources.length;
  });
  expect(empty).toEqual([]);
});

test('shipped files cite no internal documents', () => {
  const internal = /facts §|DESIGN §|STYLE habit|DESIGN\.md|STYLE\.md/;
  const offending = files
    .filter((f) => /\.(d\.ts|js|md)$/.test(f))
    .filter((f) => internal.test(readFileSync(path.join(root, f), 'utf8')));
  expect(offending).toEqual([]);
});
