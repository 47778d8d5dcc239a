/**
 * Atomic JSON persistence of the broker's config files (RocketMQ: ConfigManager), used by every manager:
 * `config/topics.json`, `config/subscriptionGroup.json`, `config/consumerOffset.json` ... under the
 * store directory.
 *
 * A write goes to `<file>.tmp`, is fsynced, the current file becomes `<file>.bak`, and the temp file is
 * renamed over `<file>` (then the directory is fsynced). A crash at any point leaves either the new file,
 * or the old one as `<file>.bak`; `load` reads `<file>` and falls back to `<file>.bak` when the file is
 * missing or not valid JSON. Files are standard JSON (pretty-printed), unlike RocketMQ's fastjson output
 * whose queue-id keys are unquoted.
 */
import { promises as fsp, readFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../common/logger.js';

export class ConfigFile {
  readonly path: string;
  private readonly logger: Logger;
  /** Writes run one at a time, in order. */
  private chain: Promise<void> = Promise.resolve();

  constructor(filePath: string, logger: Logger) {
    this.path = filePath;
    this.logger = logger;
  }

  get bakPath(): string {
    return `${this.path}.bak`;
  }

  /**
   * The parsed content of the file, else of its .bak, else `undefined` when neither exists or parses.
   * Synchronous: managers load once while the broker starts.
   */
  load(): unknown {
    for (const p of [this.path, this.bakPath]) {
      let text: string;
      try {
        text = readFileSync(p, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT')
          this.logger.warn({ err: e, file: p }, 'config file unreadable');
        continue;
      }
      try {
        return JSON.parse(text) as unknown;
      } catch (e) {
        this.logger.warn({ err: e, file: p }, 'config file is not valid JSON, trying the backup');
      }
    }
    return undefined;
  }

  /** Writes `value` atomically; calls are serialized. Rejects only when the write itself failed. */
  persist(value: unknown): Promise<void> {
    const text = JSON.stringify(value, null, 2);
    const run = this.chain.then(() => this.write(text));
    this.chain = run.catch(() => undefined);
    return run;
  }

  private async write(text: string): Promise<void> {
    const dir = path.dirname(this.path);
    mkdirSync(dir, { recursive: true });
    const tmp = `${this.path}.tmp`;
    const fh = await fsp.open(tmp, 'w');
    try {
      await fh.writeFile(text, 'utf8');
      await fh.sync();
    } finally {
      await fh.close();
    }
    try {
      await fsp.rename(this.path, this.bakPath);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
    await fsp.rename(tmp, this.path);
    await syncDir(dir);
  }
}

async function syncDir(dir: string): Promise<void> {
  let fh: fsp.FileHandle | undefined;
  try {
    fh = await fsp.open(dir, 'r');
    await fh.sync();
  } catch {
    // Some platforms cannot fsync a directory; the rename is still atomic.
  } finally {
    await fh?.close();
  }
}
