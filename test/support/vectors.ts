import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Where the shared reference vectors live: `../shared/reference/vectors` beside the project (as on a
 * developer machine and in CI). `RMQ_VECTORS_DIR` overrides it.
 */
export function vectorPath(file: string): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dir = process.env.RMQ_VECTORS_DIR ?? path.resolve(here, '../../../shared/reference/vectors');
  const p = path.join(dir, file);
  if (!existsSync(p)) throw new Error(`reference vectors not found at ${p} (set RMQ_VECTORS_DIR)`);
  return p;
}
