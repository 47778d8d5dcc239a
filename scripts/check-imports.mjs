#!/usr/bin/env node
// Enforces the import boundaries of the source tree. Usage: node scripts/check-imports.mjs [root]
// (root defaults to this repository; the tests point it at a temporary tree).
//
// Layers:
//  - network modules (node:net, node:http, undici, ...) only in src/remoting, src/broker and the CLI;
//  - src/protocol and src/filter, and every file marked `@pure`, import no `node:*` module at all;
//  - the client side (src/client, src/remoting, src/index.ts) never imports the broker or the store;
//  - shared code (src/common, src/protocol, src/filter) imports nothing from client, broker, store or remoting;
//  - the store imports nothing from broker, client or remoting;
//  - no import cycles between source files, type-only imports included: a type-only circle still
//    means two files that cannot be understood, moved or tested one without the other.
//
// Rooms of the client (src/client/<room>/):
//  - consumer/** (every consumer) imports nothing from producer/ or admin/;
//  - consumer/push, consumer/lite, consumer/pull and consumer/simple import none of each other;
//  - the shared consumer room (files directly in consumer/) imports none of push/, lite/, pull/,
//    simple/: it serves them all, so it cannot lean on one;
//  - instance/ imports none of consumer/, producer/, admin/, trace/, telemetry/: the instance drives the clients
//    through MQConsumerInner and MQProducerInner, which the clients implement;
//  - trace/ (the message trace every client may use) imports only instance/ among the client rooms:
//    it sends its records through MQClientAPI, so a consumer traces without importing the producer;
//  - telemetry/ (OpenTelemetry spans and metrics, used by the producer and every consumer) imports
//    none of consumer/, producer/, admin/: it sees the clients' messages and queues through its own
//    types, so it stays below them;
//  - src/client reaches src/remoting through three files only, so that the client never depends on
//    how a transport is built or speaks (frames, sockets, HTTP):
//      src/remoting/remoting-client.ts    the RemotingClient interface, the one way to send a command;
//      src/remoting/remoting-errors.ts    the errors a transport rejects with (AbortError, ...), which
//                                         the clients rethrow and users catch;
//      src/remoting/transport-factory.ts  builds a TCP or HTTP transport and returns it as a
//                                         RemotingClient, so no client file names a concrete class.
//
// Exits non-zero with one line per violation.
import fs from 'node:fs';
import path from 'node:path';

const root = path.resolve(process.argv[2] ?? path.join(path.dirname(new URL(import.meta.url).pathname), '..'));
const src = path.join(root, 'src');
const NETWORK = /^(node:)?(net|http|https|http2|tls|dgram|dns)$|^undici(\/|$)/;

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? walk(p) : p.endsWith('.ts') ? [p] : [];
  });
}

const IMPORT_RE = /^\s*(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm;
const DYNAMIC_RE = /import\(\s*['"]([^'"]+)['"]\s*\)/g;

function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  const specs = [...text.matchAll(IMPORT_RE), ...text.matchAll(DYNAMIC_RE)].map((m) => m[1]);
  return { text, specs };
}

const rel = (f) => path.relative(root, f).split(path.sep).join('/');
const under = (f, ...dirs) => dirs.some((d) => rel(f).startsWith(`src/${d}/`) || rel(f) === `src/${d}.ts`);

/** The consumer kinds, each its own room under src/client/consumer/. */
const CONSUMER_KINDS = ['push', 'lite', 'pull', 'simple'];
/** The src/remoting files src/client may import (see the header). */
const CLIENT_REMOTING = new Set([
  'src/remoting/remoting-client.ts',
  'src/remoting/remoting-errors.ts',
  'src/remoting/transport-factory.ts',
]);

/** Why `file` may not import `target`, or undefined when the rooms allow it. */
function roomViolation(file, target) {
  if (!under(file, 'client')) return undefined;
  if (under(target, 'remoting') && !CLIENT_REMOTING.has(rel(target)))
    return `the client may import from src/remoting only ${[...CLIENT_REMOTING].map((f) => path.basename(f)).join(', ')}`;
  if (under(file, 'client/consumer') && under(target, 'client/producer', 'client/admin'))
    return 'a consumer must not import the producer or the admin client';
  if (
    under(file, 'client/instance') &&
    under(target, 'client/consumer', 'client/producer', 'client/admin', 'client/trace')
  )
    return 'the client instance must not import a client (it drives them through MQConsumerInner/MQProducerInner)';
  if (under(file, 'client/trace') && under(target, 'client/consumer', 'client/producer', 'client/admin'))
    return 'the message trace imports only the client instance among the client rooms';
  if (under(file, 'client/telemetry') && under(target, 'client/consumer', 'client/producer', 'client/admin'))
    return 'telemetry must not import a client (the clients call it)';
  const kind = CONSUMER_KINDS.find((k) => under(file, `client/consumer/${k}`));
  const targetKind = CONSUMER_KINDS.find((k) => under(target, `client/consumer/${k}`));
  if (kind && targetKind && kind !== targetKind)
    return `the ${kind} consumer must not import the ${targetKind} consumer`;
  if (!kind && targetKind && path.dirname(rel(file)) === 'src/client/consumer')
    return `the shared consumer room must not import the ${targetKind} consumer`;
  return undefined;
}

const errors = [];
const graph = new Map();
const files = fs.existsSync(src) ? walk(src) : [];
for (const file of files) {
  const { text, specs } = importsOf(file);
  const pure = /@pure\b/.test(text.slice(0, 2000));
  const edges = [];
  for (const spec of specs) {
    if (spec.startsWith('.')) {
      const target = path.resolve(path.dirname(file), spec.replace(/\.js$/, '.ts'));
      const resolved = fs.existsSync(target) ? target : path.join(target.replace(/\.ts$/, ''), 'index.ts');
      edges.push(resolved);
      if (under(file, 'client', 'remoting', 'index') && under(resolved, 'broker', 'store'))
        errors.push(`${rel(file)}: the client must not import ${rel(resolved)}`);
      if (under(file, 'common', 'protocol', 'filter') && under(resolved, 'client', 'broker', 'store', 'remoting'))
        errors.push(`${rel(file)}: shared code must not import ${rel(resolved)}`);
      if (under(file, 'store') && under(resolved, 'broker', 'client', 'remoting'))
        errors.push(`${rel(file)}: the store must not import ${rel(resolved)}`);
      const why = roomViolation(file, resolved);
      if (why) errors.push(`${rel(file)}: ${why}: imports ${rel(resolved)}`);
      continue;
    }
    if (NETWORK.test(spec) && !under(file, 'remoting', 'broker', 'cli'))
      errors.push(`${rel(file)}: network module '${spec}' is only allowed in src/remoting, src/broker and src/cli.ts`);
    if (spec.startsWith('node:') && (pure || under(file, 'protocol', 'filter')))
      errors.push(`${rel(file)}: pure module imports '${spec}'`);
  }
  graph.set(file, edges);
}

// Cycle detection: a DFS with colours; each edge back into the current path closes a cycle, reported
// once. Every circle contains such an edge, so a tree with any circle fails.
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
  for (const e of [...new Set(errors)]) console.error(e);
  process.exit(1);
}
console.log(`import boundaries ok (${files.length} files)`);
