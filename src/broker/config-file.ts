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
 *
 * Writes are coalesced: at most one is in flight per file, and calls made meanwhile share the next write,
 * which serializes the latest snapshot when it starts. A burst of changes (thousands of groups created
 * by a flood of new names) costs two writes, not one serialization and one queued write per change.
 */
import { promises as fsp, readFileSync, mkdirSync, copyFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../common/logger.js';

/** Where `load` found the content. */
export type ConfigLoadSource =
  /** The file itself. */
  | 'file'
  /** The file was missing or unreadable and its .bak was used. */
  | 'bak'
  /** Neither the file nor its .bak exists (a new store, or both lost). */
  | 'none'
  /** A file or .bak exists but neither parses: the content is lost. */
  | 'unreadable';

export class ConfigFile {
  readonly path: string;
  private readonly logger: Logger;
  /** The write in flight, if any. */
  private writing: Promise<void> | undefined;
  /** The snapshot the next write takes (latest wins) and the promise its callers hold. */
  private next:
    { snapshot: () => unknown; done: Promise<void>; resolve: () => void; reject: (e: unknown) => void } | undefined;
  /** Where the last `load` found the content. */
  loadedFrom: ConfigLoadSource = 'none';

  constructor(filePath: string, logger: Logger) {
    this.path = filePath;
    this.logger = logger;
  }

  get bakPath(): string {
    return `${this.path}.bak`;
  }

  /**
   * The parsed content of the file, else of its .bak, else `undefined` when neither exists or parses
   * (`loadedFrom` says which). A file that exists but parses in neither copy is kept aside as
   * `<file>.unreadable-<ms>` before the broker writes a new one. Synchronous: managers load once while the
   * broker starts.
   */
  load(): unknown {
    let present = 0;
    for (const p of [this.path, this.bakPath]) {
      let text: string;
      try {
        text = readFileSync(p, 'utf8');
      } catch (e) {
        if ((e as NodeJS.ErrnoException).code !== 'ENOENT') {
          present++;
          this.logger.warn({ err: e, file: p }, 'config file unreadable');
        }
        continue;
      }
      present++;
      try {
        const value = JSON.parse(text) as unknown;
        this.loadedFrom = p === this.path ? 'file' : 'bak';
        if (this.loadedFrom === 'bak') {
          this.logger.warn({ file: this.path, backup: p, bytes: text.length }, 'config file restored from its .bak');
        }
        return value;
      } catch (e) {
        this.logger.warn({ err: e, file: p }, 'config file is not valid JSON, trying the backup');
      }
    }
    this.loadedFrom = present > 0 ? 'unreadable' : 'none';
    if (present > 0) {
      let keptAs: string | undefined = `${this.path}.unreadable-${Date.now()}`;
      try {
        copyFileSync(this.path, keptAs);
      } catch {
        keptAs = undefined; // only the .bak existed (it stays until the next write), or the file cannot be read
      }
      this.logger.error(
        { file: this.path, keptAs },
        'config file and its .bak are both unreadable: their content is lost and the broker starts without it',
      );
    }
    return undefined;
  }

  /** Writes `value` atomically. Rejects only when the write carrying it failed. */
  persist(value: unknown): Promise<void> {
    return this.persistLatest(() => value);
  }

  /**
   * Writes what `snapshot()` returns when the write starts. While a write is in flight the call joins the
   * next one (the last snapshot given wins); the promise settles when a write that began after this call
   * has finished.
   */
  persistLatest(snapshot: () => unknown): Promise<void> {
    if (!this.writing) return this.start(snapshot);
    if (this.next) {
      this.next.snapshot = snapshot;
      return this.next.done;
    }
    let settle!: { resolve: () => void; reject: (e: unknown) => void };
    const done = new Promise<void>((resolve, reject) => {
      settle = { resolve, reject };
    });
    this.next = { snapshot, done, ...settle };
    return done;
  }

  /** Resolves once no write is in flight or queued. */
  async idle(): Promise<void> {
    while (this.writing) await this.writing.catch(() => undefined);
  }

  private start(snapshot: () => unknown): Promise<void> {
    let run: Promise<void>;
    try {
      run = this.write(JSON.stringify(snapshot(), null, 2));
    } catch (e) {
      run = Promise.reject(e as Error);
    }
    this.writing = run;
    // Registered first, so it runs before any caller sees the write settle: no second write can start
    // between this one and the queued one.
    run.then(this.afterWrite, this.afterWrite);
    return run;
  }

  private readonly afterWrite = (): void => {
    const queued = this.next;
    this.next = undefined;
    if (!queued) {
      this.writing = undefined;
      return;
    }
    this.start(queued.snapshot).then(queued.resolve, queued.reject);
  };

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
