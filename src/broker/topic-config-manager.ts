/**
 * TopicConfigManager (RocketMQ's name): the broker's topics, persisted in `config/topics.json` as
 * `{"dataVersion": {"counter": n, "timestamp": ms}, "topicConfigTable": {"<topic>": TopicConfig}}`.
 *
 * RocketMQ: the broker starts with its system topics (TBW102 when auto-creation is enabled, the delay
 * topic SCHEDULE_TOPIC_XXXX, SELF_TEST_TOPIC, OFFSET_MOVED_EVENT, and the cluster and broker names), and
 * creates a topic on first send from the template topic (createTopicInSendMessageMethod) or on send-back
 * (createTopicInSendMessageBackMethod).
 */
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import { nameProblem, topicNameProblem } from '../common/names.js';
import { SCHEDULE_TOPIC } from '../common/message.js';
import { AUTO_CREATE_TOPIC_KEY_TOPIC, MAX_QUEUE_NUMS, PermName } from '../protocol/index.js';
import type { TopicConfig, TopicConfigManagerApi } from './broker-context.js';
import { ConfigFile, type ConfigLoadSource } from './config-file.js';

export const SELF_TEST_TOPIC = 'SELF_TEST_TOPIC';
export const OFFSET_MOVED_EVENT = 'OFFSET_MOVED_EVENT';
/** RocketMQ: TopicValidator.RMQ_SYS_BENCHMARK_TOPIC. */
export const BENCHMARK_TOPIC = 'BenchmarkTest';
/** RocketMQ: TopicValidator.NOT_ALLOWED_SEND_TOPIC_SET (the ones this broker knows). */
export const NOT_ALLOWED_SEND_TOPICS: ReadonlySet<string> = new Set([
  SCHEDULE_TOPIC,
  'RMQ_SYS_TRANS_HALF_TOPIC',
  'RMQ_SYS_TRANS_OP_HALF_TOPIC',
  'TRANS_CHECK_MAX_TIME_TOPIC',
  SELF_TEST_TOPIC,
  OFFSET_MOVED_EVENT,
]);

export interface TopicConfigManagerOptions {
  storePath: string;
  brokerName: string;
  clusterName: string;
  autoCreateTopicEnable: boolean;
  /** RocketMQ: traceTopicEnable — start with the trace topic `msgTraceTopicName`. */
  traceTopicEnable?: boolean | undefined;
  msgTraceTopicName?: string | undefined;
  defaultTopicQueueNums: number;
  /** Topics are no longer created on send once the table holds this many (explicit creation is not limited). */
  autoCreateTopicLimit?: number;
  /** Queues of SCHEDULE_TOPIC_XXXX: one per delay level. */
  scheduleTopicQueueNums: number;
  logger: Logger;
}

export function newTopicConfig(topicName: string, queueNums: number, perm: number, topicSysFlag = 0): TopicConfig {
  return {
    topicName,
    readQueueNums: queueNums,
    writeQueueNums: queueNums,
    perm,
    topicFilterType: 'SINGLE_TAG',
    topicSysFlag,
    order: false,
  };
}

const RW = PermName.READ | PermName.WRITE;

export class TopicConfigManager implements TopicConfigManagerApi {
  private readonly table = new Map<string, TopicConfig>();
  private readonly file: ConfigFile;
  private readonly options: TopicConfigManagerOptions;
  private dataVersion = { counter: 0, timestamp: Date.now() };
  private limitLoggedAt = 0;

  constructor(options: TopicConfigManagerOptions) {
    this.options = options;
    this.file = new ConfigFile(path.join(options.storePath, 'config', 'topics.json'), options.logger);
    this.addSystemTopics();
    this.load();
  }

