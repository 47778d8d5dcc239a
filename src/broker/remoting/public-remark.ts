/**
 * What a client is told about a failure: never the broker's file-system paths (a failed store write's
 * error names the store's files). A remark naming a path is replaced by a generic one that keeps the
 * error code (ENOSPC, EACCES ...) so the client still knows what kind of failure it was; the full text is
 * logged on the broker.
 */
import type { Logger } from '../../common/logger.js';

/** An absolute POSIX path of two segments or more, or a Windows drive path. */
const PATH_RE = /(?:^|[\s'"(=:,])\/[^\s/'"]+\/[^\s'"]*|(?:^|[\s'"(=:,])[A-Za-z]:\\[^\s'"]*|\\\\[^\s\\'"]+\\/;
const ERRNO_RE = /\bE[A-Z]{2,}\b/;

export function hasPath(remark: string): boolean {
  return PATH_RE.test(remark);
}

/** `remark` as it may be sent to a client (the same string when it names no path). */
export function publicRemark(remark: string, logger: Logger, context: Record<string, unknown>): string {
  if (!PATH_RE.test(remark)) return remark;
  logger.error({ ...context, remark }, 'an answer named a file-system path; the client gets a generic remark');
  const code = ERRNO_RE.exec(remark)?.[0];
  return code ? `system error (${code}), details in the broker log` : 'system error, details in the broker log';
}
