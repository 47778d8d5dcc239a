/**
 * A broker configuration file in RocketMQ's `broker.conf` form (Java properties: `key=value` lines, `#`
 * or `!` comments), as the CLI's `--config FILE` reads it. Every broker option and every store option
 * goes under its own name, in one file, as RocketMQ mixes BrokerConfig and MessageStoreConfig keys;
 * RocketMQ's names are accepted for the settings named differently here (`brokerClusterName`,
 * `listenPort`, `storePathRootDir`). Each value is typed by its setting; an unknown key, a repeated key or
 * a value of the wrong type is refused with the file's name and line. Ranges are checked afterwards,
 * with the options themselves.
 * @pure
 */
import { STORE_DEFAULTS } from '../store/index.js';
import { BROKER_DEFAULTS, type BrokerOptions, type BrokerStoreOptions } from './broker-options.js';

type Kind = 'int' | 'boolean' | 'string';

/** A setting of the file that cannot be used: the line it is on and why. */
export class BrokerConfFileError extends Error {
  constructor(
    readonly source: string,
    readonly line: number,
    detail: string,
  ) {
    super(`${source}:${line}: ${detail}`);
    this.name = 'BrokerConfFileError';
  }
}

const kindOf = (value: unknown): Kind | undefined =>
  typeof value === 'number'
    ? 'int'
    : typeof value === 'boolean'
      ? 'boolean'
      : typeof value === 'string'
        ? 'string'
        : undefined;

/** Broker settings that have no default but may be set in the file. */
const OPTIONAL_BROKER_KEYS: Record<string, Kind> = {
  storePath: 'string',
  host: 'string',
  port: 'int',
  advertisedAddress: 'string',
  remotingPort: 'int',
  accessToken: 'string',
  aclFile: 'string',
};

/** RocketMQ's names for settings this broker names differently. */
const ROCKETMQ_NAMES: Record<string, string> = {
  brokerClusterName: 'clusterName',
  listenPort: 'remotingPort',
  storePathRootDir: 'storePath',
};

/** Each setting's kind, by the type of its default (or its entry above). */
function kinds(defaults: object, extra: Record<string, Kind> = {}): Map<string, Kind> {
  const out = new Map(Object.entries(extra));
  for (const [key, value] of Object.entries(defaults)) {
    const kind = kindOf(value);
    if (kind !== undefined) out.set(key, kind);
  }
  return out;
}

const BROKER_KEYS = kinds(BROKER_DEFAULTS, OPTIONAL_BROKER_KEYS);
const STORE_KEYS = kinds(STORE_DEFAULTS);

function typed(kind: Kind, raw: string, fail: (detail: string) => never): number | boolean | string {
  if (kind === 'string') return raw;
  if (kind === 'boolean') {
    const v = raw.toLowerCase();
    if (v !== 'true' && v !== 'false') fail(`must be true or false, got '${raw}'`);
    return v === 'true';
  }
  if (!/^-?\d+$/.test(raw) || !Number.isSafeInteger(Number(raw))) fail(`must be a whole number, got '${raw}'`);
  return Number(raw);
}

/**
 * The broker options `text` sets (`source` names the file in errors): broker settings at the top level,
 * store settings under `store`. Throws BrokerConfFileError naming the line of the first bad setting.
 */
export function brokerOptionsFromConf(text: string, source: string): Partial<BrokerOptions> {
  const broker: Record<string, unknown> = {};
  const store: Record<string, unknown> = {};
  const seen = new Map<string, number>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const fail = (detail: string): never => {
      throw new BrokerConfFileError(source, i + 1, detail);
    };
    const sep = line.search(/[=:]/);
    if (sep <= 0) fail(`expected key=value, got '${line}'`);
    const given = line.slice(0, sep).trim();
    const raw = line.slice(sep + 1).trim();
    const key = ROCKETMQ_NAMES[given] ?? given;
    const first = seen.get(key);
    if (first !== undefined) fail(`${given} is already set on line ${first}`);
    seen.set(key, i + 1);
    const brokerKind = BROKER_KEYS.get(key);
    const storeKind = STORE_KEYS.get(key);
    if (brokerKind !== undefined) broker[key] = typed(brokerKind, raw, (d) => fail(`${given} ${d}`));
    else if (storeKind !== undefined) store[key] = typed(storeKind, raw, (d) => fail(`${given} ${d}`));
    else fail(`unknown setting '${given}'`);
  }
  const options = broker as Partial<BrokerOptions>;
  if (Object.keys(store).length > 0) options.store = store as BrokerStoreOptions;
  return options;
}