  private addSystemTopics(): void {
    const o = this.options;
    this.table.set(SELF_TEST_TOPIC, newTopicConfig(SELF_TEST_TOPIC, 1, RW));
    if (o.autoCreateTopicEnable) {
      // RocketMQ: TBW102 carries INHERIT so topics created from it copy its queues and perm.
      this.table.set(
        AUTO_CREATE_TOPIC_KEY_TOPIC,
        newTopicConfig(AUTO_CREATE_TOPIC_KEY_TOPIC, o.defaultTopicQueueNums, PermName.INHERIT | RW),
      );
    }
    this.table.set(o.clusterName, newTopicConfig(o.clusterName, 16, PermName.INHERIT));
    this.table.set(o.brokerName, newTopicConfig(o.brokerName, 1, PermName.INHERIT));
    this.table.set(OFFSET_MOVED_EVENT, newTopicConfig(OFFSET_MOVED_EVENT, 1, RW));
    this.table.set(SCHEDULE_TOPIC, newTopicConfig(SCHEDULE_TOPIC, o.scheduleTopicQueueNums, RW));
    // RocketMQ 4.9.8 also starts with its benchmark topic and the cluster's request-reply topic.
    this.table.set(BENCHMARK_TOPIC, newTopicConfig(BENCHMARK_TOPIC, 1024, RW));
    const reply = `${o.clusterName}_REPLY_TOPIC`;
    this.table.set(reply, newTopicConfig(reply, 1, RW));
    // RocketMQ: TopicConfigManager creates the trace topic with one read and one write queue.
    if (o.traceTopicEnable) {
      const trace = o.msgTraceTopicName ?? 'RMQ_SYS_TRACE_TOPIC';
      this.table.set(trace, newTopicConfig(trace, 1, RW));
    }
  }

  /** Where the config file was loaded from at start ('none' for a new store, or when it and its .bak are lost). */
  get configLoadedFrom(): ConfigLoadSource {
    return this.file.loadedFrom;
  }

  private load(): void {
    const data = this.file.load();
    if (!data || typeof data !== 'object') return;
    const table = (data as { topicConfigTable?: unknown }).topicConfigTable;
    if (table && typeof table === 'object') {
      for (const [name, raw] of Object.entries(table as Record<string, unknown>)) {
        const cfg = parseTopicConfig(name, raw);
        if (typeof cfg !== 'string') this.table.set(name, cfg);
        else {
          this.options.logger.warn(
            { topic: name.slice(0, 300), problem: cfg, file: this.file.path },
            'ignoring an invalid topic config on load',
          );
        }
      }
    }
    const dv = (data as { dataVersion?: { counter?: unknown } }).dataVersion;
    if (dv && typeof dv.counter === 'number') this.dataVersion.counter = dv.counter;
  }

  selectTopicConfig(topic: string): TopicConfig | undefined {
    return this.table.get(topic);
  }

  allTopics(): TopicConfig[] {
    return [...this.table.values()];
  }

  /** RocketMQ: isOrderTopic. */
  isOrderTopic(topic: string): boolean {
    return this.table.get(topic)?.order ?? false;
  }

  /**
   * RocketMQ: createTopicInSendMessageMethod. Creates `topic` from the template `defaultTopic` when the
   * template carries the INHERIT perm: queue count min(client's defaultTopicQueueNums, template's write
   * queues), perm without INHERIT. Returns undefined when the template is missing or does not allow it.
   */
  createTopicInSendMessageMethod(
    topic: string,
    defaultTopic: string,
    clientDefaultTopicQueueNums: number,
    topicSysFlag: number,
  ): TopicConfig | undefined {
    const existing = this.table.get(topic);
    if (existing) return existing;
    if (topicNameProblem(topic) !== null || this.autoCreateLimitRemark() !== undefined) return undefined;
    const template = this.table.get(defaultTopic);
    if (!template) {
      this.options.logger.warn({ topic, defaultTopic }, 'create topic failed: the default topic does not exist');
      return undefined;
    }
    let templatePerm = template.perm;
    if (defaultTopic === AUTO_CREATE_TOPIC_KEY_TOPIC && !this.options.autoCreateTopicEnable) templatePerm = RW;
    if ((templatePerm & PermName.INHERIT) === 0) {
      this.options.logger.warn({ topic, defaultTopic }, 'create topic failed: the default topic has no INHERIT perm');
      return undefined;
    }
    const queueNums = Math.max(0, Math.min(clientDefaultTopicQueueNums, template.writeQueueNums));
    if (queueNums === 0) return undefined;
    const cfg: TopicConfig = {
      ...newTopicConfig(topic, queueNums, templatePerm & ~PermName.INHERIT, topicSysFlag),
      topicFilterType: template.topicFilterType,
    };
    this.options.logger.info({ topic, queueNums }, 'topic created on send');
    this.put(cfg);
    return cfg;
  }

