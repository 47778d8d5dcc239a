#!/usr/bin/env node
// `npm run soak`: runs every test/soak/*.soak.mjs in turn (each a long version of a suite that
// `npm test` runs short), then prints one table of their figures. A soak file prints its result as
// one line `SOAK {"scenario":..,"runs":..,"sent":..,"acknowledged":..,"consumed":..,"lost":..,
// "duplicates":..,"notes":..}` (several lines for several scenarios) and exits non-zero on failure.
// Usage: npm run soak [-- name-filter]   (SOAK_ROUNDS=N scales the rounds of each file)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const dir = path.join(root, 'test', 'soak');
const filter = process.argv[2] ?? '';
const files = fs
  .readdirSync(dir)
  .filter((f) => f.endsWith('.soak.mjs') && f.includes(filter))
  .sort();
const rows = [];
let failed = 0;
for (const f of files) {
  process.stdout.write(`\n== ${f}\n`);
  const child = spawn(process.execPath, [path.join(dir, f)], { stdio: ['ignore', 'pipe', 'inherit'], cwd: root });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d) => {
    out += d;
    process.stdout.write(d);
  });
  const code = await new Promise((resolve) => child.on('exit', (c, signal) => resolve(c ?? signal)));
  if (code !== 0) failed++;
  for (const line of out.split('\n'))
    if (line.startsWith('SOAK ')) rows.push({ file: f, ...JSON.parse(line.slice(5)) });
  if (code !== 0) rows.push({ file: f, scenario: f, notes: `FAILED (exit ${code})` });
}
const cols = ['scenario', 'runs', 'sent', 'acknowledged', 'consumed', 'lost', 'duplicates', 'notes'];
process.stdout.write(`\n| ${cols.join(' | ')} |\n|${cols.map(() => '---').join('|')}|\n`);
for (const r of rows) process.stdout.write(`| ${cols.map((c) => String(r[c] ?? '')).join(' | ')} |\n`);
process.stdout.write(`\n${files.length - failed}/${files.length} soak files passed\n`);
process.exit(failed === 0 ? 0 : 1);
