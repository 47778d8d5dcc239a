/**
 * What the broker keeps in its NameServer role beyond routes (RocketMQ: NamesrvController's
 * KVConfigManager, NamesrvConfig and RouteInfoManager's write perm of a broker):
 *
 * - the KV config, namespace → key → value, written to `config/kvConfig.json` under the store directory
 *   on every change (RocketMQ's KVConfigSerializeWrapper `{"configTable":{...}}`) and read back at start;
 * - the NameServer settings GET_NAMESRV_CONFIG shows and UPDATE_NAMESRV_CONFIG changes, in memory only,
 *   checked whole as UPDATE_BROKER_CONFIG checks its keys;
 * - whether an operator wiped this broker's write perm from the routes (WIPE_WRITE_PERM_OF_BROKER), so
 *   producers stop sending to it until ADD_WRITE_PERM_OF_BROKER, a broker restart, or a change to the
 *   topic table (RocketMQ's name server takes the broker's queue data again when the broker registers a
 *   changed topic table).
 */
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import type { ConfigRefusal } from './broker-config-table.js';
import { ConfigFile } from './config-file.js';

/** RocketMQ: KVConfigManager, persisted as KVConfigSerializeWrapper. */
export class KvConfigManager {
  private readonly table = new Map<string, Map<string, string>>();
  private readonly file: ConfigFile;

  constructor(storePath: string, logger: Logger) {
    this.file = new ConfigFile(path.join(storePath, 'config', 'kvConfig.json'), logger);
    const loaded = this.file.load() as { configTable?: Record<string, Record<string, unknown>> } | null | undefined;
    for (const [namespace, kv] of Object.entries(loaded?.configTable ?? {})) {
      if (kv === null || typeof kv !== 'object') continue;
      const m = new Map<string, string>();
      for (const [k, v] of Object.entries(kv)) if (typeof v === 'string') m.set(k, v);
      this.table.set(namespace, m);
    }
  }

  /** Sets a value; resolves once the table is on disk. */
  put(namespace: string, key: string, value: string): Promise<void> {
    let kv = this.table.get(namespace);
    if (!kv) this.table.set(namespace, (kv = new Map()));
    kv.set(key, value);
    return this.persist();
  }

  get(namespace: string, key: string): string | undefined {
    return this.table.get(namespace)?.get(key);
  }

  /** Removes a key (the namespace stays, even empty, as RocketMQ keeps it); resolves once on disk. */
  delete(namespace: string, key: string): Promise<void> {
    this.table.get(namespace)?.delete(key);
    return this.persist();
  }

  /** A namespace's keys and values, or undefined for a namespace never written. */
  list(namespace: string): Record<string, string> | undefined {
    const kv = this.table.get(namespace);
    return kv ? Object.fromEntries(kv) : undefined;
  }

  private persist(): Promise<void> {
    return this.file.persistLatest(() => ({
      configTable: Object.fromEntries([...this.table].map(([ns, kv]) => [ns, Object.fromEntries(kv)])),
    }));
  }
}

type Kind = 'boolean' | 'int' | 'string';

/** RocketMQ's NamesrvConfig and NettyServerConfig keys this broker shows, with their kinds. */
const NAMESRV_KEYS: ReadonlyArray<readonly [string, Kind]> = [
  ['clusterTest', 'boolean'],
  ['configStorePath', 'string'],
  ['kvConfigPath', 'string'],
  ['listenPort', 'int'],
  ['orderMessageEnable', 'boolean'],
  ['productEnvName', 'string'],
  ['rocketmqHome', 'string'],
  ['serverChannelMaxIdleTimeSeconds', 'int'],
];

/** Keys that cannot change on a running NameServer (RocketMQ's configBlackList, and the port). */
const NAMESRV_FIXED = new Set(['configBlackList', 'configStorePath', 'kvConfigPath', 'rocketmqHome', 'listenPort']);

/** The NameServer settings (RocketMQ: NamesrvController.getConfiguration()). */
export class NamesrvConfigTable {
  private readonly kinds = new Map<string, Kind>(NAMESRV_KEYS);
  private readonly values = new Map<string, string>();

  constructor(storePath: string, listenPort: number) {
    this.values.set('clusterTest', 'false');
    this.values.set('configStorePath', '');
    this.values.set('kvConfigPath', path.join(storePath, 'config', 'kvConfig.json'));
    this.values.set('listenPort', String(listenPort));
    this.values.set('orderMessageEnable', 'false');
    this.values.set('productEnvName', 'center');
    this.values.set('rocketmqHome', '');
    this.values.set('serverChannelMaxIdleTimeSeconds', '120');
  }

  /** Java Properties text, keys sorted. */
  formatAll(): string {
    return [...this.values]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([k, v]) => `${k}=${v}\n`)
      .join('');
  }

  get(key: string): string | undefined {
    return this.values.get(key);
  }

  /** Checks every key and value; applies them all when none is refused. */
  update(properties: ReadonlyMap<string, string>): ConfigRefusal | undefined {
    for (const [key, raw] of properties) {
      if (NAMESRV_FIXED.has(key)) {
        return { key, blackListed: true, message: `Can not update config in black list: ${key}` };
      }
      const kind = this.kinds.get(key);
      if (!kind) return { key, blackListed: false, message: `unknown name server config key: ${key}` };
      const value = raw.trim();
      const wrong =
        (kind === 'int' && !/^[+-]?\d{1,9}$/.test(value)) ||
        (kind === 'boolean' && value !== 'true' && value !== 'false');
      if (wrong) {
        const expected = kind === 'int' ? 'an integer' : 'true or false';
        return {
          key,
          blackListed: false,
          message: `bad value for name server config key ${key}: ${raw} is not ${expected}`,
        };
      }
    }
    for (const [key, raw] of properties) this.values.set(key, raw.trim());
    return undefined;
  }
}

/** The NameServer role's state. */
export class NameServerState {
  readonly kvConfig: KvConfigManager;
  readonly config: NamesrvConfigTable;
  /** Set by WIPE_WRITE_PERM_OF_BROKER: routes show this broker's queues without PERM_WRITE. */
  writePermWiped = false;
  /** The topic table's data version when the write perm was wiped; a newer one restores it. */
  private wipedAtVersion = 0;

  constructor(storePath: string, listenPort: number, logger: Logger) {
    this.kvConfig = new KvConfigManager(storePath, logger);
    this.config = new NamesrvConfigTable(storePath, listenPort);
  }

  wipeWritePerm(topicTableVersion: number): void {
    this.writePermWiped = true;
    this.wipedAtVersion = topicTableVersion;
  }

  addWritePerm(): void {
    this.writePermWiped = false;
  }

  /** Whether routes lack PERM_WRITE now: wiped, and the topic table has not changed since. */
  isWritePermWiped(topicTableVersion: number): boolean {
    if (this.writePermWiped && topicTableVersion !== this.wipedAtVersion) this.writePermWiped = false;
    return this.writePermWiped;
  }
}
