/**
 * Every JavaScript/TypeScript snippet of README.md runs as written: copied into a `.mjs` file of a new
 * app that has the package installed, run with plain `node` (the README promises Node 20.19+), it
 * ends on its own with exit code 0. The snippets name the README's addresses (the CLI broker's
 * http://127.0.0.1:8081, a NameServer at 127.0.0.1:9876, a store under /tmp); the test points those
 * at an in-process broker and a temp dir, and changes nothing else.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');

interface Snippet {
  lang: string;
  code: string;
  line: number;
}

function readmeSnippets(): Snippet[] {
  const text = readFileSync(path.join(root, 'README.md'), 'utf8');
  const out: Snippet[] = [];
  for (const m of text.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)) {
    out.push({ lang: m[1] ?? '', code: m[2] ?? '', line: text.slice(0, m.index).split('\n').length });
  }
  return out;
}

const snippets = readmeSnippets();
const programs = snippets.filter((s) => ['js', 'mjs', 'ts'].includes(s.lang));

let f: BrokerFixture;
let app: string;
beforeAll(async () => {
  f = await startBroker({ remotingPort: 0 });
  app = mkdtempSync(path.join(os.tmpdir(), 'rocketmq-ts-readme-'));
  writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'readme-app', private: true }));
  mkdirSync(path.join(app, 'node_modules'));
  symlinkSync(root, path.join(app, 'node_modules', 'rocketmq-ts'), 'dir');
});
afterAll(async () => {
  await f.close();
  rmSync(app, { recursive: true, force: true });
});

function runSnippet(file: string, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [file], { cwd: app, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // a snippet that never ends is the failure this guards against: stop it and say so
    const timer = setTimeout(() => {
      stderr += `\n[did not end within ${timeoutMs} ms]`;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

test('the README has runnable snippets, each fenced as sh, js or ts', () => {
  expect(programs.length).toBeGreaterThanOrEqual(4);
  expect(snippets.filter((s) => !['sh', 'js', 'ts'].includes(s.lang)).map((s) => `line ${s.line}: ${s.lang}`)).toEqual(
    [],
  );
});

test('every js/ts snippet runs as written with node and ends on its own', async () => {
  const failures: string[] = [];
  for (const [i, s] of programs.entries()) {
    const store = mkdtempSync(path.join(os.tmpdir(), 'rocketmq-ts-readme-store-'));
    const code = s.code
      .replaceAll('http://127.0.0.1:8081', f.broker.address)
      .replaceAll('127.0.0.1:9876', f.broker.remotingAddress ?? '')
      .replaceAll('/tmp/rocketmq-ts-store', store);
    const file = path.join(app, `snippet-${i}.mjs`);
    writeFileSync(file, code);
    const r = await runSnippet(file, 40_000);
    rmSync(store, { recursive: true, force: true });
    if (r.code !== 0 || /Error|^\s+at /m.test(r.stderr)) {
      failures.push(`README line ${s.line} exited ${r.code}:\n${r.stderr.slice(0, 600)}`);
    }
  }
  expect(failures).toEqual([]);
}, 240_000);
