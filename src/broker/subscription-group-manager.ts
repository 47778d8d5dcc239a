/**
 * SubscriptionGroupManager (RocketMQ's name): consumer-group configurations, persisted in
 * `config/subscriptionGroup.json` as
 * `{"dataVersion": {"counter": n, "timestamp": ms}, "subscriptionGroupTable": {"<group>": SubscriptionGroupConfig}}`.
 *
 * RocketMQ: findSubscriptionGroupConfig creates the group with RocketMQ's defaults on first sight
 * when autoCreateSubscriptionGroup is on and the name is legal (SubscriptionGroupManager.java:258-279).
 */
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import { groupNameProblem } from '../common/names.js';
import { ONE_SHOT, tieredSafeParse } from '../common/option-errors.js';
import { SubscriptionGroupConfigSchema, type SubscriptionGroupConfig } from '../protocol/index.js';
import type { SubscriptionGroupManagerApi } from './broker-context.js';
import { ConfigFile, type ConfigLoadSource } from './config-file.js';

export interface SubscriptionGroupManagerOptions {
  storePath: string;
  autoCreateSubscriptionGroup: boolean;
  /** Groups are no longer created on first use once the table holds this many (explicit creation is not limited). */
  autoCreateSubscriptionGroupLimit?: number;
  logger: Logger;
}

export class SubscriptionGroupManager implements SubscriptionGroupManagerApi {
  private readonly table = new Map<string, SubscriptionGroupConfig>();
  private readonly file: ConfigFile;
  private readonly options: SubscriptionGroupManagerOptions;
  private dataVersion = { counter: 0, timestamp: Date.now() };
  private limitLoggedAt = 0;

  constructor(options: SubscriptionGroupManagerOptions) {
    this.options = options;
    this.file = new ConfigFile(path.join(options.storePath, 'config', 'subscriptionGroup.json'), options.logger);
    this.load();
  }

  /** Where the config file was loaded from at start ('none' for a new store, or when it and its .bak are lost). */
  get configLoadedFrom(): ConfigLoadSource {
    return this.file.loadedFrom;
  }

  private load(): void {
    const data = this.file.load();
    if (!data || typeof data !== 'object') return;
    const table = (data as { subscriptionGroupTable?: unknown }).subscriptionGroupTable;
    if (table && typeof table === 'object') {
      for (const [name, raw] of Object.entries(table as Record<string, unknown>)) {
        const parsed = tieredSafeParse(SubscriptionGroupConfigSchema, raw);
        if (parsed.success && parsed.data.groupName === name && groupNameProblem(name) === null) {
          this.table.set(name, parsed.data);
        } else {
          const problem = parsed.success
            ? (groupNameProblem(name) ?? `groupName '${parsed.data.groupName.slice(0, 300)}' differs from its key`)
            : parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
          this.options.logger.warn(
            { group: name.slice(0, 300), problem, file: this.file.path },
            'ignoring an invalid subscription group config on load',
          );
        }
      }
    }
    const dv = (data as { dataVersion?: { counter?: unknown } }).dataVersion;
    if (dv && typeof dv.counter === 'number') this.dataVersion.counter = dv.counter;
  }

  findSubscriptionGroupConfig(group: string): SubscriptionGroupConfig | undefined {
    const existing = this.table.get(group);
    if (existing) return existing;
    if (!this.options.autoCreateSubscriptionGroup || groupNameProblem(group) !== null) return undefined;
    if (this.autoCreateLimitRemark() !== undefined) return undefined;
    // RocketMQ's defaults for a group, once per group: not worth compiling zod's fast path for.
    const cfg = SubscriptionGroupConfigSchema.parse({ groupName: group }, ONE_SHOT);
    this.options.logger.info({ group }, 'subscription group created');
    this.put(cfg);
    return cfg;
  }

  /**
   * Why a group may not be created on first use now (the table holds `autoCreateSubscriptionGroupLimit`
   * groups), or undefined when it may. Logged at most once per minute while the limit holds.
   */
  autoCreateLimitRemark(): string | undefined {
    const limit = this.options.autoCreateSubscriptionGroupLimit;
    if (limit === undefined || this.table.size < limit || !this.options.autoCreateSubscriptionGroup) return undefined;
    const now = Date.now();
    if (now - this.limitLoggedAt > 60_000) {
      this.limitLoggedAt = now;
      this.options.logger.warn(
        { groups: this.table.size, autoCreateSubscriptionGroupLimit: limit },
        'subscription group auto-creation limit reached',
      );
    }
    return `the broker already has ${this.table.size} subscription groups, the most it creates automatically (autoCreateSubscriptionGroupLimit ${limit}); create the group with UPDATE_AND_CREATE_SUBSCRIPTIONGROUP`;
  }

  /** The group's config when it exists; never creates it. */
  selectSubscriptionGroupConfig(group: string): SubscriptionGroupConfig | undefined {
    return this.table.get(group);
  }

  containsSubscriptionGroup(group: string): boolean {
    return this.table.has(group);
  }

  /** Every group's config (a copy of the table). */
  allSubscriptionGroups(): SubscriptionGroupConfig[] {
    return [...this.table.values()].map((c) => ({ ...c }));
  }

  /** The table's data version (SubscriptionGroupWrapper.dataVersion). */
  getDataVersion(): { counter: number; timestamp: number } {
    return { ...this.dataVersion };
  }

  /** RocketMQ: deleteSubscriptionGroupConfig. False when the group had no config. */
  deleteSubscriptionGroupConfig(group: string): boolean {
    if (!this.table.delete(group)) return false;
    this.dataVersion = { counter: this.dataVersion.counter + 1, timestamp: Date.now() };
    this.persist().catch((e: unknown) =>
      this.options.logger.error({ err: e }, 'persisting subscriptionGroup.json failed'),
    );
    return true;
  }

  updateSubscriptionGroupConfig(config: SubscriptionGroupConfig): void {
    this.put({ ...config });
  }

  private put(cfg: SubscriptionGroupConfig): void {
    this.table.set(cfg.groupName, cfg);
    this.dataVersion = { counter: this.dataVersion.counter + 1, timestamp: Date.now() };
    this.persist().catch((e: unknown) =>
      this.options.logger.error({ err: e }, 'persisting subscriptionGroup.json failed'),
    );
  }

  /** Writes the table (coalesced: a burst of changes shares one write of the latest table). */
  persist(): Promise<void> {
    return this.file.persistLatest(() => ({
      dataVersion: this.dataVersion,
      subscriptionGroupTable: Object.fromEntries(this.table),
    }));
  }
}
