/**
 * ConsumerFilterManager: the compiled SQL92 subscriptions of each group, per topic (RocketMQ's
 * ConsumerFilterManager / ConsumerFilterData). Heartbeats register them; the pull path asks for the
 * filter of (topic, group) and checks its clientVersion against the pull's subVersion (RocketMQ's PullMessageProcessor checks).
 *
 * RocketMQ's rules, kept here:
 * - tag subscriptions and empty expressions are not registered;
 * - a registration with a clientVersion not newer than the one kept changes nothing (except reviving a
 *   dead entry of the same version); a newer one with the same expression only moves clientVersion; a
 *   changed expression is compiled anew, and when it does not compile the old entry is REMOVED so the
 *   client's pulls fail with FILTER_DATA_NOT_EXIST rather than use a stale filter;
 * - an expression that does not compile is dropped silently for the client (logged as a warning here);
 * - topics a group no longer subscribes, and every topic of a group that left, are marked dead (kept,
 *   as RocketMQ keeps them) and forgotten after `deadRetentionMs` (RocketMQ: 24 h).
 * The bloom-filter bitmap of RocketMQ's consume-queue extension is not built (the store has none).
 */
import { systemClock, type Clock } from '../common/clock.js';
import { silentLogger, type Logger } from '../common/logger.js';
import { compileSql92 } from '../filter/index.js';
import type { BrokerSubscriptionData, ConsumerFilterDataApi, ConsumerFilterManagerApi } from './broker-context.js';
import type { ConsumerFilterRegistry } from './consumer-manager.js';

/** What the manager needs of a compiled expression. */
export interface CompiledFilterExpression {
  matches(properties: Record<string, string>): boolean;
}

export interface ConsumerFilterManagerOptions {
  clock?: Clock;
  logger?: Logger;
  /** How long a dead entry is kept, ms. Default 24 h (RocketMQ: filterDataCleanTimeSpan). */
  deadRetentionMs?: number;
  /** Compiles an expression of a non-tag type; throws when it does not compile. Default: compileSql92. */
  compile?: (expression: string, expressionType: string) => CompiledFilterExpression;
}

/** RocketMQ: ExpressionType.isTagType — null, empty or TAG. */
export function isTagType(expressionType: string | null | undefined): boolean {
  return expressionType == null || expressionType === '' || expressionType === 'TAG';
}

export class ConsumerFilterData implements ConsumerFilterDataApi {
  /** 0 while alive; when it died, ms. */
  deadTime = 0;
  constructor(
    readonly consumerGroup: string,
    readonly topic: string,
    readonly expression: string,
    readonly expressionType: string,
    public clientVersion: number,
    readonly bornTime: number,
    private readonly compiled: CompiledFilterExpression,
  ) {}

  get isDead(): boolean {
    return this.deadTime > 0;
  }

  /** RocketMQ: the evaluation must give exactly TRUE; null, false or an evaluation error mean no match. */
  matches(properties: Record<string, string> | null): boolean {
    try {
      return this.compiled.matches(properties ?? {}) === true;
    } catch {
      return false;
    }
  }
}

const defaultCompile = (expression: string, expressionType: string): CompiledFilterExpression => {
  if (expressionType !== 'SQL92') throw new Error(`unsupported expression type ${expressionType}`);
  return compileSql92(expression);
};

export class ConsumerFilterManager implements ConsumerFilterManagerApi, ConsumerFilterRegistry {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly deadRetentionMs: number;
  private readonly compile: (expression: string, expressionType: string) => CompiledFilterExpression;
  /** topic → group → filter. */
  private readonly filterDataByTopic = new Map<string, Map<string, ConsumerFilterData>>();

  constructor(options: ConsumerFilterManagerOptions = {}) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.logger ?? silentLogger;
    this.deadRetentionMs = options.deadRetentionMs ?? 24 * 3600 * 1000;
    this.compile = options.compile ?? defaultCompile;
  }

  get(topic: string, consumerGroup: string): ConsumerFilterData | undefined {
    return this.filterDataByTopic.get(topic)?.get(consumerGroup);
  }

  getByGroup(consumerGroup: string): ConsumerFilterData[] {
    const out: ConsumerFilterData[] = [];
    for (const byGroup of this.filterDataByTopic.values()) {
      const data = byGroup.get(consumerGroup);
      if (data) out.push(data);
    }
    return out;
  }

  /** RocketMQ: register(group, subList) — each subscription, then topics no longer subscribed die. */
  register(consumerGroup: string, subList: readonly BrokerSubscriptionData[]): void {
    this.cleanDead();
    for (const sub of subList)
      this.registerOne(sub.topic, consumerGroup, sub.subString, sub.expressionType, sub.subVersion);
    const topics = new Set(subList.map((s) => s.topic));
    for (const data of this.getByGroup(consumerGroup)) {
      if (!topics.has(data.topic) && !data.isDead) data.deadTime = Math.max(1, this.clock.now());
    }
  }

  /** RocketMQ: register(topic, group, expression, type, clientVersion). True when something changed. */
  registerOne(topic: string, consumerGroup: string, expression: string, type: string, clientVersion: number): boolean {
    if (isTagType(type) || !expression) return false;
    let byGroup = this.filterDataByTopic.get(topic);
    if (!byGroup) this.filterDataByTopic.set(topic, (byGroup = new Map()));
    const old = byGroup.get(consumerGroup);
    if (old === undefined) {
      const data = this.build(topic, consumerGroup, expression, type, clientVersion);
      if (!data) return false;
      byGroup.set(consumerGroup, data);
      return true;
    }
    if (clientVersion <= old.clientVersion) {
      if (clientVersion === old.clientVersion && old.isDead) {
        old.deadTime = 0;
        return true;
      }
      return false;
    }
    if (old.expression !== expression || old.expressionType !== type) {
      const data = this.build(topic, consumerGroup, expression, type, clientVersion);
      if (!data) {
        // RocketMQ: the new expression does not compile — remove the old one, let the client see the error.
        byGroup.delete(consumerGroup);
        return false;
      }
      byGroup.set(consumerGroup, data);
      return true;
    }
    old.clientVersion = clientVersion;
    old.deadTime = 0;
    return true;
  }

  /** RocketMQ: unRegister(group) — the group left; its filters die. */
  unRegister(consumerGroup: string): void {
    const now = Math.max(1, this.clock.now());
    for (const data of this.getByGroup(consumerGroup)) if (!data.isDead) data.deadTime = now;
  }

  private build(
    topic: string,
    consumerGroup: string,
    expression: string,
    type: string,
    clientVersion: number,
  ): ConsumerFilterData | undefined {
    try {
      const compiled = this.compile(expression, type);
      return new ConsumerFilterData(consumerGroup, topic, expression, type, clientVersion, this.clock.now(), compiled);
    } catch (e) {
      this.logger.warn(
        { topic, consumerGroup, expression, type, err: (e as Error)?.message ?? String(e) },
        'consumer filter expression does not compile; ignored',
      );
      return undefined;
    }
  }

  private cleanDead(): void {
    const now = this.clock.now();
    for (const [topic, byGroup] of this.filterDataByTopic) {
      for (const [group, data] of byGroup) {
        if (data.isDead && now - data.deadTime > this.deadRetentionMs) byGroup.delete(group);
      }
      if (byGroup.size === 0) this.filterDataByTopic.delete(topic);
    }
  }
}
