/**
 * The broker's plain ACL (RocketMQ: the AccessValidator its RPC hook runs before every request): the
 * rules of one `plain_acl.yml`, checked for requests of both listeners, and the file watched so that an
 * edit takes effect without a restart (RocketMQ: AclFileWatchService). A file that cannot be read or is
 * wrong is refused at start; on a later change the old rules stay and the mistake is logged.
 */
import { readFileSync, stat, statSync, type Stats } from 'node:fs';
import { InvalidArgumentError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { AclConfigError, parsePlainAclConfig, type PlainAclConfig } from './plain-acl-config.js';
import { checkAccess, type AclRefusal } from './plain-access-validator.js';
import {
  deleteAccount,
  readDataVersion,
  rewriteAclFile,
  setGlobalWhiteAddrs,
  upsertAccount,
  type AccountUpdate,
  type AclDataVersion,
} from './plain-acl-writer.js';

export interface AclGuardOptions {
  /** How often the file's modification time is looked at, ms. Default 1000. */
  pollIntervalMs?: number;
  /** A change is read this long after the last one seen, so a file written in steps is read once. Default 500. */
  debounceMs?: number;
}

/** What tells one version of the file from another (no stat: the file is gone). */
const versionOf = (st: Stats | undefined): string => (st ? `${st.ino}:${st.size}:${st.mtimeMs}` : 'missing');

function statOrUndefined(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined;
  }
}

interface Loaded {
  readonly config: PlainAclConfig;
  readonly version: AclDataVersion;
}

/** Reads and checks a file; the error names the file and the line that is wrong (never a secret). */
function load(file: string): Loaded {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new InvalidArgumentError(
      'aclFile',
      `cannot read ${file}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
    );
  }
  try {
    return { config: parsePlainAclConfig(text), version: readDataVersion(text, Date.now()) };
  } catch (e) {
    if (e instanceof AclConfigError) throw new InvalidArgumentError('aclFile', `${file} ${e.message}`);
    throw e;
  }
}

/**
 * An HTTP request header (typed JSON values) as the ext fields its signature covers: strings as they
 * are, numbers and booleans as `String()` writes them, other values as JSON, null and absent left out —
 * what the same header is on the remoting wire.
 */
export function httpHeaderFields(header: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (header === null || typeof header !== 'object') return out;
  for (const [key, value] of Object.entries(header as Record<string, unknown>)) {
    if (value === null || value === undefined) continue;
    out[key] =
      typeof value === 'string'
        ? value
        : typeof value === 'number' || typeof value === 'boolean'
          ? String(value)
          : JSON.stringify(value);
  }
  return out;
}

export class AclGuard {
  private config: PlainAclConfig;
  private version: AclDataVersion;
  /** The file's path, as given. */
  readonly file: string;
  private readonly logger: Logger;
  private readonly debounceMs: number;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly poller: ReturnType<typeof setInterval>;
  /** The version of the file last seen by a poll (or read at start). */
  private seen: string;
  private closed = false;
  /** Successful re-reads since start (a bad one is not counted), for tests and stats. */
  reloads = 0;
  /** Re-reads refused since start. */
  reloadFailures = 0;

  private constructor(file: string, loaded: Loaded, seen: string, logger: Logger, options: AclGuardOptions) {
    this.file = file;
    this.config = loaded.config;
    this.version = loaded.version;
    this.logger = logger;
    this.debounceMs = options.debounceMs ?? 500;
    this.seen = seen;
    // Polled rather than fs.watch'ed: editors replace a file (a new inode), which a watch loses; and the
    // version is compared with the one read at start, so a change made just after the start is not missed.
    this.poller = setInterval(() => stat(file, this.onStat), options.pollIntervalMs ?? 1000);
    this.poller.unref();
  }

  /** Reads the file (throwing InvalidArgumentError naming the line that is wrong) and starts watching it. */
  static open(file: string, logger: Logger, options: AclGuardOptions = {}): AclGuard {
    const seen = versionOf(statOrUndefined(file));
    const loaded = load(file);
    logger.info({ aclFile: file, accounts: loaded.config.accounts.size }, 'plain ACL loaded');
    return new AclGuard(file, loaded, seen, logger, options);
  }

  private readonly onStat = (err: Error | null, st: Stats | undefined): void => {
    const version = versionOf(err ? undefined : st);
    if (this.closed || version === this.seen) return;
    this.seen = version;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.reload(), this.debounceMs);
    this.timer.unref();
  };

  /** Reads the file again; a bad file leaves the rules as they were. */
  reload(): boolean {
    if (this.closed) return false;
    try {
      ({ config: this.config, version: this.version } = load(this.file));
      this.reloads++;
      this.logger.info({ aclFile: this.file, accounts: this.config.accounts.size }, 'plain ACL reloaded');
      return true;
    } catch (e) {
      this.reloadFailures++;
      this.logger.error(
        { aclFile: this.file, error: (e as Error).message },
        'plain ACL file not reloaded, the previous rules stay in force',
      );
      return false;
    }
  }

  /** A remoting request (ext fields as sent); undefined when it may go on. */
  checkRemoting(
    code: number,
    extFields: Readonly<Record<string, string | null>> | null | undefined,
    body: Buffer | null | undefined,
    remoteAddress: string,
  ): AclRefusal | undefined {
    return checkAccess(this.config, { code, fields: extFields ?? null, body, remoteAddress });
  }

  /** An HTTP request (the frame's header JSON, signed as its ext fields); undefined when it may go on. */
  checkHttp(code: number, header: unknown, body: Buffer | undefined, remoteAddress: string): AclRefusal | undefined {
    return checkAccess(this.config, { code, fields: httpHeaderFields(header), body, remoteAddress });
  }

  /** The file's DataVersion (RocketMQ: PlainPermissionManager.getAclConfigDataVersion). */
  get dataVersion(): AclDataVersion {
    return this.version;
  }

  /**
   * Creates or updates an account in the file and in force. Throws AclChangeError for a value the file
   * may not hold (the rules and file then stay as they were).
   */
  updateAccount(update: AccountUpdate): void {
    this.rewrite(upsertAccount(update), { accessKey: update.accessKey }, 'ACL account updated');
  }

  /** Removes an account from the file and from force; false when there is no such account. */
  deleteAccount(accessKey: string): boolean {
    return this.rewrite(deleteAccount(accessKey), { accessKey }, 'ACL account deleted');
  }

  /** Replaces the global white addresses in the file and in force. */
  updateGlobalWhiteAddrs(addresses: readonly string[]): void {
    this.rewrite(setGlobalWhiteAddrs(addresses), { globalWhiteAddrs: addresses }, 'ACL global white addresses updated');
  }

  private rewrite(change: Parameters<typeof rewriteAclFile>[2], what: Record<string, unknown>, msg: string): boolean {
    // Read now, not from memory, so an edit made by hand and not yet picked up by the poller is kept.
    const done = rewriteAclFile(this.file, readFileSync(this.file, 'utf8'), change, Date.now());
    if (!done) return false;
    this.config = done.config;
    this.version = done.version;
    // The poller is told this version is ours, so it does not read the file again as a foreign change.
    this.seen = versionOf(statOrUndefined(this.file));
    clearTimeout(this.timer);
    this.logger.info({ aclFile: this.file, ...what, counter: done.version.counter }, msg);
    return true;
  }

  /** Stops watching the file. */
  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.poller);
  }
}