  /**
   * Why a send may not create a new topic now (the table holds `autoCreateTopicLimit` topics), or
   * undefined when it may. Logged at most once per minute while the limit holds.
   */
  autoCreateLimitRemark(): string | undefined {
    const limit = this.options.autoCreateTopicLimit;
    if (limit === undefined || this.table.size < limit) return undefined;
    const now = Date.now();
    if (now - this.limitLoggedAt > 60_000) {
      this.limitLoggedAt = now;
      this.options.logger.warn(
        { topics: this.table.size, autoCreateTopicLimit: limit },
        'topic auto-creation limit reached',
      );
    }
    return `the broker already has ${this.table.size} topics, the most it creates automatically (autoCreateTopicLimit ${limit}); create the topic with UPDATE_AND_CREATE_TOPIC`;
  }

  /**
   * RocketMQ: createTopicInSendMessageBackMethod — used for %RETRY% and %DLQ% topics. Not bounded by
   * `autoCreateTopicLimit`: these topics belong to subscription groups, whose number is bounded.
   */
  createTopicIfAbsent(topic: string, queueNums: number, perm: number, topicSysFlag = 0): TopicConfig {
    const existing = this.table.get(topic);
    if (existing) return existing;
    const cfg = newTopicConfig(topic, queueNums, perm, topicSysFlag);
    this.put(cfg);
    return cfg;
  }

  updateTopicConfig(config: TopicConfig): void {
    this.put({ ...config });
  }

  /** RocketMQ: deleteTopicConfig — removes and persists; false when the topic was unknown. */
  deleteTopicConfig(topic: string): boolean {
    if (!this.table.delete(topic)) return false;
    this.dataVersion = { counter: this.dataVersion.counter + 1, timestamp: Date.now() };
    this.persist().catch((e: unknown) => this.options.logger.error({ err: e }, 'persisting topics.json failed'));
    this.options.logger.info({ topic }, 'topic deleted');
    return true;
  }

  /** The table's data version (moves on every change). */
  getDataVersion(): { counter: number; timestamp: number } {
    return { ...this.dataVersion };
  }

  private put(cfg: TopicConfig): void {
    this.table.set(cfg.topicName, cfg);
    this.dataVersion = { counter: this.dataVersion.counter + 1, timestamp: Date.now() };
    this.persist().catch((e: unknown) => this.options.logger.error({ err: e }, 'persisting topics.json failed'));
  }

  /** Writes the table (coalesced: a burst of changes shares one write of the latest table). */
  persist(): Promise<void> {
    return this.file.persistLatest(() => ({
      dataVersion: this.dataVersion,
      topicConfigTable: Object.fromEntries(this.table),
    }));
  }
}

const isInt = (v: unknown, min: number, max: number): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;

/**
 * Why a topic config is refused, or null: the limits UPDATE_AND_CREATE_TOPIC applies, and that loading
 * `topics.json` applies too — queue numbers from 1 to MAX_QUEUE_NUMS, perm within READ|WRITE|INHERIT,
 * a non-negative 32-bit topicSysFlag.
 */
export function topicConfigProblem(c: {
  readQueueNums?: unknown;
  writeQueueNums?: unknown;
  perm?: unknown;
  topicSysFlag?: unknown;
}): string | null {
  if (!isInt(c.readQueueNums, 1, MAX_QUEUE_NUMS) || !isInt(c.writeQueueNums, 1, MAX_QUEUE_NUMS)) {
    return `queue numbers must be between 1 and ${MAX_QUEUE_NUMS}`;
  }
  if (!isInt(c.perm, 0, PermName.READ | PermName.WRITE | PermName.INHERIT)) {
    return 'perm must be a combination of READ 4, WRITE 2 and INHERIT 1';
  }
  if (c.topicSysFlag !== undefined && !isInt(c.topicSysFlag, 0, 0x7fffffff)) {
    return 'topicSysFlag must be a non-negative 32-bit integer';
  }
  return null;
}

/** The topic config a `topics.json` entry holds, or why it is refused. */
function parseTopicConfig(name: string, raw: unknown): TopicConfig | string {
  if (!raw || typeof raw !== 'object') return 'not an object';
  const bad = nameProblem('topic', name, 255);
  if (bad !== null) return bad;
  const problem = topicConfigProblem(raw);
  if (problem !== null) return problem;
  // Checked above: the queue numbers and perm are in range, topicSysFlag absent or in range.
  const r = raw as TopicConfig;
  return {
    topicName: name,
    readQueueNums: r.readQueueNums,
    writeQueueNums: r.writeQueueNums,
    perm: r.perm,
    topicFilterType: r.topicFilterType === 'MULTI_TAG' ? 'MULTI_TAG' : 'SINGLE_TAG',
    topicSysFlag: r.topicSysFlag ?? 0,
    order: r.order === true,
  };
}
