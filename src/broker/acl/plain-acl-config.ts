/**
 * RocketMQ's `plain_acl.yml` (PlainPermissionManager, PlainAccessConfig): the global white list and the
 * accounts, read into what the validator checks. Every mistake is refused with the line it is on — a
 * broker that silently read a typo as "deny" or "allow" would be worse than one that does not start.
 *
 * RocketMQ reads a permission it does not know as DENY and ignores unknown keys; here both are refused,
 * as are an account without a secret, keys of 6 characters or fewer (AclConstants' minimum lengths), a
 * `topicPerms` entry not of the form `name=PERM`, an address pattern RocketMQ would refuse and an access
 * key given twice.
 */
import { LineCounter, isMap, isScalar, isSeq, parseDocument, type Node as YamlNode } from 'yaml';
import { remoteAddressMatcher, type AddressMatcher } from './remote-address.js';

/** RocketMQ's Permission bits. */
export const Perm = Object.freeze({ DENY: 1, ANY: 2, PUB: 4, SUB: 8 } as const);

/** RocketMQ's MixAll.RETRY_GROUP_TOPIC_PREFIX: a group's permissions are kept under its retry topic. */
export const RETRY_PREFIX = '%RETRY%';

/** AclConstants.ACCESS_KEY_MIN_LENGTH / SECRET_KEY_MIN_LENGTH: a key must be longer than this. */
const KEY_MIN_LENGTH = 6;

const PERMS: Readonly<Record<string, number>> = {
  DENY: Perm.DENY,
  PUB: Perm.PUB,
  SUB: Perm.SUB,
  'PUB|SUB': Perm.PUB | Perm.SUB,
  'SUB|PUB': Perm.PUB | Perm.SUB,
};

const ACCOUNT_KEYS = new Set([
  'accessKey',
  'secretKey',
  'whiteRemoteAddress',
  'admin',
  'defaultTopicPerm',
  'defaultGroupPerm',
  'topicPerms',
  'groupPerms',
]);
const TOP_KEYS = new Set(['globalWhiteRemoteAddresses', 'accounts', 'dataVersion']);

/** One account of the file (RocketMQ: the PlainAccessResource built from a PlainAccessConfig). */
export interface PlainAccount {
  readonly accessKey: string;
  readonly secretKey: string;
  /** Addresses that need neither a signature nor permissions for this account. */
  readonly whiteRemoteAddress: AddressMatcher;
  readonly admin: boolean;
  readonly defaultTopicPerm: number;
  readonly defaultGroupPerm: number;
  /** Topic → permission and `%RETRY%group` → permission; undefined when the account lists neither. */
  readonly resourcePerms: ReadonlyMap<string, number> | undefined;
}

export interface PlainAclConfig {
  /** Addresses whose requests pass without any check (globalWhiteRemoteAddresses). */
  readonly globalWhiteRemoteAddresses: readonly AddressMatcher[];
  readonly accounts: ReadonlyMap<string, PlainAccount>;
}

/** A mistake in the file, with the (1-based) line it is on. */
export class AclConfigError extends Error {
  readonly line: number;
  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.name = 'AclConfigError';
    this.line = line;
  }
}

/** RocketMQ: Permission.parsePermFromString, except that an unknown permission is refused. */
function parsePerm(text: string, line: number, what: string): number {
  const perm = PERMS[text.trim()];
  if (perm === undefined) {
    throw new AclConfigError(line, `${what}: "${text}" is not a permission (DENY, PUB, SUB, PUB|SUB or SUB|PUB)`);
  }
  return perm;
}

