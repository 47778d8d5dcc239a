/**
 * ConfigFile: atomic JSON persistence with a .bak fallback.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../../src/common/logger.js';
import { ConfigFile } from '../../../src/broker/config-file.js';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-cfg-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('ConfigFile', () => {
  test('persist writes pretty JSON and keeps the previous version as .bak', async () => {
    const f = new ConfigFile(path.join(dir, 'config', 'x.json'), silentLogger);
    await f.persist({ v: 1 });
    await f.persist({ v: 2 });
    expect(JSON.parse(readFileSync(f.path, 'utf8'))).toEqual({ v: 2 });
    expect(JSON.parse(readFileSync(f.bakPath, 'utf8'))).toEqual({ v: 1 });
    expect(existsSync(`${f.path}.tmp`)).toBe(false);
    expect(f.load()).toEqual({ v: 2 });
  });

  test('load falls back to .bak when the file is missing or corrupt', async () => {
    const f = new ConfigFile(path.join(dir, 'x.json'), silentLogger);
    await f.persist({ v: 1 });
    await f.persist({ v: 2 });
    writeFileSync(f.path, '{"v": 2, torn');
    expect(f.load()).toEqual({ v: 1 });
    rmSync(f.path);
    expect(f.load()).toEqual({ v: 1 });
  });

  test('load of nothing is undefined', () => {
    expect(new ConfigFile(path.join(dir, 'none.json'), silentLogger).load()).toBeUndefined();
  });

  test('concurrent persists are serialized; the last one wins', async () => {
    const f = new ConfigFile(path.join(dir, 'x.json'), silentLogger);
    await Promise.all(Array.from({ length: 10 }, (_, i) => f.persist({ i })));
    expect(f.load()).toEqual({ i: 9 });
  });
});
