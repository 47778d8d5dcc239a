/**
 * RocketMQ's two-stage message filter, as the store's getMessage and the broker's long-poll wake-up
 * call it: a cheap consume-queue stage on the tags hash code, then a commit-log stage on the message
 * properties (SQL92 only).
 * @pure
 */
import { decodeProperties } from '../common/codec/index.js';
import { MessageConst, RETRY_GROUP_TOPIC_PREFIX } from '../common/message.js';
import { compileSql92, type CompiledSql92 } from './sql92.js';
import { ExpressionType, SUB_ALL, isTagType, type SubscriptionData } from './subscription.js';

/** The structural interface the store and the long-poll service code against. */
export interface MessageFilter {
  /** tagsCode: the consume-queue tags code, or null when unknown (then it matches). */
  isMatchedByConsumeQueue(tagsCode: number | null): boolean;
  /** Either the record's bytes (properties decoded from it) or the properties map (long-poll path); both may be given. */
  isMatchedByCommitLog(record: Buffer | null, properties: Record<string, string> | null): boolean;
}

/** RocketMQ's ConsumerFilterData: a compiled non-tag subscription of one group to one topic. */
export interface ConsumerFilterData {
  consumerGroup?: string;
  topic?: string;
  expression: string | null;
  expressionType: string;
  /** The compiled expression; null when there is none (then everything matches). */
  compiled: CompiledSql92 | null;
  /** When the filter was registered (ms). RocketMQ uses it with the bloom-filter bitmap only. */
  bornTime?: number;
  /** The subscription version (subVersion) of the client that registered it. */
  clientVersion?: number;
}

/**
 * RocketMQ's `ConsumerFilterManager.build`: null for a tag type; otherwise the expression compiled
 * with its type's compiler. Like RocketMQ, an expression that does not compile (or a type with no
 * compiler: only SQL92 has one) gives null rather than an error; use `compileSql92` directly to get
 * the parse error.
 */
export function buildConsumerFilterData(
  topic: string,
  consumerGroup: string,
  expression: string | null | undefined,
  type: string | null | undefined,
  clientVersion: number,
  bornTime: number = Date.now(),
): ConsumerFilterData | null {
  if (isTagType(type) || expression == null) return null;
  if (type !== ExpressionType.SQL92) return null;
  let compiled: CompiledSql92;
  try {
    compiled = compileSql92(expression);
  } catch {
    return null;
  }
  return { consumerGroup, topic, expression, expressionType: type, compiled, bornTime, clientVersion };
}

const isCompiled = (f: CompiledSql92 | ConsumerFilterData): f is CompiledSql92 =>
  typeof (f as CompiledSql92).matches === 'function';

function toFilterData(f: CompiledSql92 | ConsumerFilterData | null | undefined): ConsumerFilterData | null {
  if (f == null) return null;
  if (isCompiled(f)) return { expression: f.expression, expressionType: ExpressionType.SQL92, compiled: f };
  return f;
}

/** Properties from the caller, else decoded from the record; a record that does not decode has none. */
function propertiesOf(record: Buffer | null, properties: Record<string, string> | null): Record<string, string> | null {
  if (properties !== null || record === null) return properties;
  try {
    return decodeProperties(record);
  } catch {
    // the store never serves a corrupt record; if one gets here it simply has no properties
    return null;
  }
}

/** SQL evaluation as the broker decides: only TRUE matches; null, FALSE and errors do not. */
function evaluateFilter(data: ConsumerFilterData | null | undefined, props: Record<string, string> | null): boolean {
  if (data == null || data.expression == null || data.compiled == null) return true;
  return data.compiled.matches(props);
}

/**
 * RocketMQ's ExpressionMessageFilter. Tag subscriptions match on the consume queue by hash code
 * (`*` matches everything, an unknown code matches) and always pass the commit-log stage; SQL92
 * subscriptions always pass the consume-queue stage (no bloom filter here) and are evaluated on the
 * message properties at the commit-log stage.
 */
export class ExpressionMessageFilter implements MessageFilter {
  readonly subscriptionData: SubscriptionData | null;
  readonly consumerFilterData: ConsumerFilterData | null;
  /** true: the consume-queue stage lets everything through. */
  private readonly allByConsumeQueue: boolean;
  /** true: the commit-log stage lets everything through. */
  protected readonly allByCommitLog: boolean;
  private readonly codes: ReadonlySet<number>;

  /**
   * @param subscriptionData the subscription (null matches everything, as RocketMQ).
   * @param filter for a SQL92 subscription, its compiled expression or ConsumerFilterData.
   */
  constructor(subscriptionData: SubscriptionData | null, filter?: CompiledSql92 | ConsumerFilterData | null) {
    this.subscriptionData = subscriptionData;
    this.consumerFilterData = toFilterData(filter);
    const sub = subscriptionData;
    const passAll = sub === null || sub.classFilterMode;
    const tag = sub !== null && isTagType(sub.expressionType);
    this.allByConsumeQueue = passAll || !tag || sub.subString === SUB_ALL;
    this.allByCommitLog = passAll || tag;
    this.codes = new Set(sub?.codeSet ?? []);
  }

  isMatchedByConsumeQueue(tagsCode: number | null): boolean {
    if (this.allByConsumeQueue || tagsCode === null) return true;
    // RocketMQ: codeSet.contains((int) tagsCode), the low 32 bits as a signed int
    return this.codes.has(tagsCode | 0);
  }

  isMatchedByCommitLog(record: Buffer | null, properties: Record<string, string> | null): boolean {
    if (this.allByCommitLog) return true;
    const data = this.consumerFilterData;
    if (data == null || data.expression == null || data.compiled == null) return true;
    return evaluateFilter(data, propertiesOf(record, properties));
  }
}

/**
 * Finds the filter data registered by `group` for `topic` (RocketMQ's ConsumerFilterManager.get).
 * `topic` is undefined when a retried message carries no RETRY_TOPIC property.
 */
export type ConsumerFilterLookup = (
  topic: string | undefined,
  group: string,
) => CompiledSql92 | ConsumerFilterData | null | undefined;

/**
 * RocketMQ's ExpressionForRetryMessageFilter (used when the broker's `filterSupportRetry` is on):
 * for a `%RETRY%group` subscription of SQL type, a message is evaluated with the filter the group
 * registered for the message's original topic (its RETRY_TOPIC property), so SQL filters follow
 * messages into the retry topic. Other subscriptions behave as {@link ExpressionMessageFilter}.
 */
export class ExpressionForRetryMessageFilter extends ExpressionMessageFilter {
  private readonly lookup: ConsumerFilterLookup;

  constructor(
    subscriptionData: SubscriptionData | null,
    filter: CompiledSql92 | ConsumerFilterData | null | undefined,
    lookup: ConsumerFilterLookup,
  ) {
    super(subscriptionData, filter);
    this.lookup = lookup;
  }

  override isMatchedByCommitLog(record: Buffer | null, properties: Record<string, string> | null): boolean {
    if (this.allByCommitLog) return true;
    const sub = this.subscriptionData as SubscriptionData; // non-null: allByCommitLog covers null
    if (!sub.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return super.isMatchedByCommitLog(record, properties);
    const props = propertiesOf(record, properties);
    const realTopic = props?.[MessageConst.RETRY_TOPIC];
    const group = sub.topic.slice(RETRY_GROUP_TOPIC_PREFIX.length);
    // RocketMQ: the filter data of (real topic, group) decides; none registered means a match
    return evaluateFilter(
      toFilterData(this.lookup(typeof realTopic === 'string' ? realTopic : undefined, group)),
      props,
    );
  }
}
