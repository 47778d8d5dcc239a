/**
 * The broker's settings as RocketMQ's GET_BROKER_CONFIG / UPDATE_BROKER_CONFIG show and change them
 * (RocketMQ: Configuration, BrokerConfig, MessageStoreConfig), under RocketMQ's key names.
 *
 * An update is checked whole before anything changes: a key this broker does not have, a value of the
 * wrong type, or a key that cannot change on a running broker (its identity, its ports, its store
 * layout such as `mappedFileSizeCommitLog`) refuses the whole update, naming the key. Accepted values
 * are kept in this table, shown by GET_BROKER_CONFIG, and bump its data version; they are not written
 * to disk, so the broker's own options win again at its next start.
 * @pure
 */
import type { ResolvedBrokerOptions } from './broker-options.js';

type Kind = 'boolean' | 'int' | 'string';

/** Keys that may not change while the broker runs (RocketMQ refuses its configBlackList the same way). */
const FIXED_KEYS = new Set([
  'brokerName',
  'brokerClusterName',
  'brokerId',
  'listenPort',
  'brokerIP1',
  'storePathRootDir',
  'storePathCommitLog',
  'mappedFileSizeCommitLog',
  'mappedFileSizeConsumeQueue',
  'messageDelayLevel',
  'brokerConfigPath',
  'rocketmqHome',
  'configBlackList',
]);

/** Why an update is refused: the key, and whether it may not change at all (black list) or is wrong. */
export interface ConfigRefusal {
  key: string;
  blackListed: boolean;
  message: string;
}

export class BrokerConfigTable {
  private readonly values = new Map<string, string>();
  private readonly kinds = new Map<string, Kind>();
  private version = { counter: 0, timestamp: 0 };

  constructor(o: ResolvedBrokerOptions, listenPort: number, now: number) {
    const add = (key: string, kind: Kind, value: string | number | boolean | undefined): void => {
      this.kinds.set(key, kind);
      this.values.set(key, value === undefined ? '' : String(value));
    };
    add('brokerName', 'string', o.brokerName);
    add('brokerClusterName', 'string', o.clusterName);
    add('brokerId', 'int', 0);
    add('brokerIP1', 'string', o.host);
    add('listenPort', 'int', listenPort);
    add('brokerPermission', 'int', o.brokerPermission);
    add('autoCreateTopicEnable', 'boolean', o.autoCreateTopicEnable);
    add('defaultTopicQueueNums', 'int', o.defaultTopicQueueNums);
    add('autoCreateSubscriptionGroup', 'boolean', o.autoCreateSubscriptionGroup);
    add('longPollingEnable', 'boolean', o.longPollingEnable);
    add('shortPollingTimeMills', 'int', o.shortPollingTimeMills);
    add('enablePropertyFilter', 'boolean', o.enablePropertyFilter);
    add('filterSupportRetry', 'boolean', o.filterSupportRetry);
    add('litePullMessageEnable', 'boolean', o.litePullMessageEnable);
    add('flushConsumerOffsetInterval', 'int', o.flushConsumerOffsetIntervalMs);
    add('channelNotActiveInterval', 'int', o.channelExpiredTimeoutMs);
    add('storePathRootDir', 'string', o.storePath);
    add('storePathCommitLog', 'string', `${o.storePath}/commitlog`);
    const store = o.store as Record<string, unknown>;
    add('mappedFileSizeCommitLog', 'int', (store.mappedFileSizeCommitLog as number | undefined) ?? 1024 * 1024 * 1024);
    add('mappedFileSizeConsumeQueue', 'int', (store.mappedFileSizeConsumeQueue as number | undefined) ?? 300_000 * 20);
    add('messageDelayLevel', 'string', (store.messageDelayLevel as string | undefined) ?? '');
    add('fileReservedTime', 'int', (store.fileReservedTime as number | undefined) ?? 72);
    add('deleteWhen', 'string', (store.deleteWhen as string | undefined) ?? '04');
    add('flushDiskType', 'string', (store.flushDiskType as string | undefined) ?? 'ASYNC_FLUSH');
    add('brokerRole', 'string', 'ASYNC_MASTER');
    add('traceTopicEnable', 'boolean', o.traceTopicEnable);
    add('msgTraceTopicName', 'string', o.msgTraceTopicName);
    this.version = { counter: 0, timestamp: now };
  }

  /** `key=value` lines in key order (RocketMQ: getAllConfigsFormatString). */
  formatAll(): string {
    return [...this.values.keys()]
      .sort()
      .map((k) => `${k}=${this.values.get(k) ?? ''}\n`)
      .join('');
  }

  get(key: string): string | undefined {
    return this.values.get(key);
  }

  /** The table's data version as RocketMQ writes it in GetBrokerConfigResponseHeader.version. */
  dataVersionJson(): string {
    return JSON.stringify({ counter: this.version.counter, timestamp: this.version.timestamp });
  }

  /** Checks every key and value; applies them all when none is refused. */
  update(properties: ReadonlyMap<string, string>, now: number): ConfigRefusal | undefined {
    for (const [key, raw] of properties) {
      const kind = this.kinds.get(key);
      if (FIXED_KEYS.has(key)) {
        return { key, blackListed: true, message: `Can not update config in black list: ${key}` };
      }
      if (!kind) return { key, blackListed: false, message: `unknown broker config key: ${key}` };
      const value = raw.trim();
      const wrong =
        (kind === 'int' && !/^[+-]?\d{1,18}$/.test(value)) ||
        (kind === 'boolean' && value !== 'true' && value !== 'false');
      if (wrong)
        return {
          key,
          blackListed: false,
          message: `bad value for broker config key ${key}: ${raw} is not ${kind === 'int' ? 'an integer' : 'true or false'}`,
        };
    }
    for (const [key, raw] of properties) this.values.set(key, raw.trim());
    this.version = { counter: this.version.counter + 1, timestamp: now };
    return undefined;
  }
}

/** Java's Properties text (`key=value` lines, `#` comments) → a map; RocketMQ: MixAll.string2Properties. */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const t = line.trim();
    if (t === '' || t.startsWith('#') || t.startsWith('!')) continue;
    const i = t.search(/[=:]/);
    if (i < 0) out.set(t, '');
    else out.set(t.slice(0, i).trim(), t.slice(i + 1).trim());
  }
  return out;
}
