/**
 * Changes to a `plain_acl.yml` asked over the wire (RocketMQ: PlainPermissionManager.updateAccessConfig,
 * deleteAccessConfig, updateGlobalWhiteAddrsConfig). Each edits the YAML document (so the other accounts,
 * fields and comments stay as written), moves its `dataVersion` on, and is checked with the loader before
 * anything is written; the file is then replaced in one rename, so a reader never sees half of it.
 */
import { renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { isMap, isScalar, isSeq, parseDocument, type Document, type YAMLMap } from 'yaml';
import { AclConfigError, parsePlainAclConfig, type PlainAclConfig } from './plain-acl-config.js';

/** RocketMQ's DataVersion of the file (its `dataVersion` list's first entry). */
export interface AclDataVersion {
  readonly counter: number;
  readonly timestamp: number;
}

/** An account as UPDATE_AND_CREATE_ACL_CONFIG gives it (RocketMQ: PlainAccessConfig). */
export interface AccountUpdate {
  readonly accessKey: string;
  readonly secretKey: string;
  /** Written when given (blank included: it then matches no address). */
  readonly whiteRemoteAddress?: string | undefined;
  readonly admin: boolean;
  /** Written when not blank. */
  readonly defaultTopicPerm?: string | undefined;
  readonly defaultGroupPerm?: string | undefined;
  /** `name=PERM` entries; written (replacing the old list) when given. */
  readonly topicPerms?: readonly string[] | undefined;
  readonly groupPerms?: readonly string[] | undefined;
}

/** A change that would leave the file wrong; the message names the value, never a secret. */
export class AclChangeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AclChangeError';
  }
}

/** The file's version as written, or counter 0 stamped `now` when it has none (as RocketMQ starts one). */
export function readDataVersion(text: string, now: number): AclDataVersion {
  const doc: Document = parseDocument(text);
  const first = doc.getIn(['dataVersion', 0]) as unknown;
  if (!isMap(first)) return { counter: 0, timestamp: now };
  const num = (key: string): number | undefined => {
    const v = Number(first.get(key));
    return Number.isFinite(v) ? v : undefined;
  };
  return { counter: num('counter') ?? 0, timestamp: num('timestamp') ?? now };
}

type Change = (doc: Document) => boolean;

/** The account whose accessKey is `accessKey`, with its place in the list. */
function findAccount(doc: Document, accessKey: string): { index: number; node: YAMLMap } | undefined {
  const accounts = doc.get('accounts');
  if (!isSeq(accounts)) return undefined;
  for (let index = 0; index < accounts.items.length; index++) {
    const node = accounts.items[index];
    if (isMap(node)) {
      const key = node.get('accessKey', true);
      const text = isScalar(key) ? String(key.source ?? key.value) : undefined;
      if (text === accessKey) return { index, node };
    }
  }
  return undefined;
}

/** Creates the account or updates its fields in place (RocketMQ: createAclAccessConfigMap). */
export const upsertAccount =
  (u: AccountUpdate): Change =>
  (doc) => {
    let node = findAccount(doc, u.accessKey)?.node;
    if (!node) {
      if (!isSeq(doc.get('accounts'))) doc.set('accounts', doc.createNode([]));
      node = doc.createNode({ accessKey: u.accessKey }) as YAMLMap;
      doc.addIn(['accounts'], node);
    }
    const put = (key: string, value: unknown): void => node.set(key, doc.createNode(value));
    put('secretKey', u.secretKey);
    if (u.whiteRemoteAddress !== undefined) put('whiteRemoteAddress', u.whiteRemoteAddress);
    put('admin', u.admin);
    if (u.defaultTopicPerm) put('defaultTopicPerm', u.defaultTopicPerm);
    if (u.defaultGroupPerm) put('defaultGroupPerm', u.defaultGroupPerm);
    if (u.topicPerms !== undefined) put('topicPerms', [...u.topicPerms]);
    if (u.groupPerms !== undefined) put('groupPerms', [...u.groupPerms]);
    return true;
  };

/** Removes the account; false when the file has none with that accessKey. */
export const deleteAccount =
  (accessKey: string): Change =>
  (doc) => {
    const found = findAccount(doc, accessKey);
    if (!found) return false;
    doc.deleteIn(['accounts', found.index]);
    return true;
  };

/** Replaces the global white list (RocketMQ: updateGlobalWhiteAddrsConfig). */
export const setGlobalWhiteAddrs =
  (addresses: readonly string[]): Change =>
  (doc) => {
    doc.set('globalWhiteRemoteAddresses', doc.createNode([...addresses]));
    return true;
  };

export interface AclRewrite {
  readonly config: PlainAclConfig;
  readonly version: AclDataVersion;
}

/**
 * Applies `change` to the file's text and, when it changed something, writes the result: checked with the
 * loader first (an AclChangeError names what is wrong), then a temp file renamed over the old one.
 * Undefined when `change` found nothing to change (the file is left alone).
 */
export function rewriteAclFile(file: string, text: string, change: Change, now: number): AclRewrite | undefined {
  const doc: Document = parseDocument(text);
  if (doc.errors.length > 0) throw new AclChangeError('the ACL file on disk is not valid YAML');
  const root = doc.contents as unknown;
  if (root === null || (isScalar(root) && root.value === null)) doc.contents = doc.createNode({}) as YAMLMap;
  else if (!isMap(root)) throw new AclChangeError('the ACL file on disk is not a map');
  if (!change(doc)) return undefined;
  const old = readDataVersion(text, now);
  const version: AclDataVersion = { counter: old.counter + 1, timestamp: now };
  doc.set('dataVersion', doc.createNode([{ counter: version.counter, timestamp: version.timestamp }]));
  const out = doc.toString();
  let config: PlainAclConfig;
  try {
    config = parsePlainAclConfig(out);
  } catch (e) {
    // The loader's messages name the field and value but never a secret.
    if (e instanceof AclConfigError) throw new AclChangeError(e.message.replace(/^line \d+: /, ''));
    throw e;
  }
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  try {
    // The file holds secrets: the new one keeps the old one's mode.
    writeFileSync(temp, out, { mode: statSync(file).mode & 0o777 });
    renameSync(temp, file);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
  return { config, version };
}
