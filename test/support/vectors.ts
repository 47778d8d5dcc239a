import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the reference vectors are read from: `RMQ_VECTORS_DIR` when set, else the shared folder
 * beside the project (`../shared/reference/vectors`, as on a developer machine and in CI) when it
 * exists, else the copies in `test/vectors`, so a clone anywhere runs the same tests.
 */
export function vectorPath(file: string): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const shared = path.resolve(here, '../../../shared/reference/vectors');
  const dir = process.env.RMQ_VECTORS_DIR ?? (existsSync(shared) ? shared : path.resolve(here, '../vectors'));
  const p = path.join(dir, file);
  if (!existsSync(p)) throw new Error(`reference vectors not found at ${p} (set RMQ_VECTORS_DIR)`);
  return p;
}
