/**
 * OpenFiles: a bounded set of open file descriptors shared by every consume queue of a store. A store
 * with thousands of queues would otherwise hold one descriptor per queue file for the life of the
 * process, and descriptor exhaustion (EMFILE) would refuse every later open — a new segment, a new
 * connection. Files are opened on demand and the least recently used descriptor is closed once more
 * than `max` are open; a descriptor in use by an asynchronous operation (a read, an fdatasync) is
 * pinned and never closed under it.
 */
import fs from 'node:fs';
import path from 'node:path';

/** One file that may hold an open descriptor. */
export interface OpenFile {
  readonly path: string;
  /** The open descriptor, or null while closed (evicted or never opened). */
  fd: number | null;
  /** Asynchronous operations using `fd` right now: a pinned file is never closed. */
  pins: number;
}

export class OpenFiles {
  /** Open files, least recently used first (Map keeps insertion order; a use re-inserts). */
  private readonly lru = new Map<OpenFile, true>();
  /** Descriptors closed to stay within `max` (for tests and metrics). */
  evictions = 0;

  constructor(readonly max: number) {}

  /** Descriptors open now. */
  get size(): number {
    return this.lru.size;
  }

  /**
   * The descriptor of `f`, opening the file when it is closed (`r+`, created when missing) and closing
   * the least recently used unpinned descriptors beyond `max`. Valid until the caller yields to the event
   * loop, unless pinned (`pin`).
   */
  fd(f: OpenFile): number {
    if (f.fd !== null) {
      this.lru.delete(f);
      this.lru.set(f, true);
      return f.fd;
    }
    this.evict(this.max - 1, f);
    fs.mkdirSync(path.dirname(f.path), { recursive: true });
    f.fd = fs.openSync(f.path, fs.existsSync(f.path) ? 'r+' : 'w+');
    this.lru.set(f, true);
    return f.fd;
  }

  /** Runs `op` with the descriptor of `f` kept open until it settles. */
  async withFd<T>(f: OpenFile, op: (fd: number) => Promise<T>): Promise<T> {
    const fd = this.fd(f);
    f.pins++;
    try {
      return await op(fd);
    } finally {
      f.pins--;
      if (f.pins === 0 && f.fd !== null && !this.lru.has(f)) this.close(f);
      if (this.lru.size > this.max) this.evict(this.max);
    }
  }

  /**
   * Closes the descriptor of `f` (its file is deleted, or the store closes); a pinned descriptor is
   * closed when its last operation settles.
   */
  close(f: OpenFile): void {
    this.lru.delete(f);
    if (f.fd !== null && f.pins === 0) {
      const fd = f.fd;
      f.fd = null;
      fs.closeSync(fd);
    }
  }

  /** Closes least recently used, unpinned descriptors until at most `keep` are open. */
  private evict(keep: number, except?: OpenFile): void {
    if (this.lru.size <= keep) return;
    for (const f of this.lru.keys()) {
      if (this.lru.size <= keep) return;
      if (f.pins > 0 || f === except) continue;
      this.close(f);
      this.evictions++;
    }
  }
}
