#!/usr/bin/env node
// Runs every bench/*.bench.mjs in turn, each as its own `node` child process (a fresh heap and JIT per
// bench), forwarding its output. Exits non-zero when any bench fails. `npm run bench` builds first.
// Usage: node bench/run.mjs [name-filter]
//        node bench/run.mjs --compare [flags]   the side-by-side comparison harness (bench/compare.mjs)
import { spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
if (process.argv.includes('--compare')) {
  const args = process.argv.slice(2).filter((a) => a !== '--compare');
  const child = spawn(process.execPath, [path.join(dir, 'compare.mjs'), ...args], {
    stdio: 'inherit',
    cwd: path.dirname(dir),
  });
  // Ctrl-C reaches the child too (same process group): it stops what it started and exits, then so do we.
  process.on('SIGINT', () => {});
  const [code, signal] = await new Promise((resolve) => child.on('exit', (...r) => resolve(r)));
  process.exit(code ?? (signal ? 130 : 1));
}
const filter = process.argv[2] ?? '';
const benches = readdirSync(dir)
  .filter((f) => f.endsWith('.bench.mjs') && f.includes(filter))
  .sort();

function run(file) {
  return new Promise((resolve) => {
    const started = Date.now();
    console.log(`# ${file}`);
    const child = spawn(process.execPath, [path.join(dir, file)], { stdio: 'inherit', cwd: path.dirname(dir) });
    child.on('error', (err) => {
      console.error(`# ${file}: could not start: ${err.message}`);
      resolve(false);
    });
    child.on('exit', (code, signal) => {
      const ok = code === 0;
      const how = signal ? `signal ${signal}` : `exit code ${code}`;
      console.log(`# ${file}: ${ok ? 'ok' : `FAILED (${how})`} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      resolve(ok);
    });
  });
}

if (benches.length === 0) {
  console.error(`no bench/*.bench.mjs${filter ? ` matching "${filter}"` : ''}`);
  process.exit(1);
}
const failed = [];
for (const file of benches) {
  if (!(await run(file))) failed.push(file);
}
if (failed.length > 0) {
  console.error(`# failed: ${failed.join(', ')}`);
  process.exit(1);
}
console.log(`# all ${benches.length} benches ok`);
