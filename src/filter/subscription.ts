/**
 * Tag subscriptions: RocketMQ's SubscriptionData and FilterAPI, and the client's exact-string
 * re-check of tags (PullAPIWrapper.processPullResult).
 * @pure
 */
import { tagsHashCode } from '../common/codec/java-string.js';
import { SubscriptionExpressionError } from './errors.js';
import { javaTrim } from './java-number.js';

/** RocketMQ's ExpressionType names. */
export const ExpressionType = Object.freeze({ TAG: 'TAG', SQL92: 'SQL92' } as const);

/** RocketMQ's `SubscriptionData.SUB_ALL`. */
export const SUB_ALL = '*';

/**
 * RocketMQ's SubscriptionData. `tagsSet` and `codeSet` are arrays holding each value once, in the
 * order the tags appear in `subString` (Java keeps HashSets, which have no order; compare as sets).
 * Arrays serialize to JSON as RocketMQ's sets do.
 */
export interface SubscriptionData {
  topic: string;
  subString: string;
  /** The tags, trimmed, without duplicates; empty for `*` and for non-tag expressions. */
  tagsSet: string[];
  /** `tagsHashCode` of each tag (signed 32-bit), without duplicates. */
  codeSet: number[];
  /** `'TAG'`, `'SQL92'`, or whatever type the subscriber gave (FilterAPI.build keeps it). */
  expressionType: string;
  /** `Date.now()` when built; a newer version replaces an older one on the broker. */
  subVersion: number;
  classFilterMode: boolean;
}

/** RocketMQ's `ExpressionType.isTagType`: null, undefined, `''` and `'TAG'` are tag types. */
export function isTagType(type: string | null | undefined): boolean {
  return type == null || type === '' || type === ExpressionType.TAG;
}

/**
 * RocketMQ's `FilterAPI.buildSubscriptionData(topic, subString)`:
 * - null, undefined, `''` or exactly `'*'` subscribe to everything (`subString` `'*'`, empty sets);
 * - otherwise `subString` is split on `||`, each part trimmed as Java's String.trim does (chars up to
 *   U+0020; NBSP stays), empty parts dropped, duplicates collapsed. `' * '` is the literal tag `*`;
 * - an expression made only of `||` separators (`'||'`, `'||||'`) throws "subString split error".
 */
export function buildSubscriptionData(topic: string, subString: string | null | undefined): SubscriptionData {
  const data: SubscriptionData = {
    topic,
    subString: subString ?? SUB_ALL,
    tagsSet: [],
    codeSet: [],
    expressionType: ExpressionType.TAG,
    subVersion: Date.now(),
    classFilterMode: false,
  };
  if (subString == null || subString === '' || subString === SUB_ALL) {
    data.subString = SUB_ALL;
    return data;
  }
  const parts = subString.split('||');
  // Java's String.split drops trailing empty strings; nothing left means the split failed
  while (parts.length > 0 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 0) throw new SubscriptionExpressionError(`subString split error: '${subString}'`);
  const tags = new Set<string>();
  const codes = new Set<number>();
  for (const part of parts) {
    const tag = javaTrim(part);
    if (tag === '' || tags.has(tag)) continue;
    tags.add(tag);
    codes.add(tagsHashCode(tag));
  }
  data.tagsSet = [...tags];
  data.codeSet = [...codes];
  return data;
}

/**
 * RocketMQ's `FilterAPI.build(topic, subString, type)`: a null/undefined type or `'TAG'` parses the
 * tags as {@link buildSubscriptionData}; any other type (even `''` or `'tag'`) keeps the expression
 * as it is with that type and empty sets, and requires a non-empty expression.
 */
export function buildSubscriptionDataWithType(
  topic: string,
  subString: string | null | undefined,
  type: string | null | undefined,
): SubscriptionData {
  if (type == null || type === ExpressionType.TAG) return buildSubscriptionData(topic, subString);
  if (subString == null || subString === '') {
    throw new SubscriptionExpressionError(`Expression can't be null! ${type}`);
  }
  return {
    topic,
    subString,
    tagsSet: [],
    codeSet: [],
    expressionType: type,
    subVersion: Date.now(),
    classFilterMode: false,
  };
}

/**
 * The client's re-check after a pull (PullAPIWrapper.processPullResult): when the subscription has
 * tags (and is not in class filter mode), a message is kept only if its tag is non-null and exactly
 * (string-equal) one of them; this removes hash collisions and untagged messages let through by
 * the broker's hash match. Otherwise every message is kept.
 */
export function clientTagRecheck(subscriptionData: SubscriptionData, tag: string | null | undefined): boolean {
  const tags = subscriptionData.tagsSet;
  if (tags.length === 0 || subscriptionData.classFilterMode) return true;
  return tag != null && tags.includes(tag);
}
