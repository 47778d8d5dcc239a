#!/usr/bin/env node
// Enforces the import boundaries of STYLE.md (habit 13) and DESIGN.md:
//  - network modules (node:net, node:http, undici, ...) only in src/remoting, src/broker and the CLI;
//  - src/protocol and src/filter, and every file marked `@pure`, import no `node:*` module at all;
//  - the client side (src/client, src/remoting, src/index.ts) never imports the broker or the store;
//  - shared code (src/common, src/protocol, src/filter) imports nothing from client, broker, store or remoting;
//  - the store imports nothing from broker, client or remoting;
//  - no import cycles between source files (type-only imports excepted: they vanish at run time).
// Exits non-zero with one line per violation.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const src = path.join(root, 'src');
const NETWORK = /^(node:)?(net|http|https|http2|tls|dgram|dns)$|^undici(\/|$)/;

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const IMPORT_RE = /^\s*(import|export)\s+(type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC_RE = /import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const out = [];
  for (const m of text.matchAll(IMPORT_RE)) out.push({ spec: m[3], typeOnly: Boolean(m[2]) });
  for (const m of text.matchAll(DYNAMIC_RE)) out.push({ spec: m[1], typeOnly: false });
  return { text, imports: out };
}

const rel = (f) => path.relative(root, f).split(path.sep).join('/');
const under = (f, ...dirs) => dirs.some((d) => rel(f).startsWith(`src/${d}/`) || rel(f) === `src/${d}.ts`);

const errors = [];
const graph = new Map();
const files = fs.existsSync(src) ? walk(src) : [];
for (const file of files) {
  const { text, imports } = importsOf(file);
  const pure = /@pure\b/.test(text.slice(0, 2000));
  const edges = [];
  for (const { spec, typeOnly } of imports) {
    if (spec.startsWith('.')) {
      const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
      const resolved = fs.existsSync(target) ? target : path.join(target.replace(/\.ts$/, ''), 'index.ts');
      if (!typeOnly) edges.push(resolved);
      if (under(file, 'client', 'remoting', 'index') && under(resolved, 'broker', 'store'))
        errors.push(`${rel(file)}: the client must not import ${rel(resolved)}`);
      if (under(file, 'common', 'protocol', 'filter') && under(resolved, 'client', 'broker', 'store', 'remoting'))
        errors.push(`${rel(file)}: shared code must not import ${rel(resolved)}`);
      if (under(file, 'store') && under(resolved, 'broker', 'client', 'remoting'))
        errors.push(`${rel(file)}: the store must not import ${rel(resolved)}`);
      continue;
    }
    if (NETWORK.test(spec) && !under(file, 'remoting', 'broker', 'cli'))
      errors.push(`${rel(file)}: network module '${spec}' is only allowed in src/remoting, src/broker and src/cli.ts`);
    if (spec.startsWith('node:') && (pure || under(file, 'protocol', 'filter')))
      errors.push(`${rel(file)}: pure module imports '${spec}'`);
  }
  graph.set(file, edges);
}

// Cycle detection (Tarjan-free DFS with colours); reports each cycle once.
const colour = new Map();
const stack = [];
function visit(f) {
  colour.set(f, 1);
  stack.push(f);
  for (const g of graph.get(f) ?? []) {
    if (!graph.has(g)) continue;
    if (colour.get(g) === 1) {
      const cycle = stack.slice(stack.indexOf(g)).concat(g).map(rel);
      errors.push(`import cycle: ${cycle.join(' -> ')}`);
    } else if (!colour.get(g)) visit(g);
  }
  stack.pop();
  colour.set(f, 2);
}
for (const f of graph.keys()) if (!colour.get(f)) visit(f);

if (errors.length) {
  for (const e of errors) console.error(e);
  process.exit(1);
}
console.log(`import boundaries ok (${files.length} files)`);
