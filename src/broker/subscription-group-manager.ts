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
import { SubscriptionGroupConfigSchema, type SubscriptionGroupConfig } from '../protocol/index.js';
import type { SubscriptionGroupManagerApi } from './broker-context.js';
import { ConfigFile } from './config-file.js';

export interface SubscriptionGroupManagerOptions {
  storePath: string;
  autoCreateSubscriptionGroup: boolean;
  logger: Logger;
}

export class SubscriptionGroupManager implements SubscriptionGroupManagerApi {
  private readonly table = new Map<string, SubscriptionGroupConfig>();
  private readonly file: ConfigFile;
  private readonly options: SubscriptionGroupManagerOptions;
  private dataVersion = { counter: 0, timestamp: Date.now() };

  constructor(options: SubscriptionGroupManagerOptions) {
    this.options = options;
    this.file = new ConfigFile(path.join(options.storePath, 'config', 'subscriptionGroup.json'), options.logger);
    this.load();
  }

  private load(): void {
    const data = this.file.load();
    if (!data || typeof data !== 'object') return;
    const table = (data as { subscriptionGroupTable?: unknown }).subscriptionGroupTable;
    if (table && typeof table === 'object') {
      for (const [name, raw] of Object.entries(table as Record<string, unknown>)) {
        const parsed = SubscriptionGroupConfigSchema.safeParse(raw);
        if (parsed.success && parsed.data.groupName === name && groupNameProblem(name) === null) {
          this.table.set(name, parsed.data);
        } else {
          this.options.logger.warn({ group: name }, 'ignoring an invalid subscription group config on load');
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
    const cfg = SubscriptionGroupConfigSchema.parse({ groupName: group });
    this.options.logger.info({ group }, 'subscription group created');
    this.put(cfg);
    return cfg;
  }

  /** The group's config when it exists; never creates it. */
  selectSubscriptionGroupConfig(group: string): SubscriptionGroupConfig | undefined {
    return this.table.get(group);
  }

  containsSubscriptionGroup(group: string): boolean {
    return this.table.has(group);
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

  persist(): Promise<void> {
    return this.file.persist({
      dataVersion: this.dataVersion,
      subscriptionGroupTable: Object.fromEntries(this.table),
    });
  }
}
