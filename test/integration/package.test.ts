/**
 * What `npm pack` ships: the compiled package, its docs, README and LICENSE — no sources, tests,
 * build caches, or source maps pointing at files that are not there — and shipped comments that speak
 * to users (no references to the team's internal documents). Then the tarball as a new user meets it:
 * installed into a new app without a warning, every entry point type-checked by a strict TypeScript
 * app, loaded with `import` and `require`, and the `rocketmq-ts` command run through npx.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
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

test('shipped files cite no internal documents, build machines or work sessions', () => {
  const internal = [
    /§/, // a section of an internal document (cite a RocketMQ class, or "RFC N, section M", instead)
    /DESIGN\.md|STYLE\.md|STYLE habit|brief\.md/,
    /\bseed \d{3}\b|\bissue \d+\b|\bsession \d+/i,
    /(?<![\w.~-])\/(?:work|root|home\/[\w.-]+|Users\/[\w.-]+)\//, // an absolute path of the machine that wrote it
  ];
  const offending = files
    .filter((f) => /\.(d\.ts|js|md)$/.test(f))
    .flatMap((f) => {
      const text = readFileSync(path.join(root, f), 'utf8');
      return internal.flatMap((re) => {
        const m = re.exec(text);
        return m ? [`${f}: ${JSON.stringify(text.slice(Math.max(0, m.index - 30), m.index + 30))}`] : [];
      });
    });
  expect(offending).toEqual([]);
});

describe('the packed tarball in a new app', () => {
  const pkg = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as {
    version: string;
    exports: Record<string, unknown>;
  };
  const entryPoints = Object.keys(pkg.exports)
    .filter((k) => k !== './package.json')
    .map((k) => (k === '.' ? 'rocketmq-ts' : `rocketmq-ts/${k.slice(2)}`));
  let app: string;
  let installErr: string;

  const run = (cmd: string, args: string[]): { status: number | null; stdout: string; stderr: string } => {
    const r = spawnSync(cmd, args, { cwd: app, encoding: 'utf8', shell: process.platform === 'win32' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };

  beforeAll(() => {
    app = mkdtempSync(path.join(os.tmpdir(), 'rocketmq-ts-app-'));
    // the real `npm pack`, with its prepack and postpack scripts, as a user runs it
    const packed = JSON.parse(
      execFileSync('npm', ['pack', '--json', '--pack-destination', app], { cwd: root, encoding: 'utf8' }),
    ) as Array<{ filename: string }>;
    const tgz = path.join(app, packed[0]?.filename ?? '');
    writeFileSync(
      path.join(app, 'package.json'),
      JSON.stringify({ name: 'new-app', version: '1.0.0', private: true, type: 'module' }),
    );
    const r = run('npm', ['install', tgz, '--prefer-offline', '--no-audit', '--no-fund']);
    if (r.status !== 0) throw new Error(`npm install failed: ${r.stderr}`);
    installErr = r.stderr;
  }, 240_000);
  afterAll(() => {
    if (app) rmSync(app, { recursive: true, force: true });
  });

  test('installs with no warning and no build step', () => {
    expect(installErr).not.toMatch(/warn|ERR/i);
    const installed = JSON.parse(readFileSync(path.join(app, 'node_modules/rocketmq-ts/package.json'), 'utf8')) as {
      scripts?: Record<string, string>;
    };
    expect(Object.keys(installed.scripts ?? {}).filter((k) => /install|prepare/.test(k))).toEqual([]);
  });

  test('a strict TypeScript app type-checks importing every entry point (ESM and CommonJS)', () => {
    expect(entryPoints).toEqual(expect.arrayContaining(['rocketmq-ts', 'rocketmq-ts/broker', 'rocketmq-ts/remoting']));
    writeFileSync(
      path.join(app, 'app.ts'),
      entryPoints.map((e, i) => `import * as m${i} from '${e}';\nconsole.log(Object.keys(m${i}).length);\n`).join('') +
        `import { AdminClient, Producer } from 'rocketmq-ts';\nimport { Broker } from 'rocketmq-ts/broker';\n` +
        `const broker: Broker = await Broker.start({ storePath: 'x', port: 0, remotingPort: 0 });\n` +
        `const admin = new AdminClient({ namesrvAddr: broker.remotingAddress ?? '' });\n` +
        `new Producer({ producerGroup: 'g', endpoints: broker.address }).events.on('sendError', (_e, info) => info.attempt);\n` +
        `console.log((await admin.consumerProgress('g')).diffTotal);\n`,
    );
    writeFileSync(path.join(app, 'app-cjs.cts'), `import r = require('rocketmq-ts');\nconsole.log(r.Producer.name);\n`);
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          exactOptionalPropertyTypes: true,
          noUncheckedIndexedAccess: true,
          skipLibCheck: false,
          noEmit: true,
          types: ['node'],
          typeRoots: [path.join(root, 'node_modules/@types')],
        },
        files: ['app.ts', 'app-cjs.cts'],
      }),
    );
    const tsc = run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.json']);
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);
  }, 120_000);

  test.each([
    ['node10', 'CommonJS'],
    ['node16', 'Node16'],
    ['nodenext', 'NodeNext'],
    ['bundler', 'ESNext'],
  ])(
    'every entry point’s types resolve with moduleResolution %s',
    (resolution, module) => {
      // one named export per entry point: resolving to the wrong file (or to none, TS2307) fails
      const named: Record<string, string> = {
        'rocketmq-ts': 'Producer',
        'rocketmq-ts/broker': 'Broker',
        'rocketmq-ts/filter': 'compileSql92',
        'rocketmq-ts/codec': 'encodeMessage',
        'rocketmq-ts/remoting': 'encodeRemotingCommand',
      };
      expect(Object.keys(named).sort()).toEqual([...entryPoints].sort());
      const dir = path.join(app, `resolution-${resolution}`);
      mkdirSync(dir, { recursive: true });
      writeFileSync(
        path.join(dir, 'app.ts'),
        Object.entries(named)
          .map(([e, name], i) => `import { ${name} as e${i} } from '${e}';\nexport const n${i}: string = e${i}.name;\n`)
          .join(''),
      );
      writeFileSync(
        path.join(dir, 'tsconfig.json'),
        JSON.stringify({
          compilerOptions: {
            target: 'ES2022',
            module,
            moduleResolution: resolution,
            strict: true,
            esModuleInterop: true,
            skipLibCheck: true, // the declarations themselves are type-checked by the strict app above
            noEmit: true,
            types: ['node'],
            typeRoots: [path.join(root, 'node_modules/@types')],
          },
          files: ['app.ts'],
        }),
      );
      const tsc = run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', dir]);
      expect(tsc.stdout + tsc.stderr).toBe('');
      expect(tsc.status).toBe(0);
    },
    120_000,
  );

  test('every entry point loads with import and with require, silently', () => {
    const script = `for (const e of ${JSON.stringify(entryPoints)}) {
      const a = await import(e); const b = require(e);
      if (Object.keys(a).length === 0 || Object.keys(b).length !== Object.keys(a).length) throw new Error(e);
    }
    console.log('ok');`;
    writeFileSync(
      path.join(app, 'load.mjs'),
      `import { createRequire } from 'node:module';\nconst require = createRequire(import.meta.url);\n${script}\n`,
    );
    const r = run(process.execPath, ['load.mjs']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe('ok\n');
  }, 60_000);

  test('npx rocketmq-ts --version prints the version', () => {
    const r = run('npx', ['--no-install', 'rocketmq-ts', '--version']);
    expect(r.stderr).toBe('');
    expect(r.stdout.trim()).toBe(pkg.version);
  }, 60_000);
});