/** Reads and checks the text of a `plain_acl.yml`; throws AclConfigError on the first mistake. */
export function parsePlainAclConfig(text: string): PlainAclConfig {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const lineOf = (node: YamlNode | null | undefined): number => (node?.range ? lines.linePos(node.range[0]).line : 1);
  const first = doc.errors[0];
  if (first) {
    const line = first.linePos?.[0].line ?? 1;
    throw new AclConfigError(line, `not valid YAML: ${first.message.split('\n')[0] ?? ''}`);
  }
  /** A scalar's text as written (so `secretKey: 12345678` is the string "12345678"). */
  const scalarText = (node: unknown, what: string): string | undefined => {
    if (node === null || node === undefined) return undefined;
    if (!isScalar(node)) throw new AclConfigError(lineOf(node as YamlNode), `${what} must be a single value`);
    if (node.value === null) return undefined;
    return typeof node.value === 'string' ? node.value : (node.source ?? String(node.value));
  };
  const stringList = (node: unknown, what: string): Array<{ text: string; line: number }> => {
    if (node === null || node === undefined || (isScalar(node) && node.value === null)) return [];
    if (!isSeq(node)) throw new AclConfigError(lineOf(node as YamlNode), `${what} must be a list`);
    const out: Array<{ text: string; line: number }> = [];
    for (const item of node.items) {
      const t = scalarText(item, `an entry of ${what}`);
      if (t !== undefined) out.push({ text: t, line: lineOf(item as YamlNode) });
    }
    return out;
  };
  const matcher = (pattern: string | undefined, line: number, what: string): AddressMatcher => {
    try {
      return remoteAddressMatcher(pattern);
    } catch (e) {
      throw new AclConfigError(line, `${what}: ${(e as Error).message}`);
    }
  };

  const root = doc.contents;
  if (root === null || (isScalar(root) && root.value === null)) {
    return { globalWhiteRemoteAddresses: [], accounts: new Map() };
  }
  if (!isMap(root))
    throw new AclConfigError(lineOf(root), 'the file must be a map (globalWhiteRemoteAddresses, accounts)');
  let globals: AddressMatcher[] = [];
  const accounts = new Map<string, PlainAccount>();
  for (const pair of root.items) {
    const key = scalarText(pair.key, 'a key');
    const keyLine = lineOf(pair.key as YamlNode);
    if (key === undefined || !TOP_KEYS.has(key)) {
      throw new AclConfigError(
        keyLine,
        `unknown key "${key ?? ''}" (globalWhiteRemoteAddresses, accounts, dataVersion)`,
      );
    }
    if (key === 'globalWhiteRemoteAddresses') {
      globals = stringList(pair.value, key).map((e) => matcher(e.text, e.line, key));
    } else if (key === 'accounts') {
      const list = pair.value;
      if (list === null || (isScalar(list) && list.value === null)) continue;
      if (!isSeq(list)) throw new AclConfigError(keyLine, 'accounts must be a list of accounts');
      for (const item of list.items) {
        const account = readAccount(item as YamlNode);
        if (accounts.has(account.accessKey)) {
          throw new AclConfigError(lineOf(item as YamlNode), `the accessKey ${account.accessKey} is given twice`);
        }
        accounts.set(account.accessKey, account);
      }
    }
  }
  return { globalWhiteRemoteAddresses: globals, accounts };

  function readAccount(node: YamlNode): PlainAccount {
    const line = lineOf(node);
    if (!isMap(node)) throw new AclConfigError(line, 'an account must be a map (accessKey, secretKey ...)');
    const fields = new Map<string, { value: unknown; line: number }>();
    for (const pair of node.items) {
      const key = scalarText(pair.key, 'a key') ?? '';
      const keyLine = lineOf(pair.key as YamlNode);
      if (!ACCOUNT_KEYS.has(key)) {
        throw new AclConfigError(keyLine, `unknown account key "${key}" (${[...ACCOUNT_KEYS].join(', ')})`);
      }
      fields.set(key, { value: pair.value, line: keyLine });
    }
    const text = (key: string): { text: string | undefined; line: number } => {
      const f = fields.get(key);
      return { text: f ? scalarText(f.value, key) : undefined, line: f?.line ?? line };
    };
    const ak = text('accessKey');
    if (ak.text === undefined || ak.text.length <= KEY_MIN_LENGTH) {
      throw new AclConfigError(ak.line, `an account needs an accessKey longer than ${KEY_MIN_LENGTH} characters`);
    }
    const sk = text('secretKey');
    if (sk.text === undefined || sk.text.length <= KEY_MIN_LENGTH) {
      // The secret itself never goes into an error.
      throw new AclConfigError(
        sk.line,
        `the account ${ak.text} needs a secretKey longer than ${KEY_MIN_LENGTH} characters`,
      );
    }
    const admin = text('admin');
    if (admin.text !== undefined && admin.text !== 'true' && admin.text !== 'false') {
      throw new AclConfigError(admin.line, `admin must be true or false, not "${admin.text}"`);
    }
    const perm = (key: string): number => {
      const t = text(key);
      // RocketMQ: no default permission is DENY.
      return t.text === undefined ? Perm.DENY : parsePerm(t.text, t.line, key);
    };
    const white = text('whiteRemoteAddress');
    let resourcePerms: Map<string, number> | undefined;
    for (const key of ['groupPerms', 'topicPerms'] as const) {
      const f = fields.get(key);
      if (!f) continue;
      for (const entry of stringList(f.value, key)) {
        const parts = entry.text.split('=').filter((s) => s !== '');
        if (parts.length !== 2 || (parts[0] as string).trim() === '') {
          throw new AclConfigError(entry.line, `${key}: "${entry.text}" is not of the form name=PERM`);
        }
        const name = (parts[0] as string).trim();
        const resource = key === 'topicPerms' ? name : RETRY_PREFIX + name;
        // RocketMQ keeps no map at all for an account whose lists are empty (an admin is then let through).
        resourcePerms ??= new Map();
        resourcePerms.set(resource, parsePerm(parts[1] as string, entry.line, key));
      }
    }
    return {
      accessKey: ak.text,
      secretKey: sk.text,
      whiteRemoteAddress: matcher(white.text, white.line, 'whiteRemoteAddress'),
      admin: admin.text === 'true',
      defaultTopicPerm: perm('defaultTopicPerm'),
      defaultGroupPerm: perm('defaultGroupPerm'),
      resourcePerms,
    };
  }
}
