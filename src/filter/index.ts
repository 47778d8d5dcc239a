/**
 * `rocketmq-ts/filter`: RocketMQ's message filtering — tag subscriptions (SubscriptionData), the
 * SQL92 filter language (compile once, evaluate many times) and the broker's two-stage
 * MessageFilter. Pure: no I/O. `docs/filtering.md` describes the language and its rules.
 * @module rocketmq-ts/filter
 */
export { tagsHashCode } from '../common/codec/java-string.js';
export { Sql92EvaluationError, Sql92ParseError, SubscriptionExpressionError } from './errors.js';
export { compileSql92, type CompiledSql92, type FilterProperties } from './sql92.js';
export { MAX_DEPTH as SQL92_MAX_DEPTH } from './sql92-parser.js';
export {
  ExpressionType,
  SUB_ALL,
  buildSubscriptionData,
  buildSubscriptionDataWithType,
  clientTagRecheck,
  isTagType,
  type SubscriptionData,
} from './subscription.js';
export {
  ExpressionForRetryMessageFilter,
  ExpressionMessageFilter,
  buildConsumerFilterData,
  type ConsumerFilterData,
  type ConsumerFilterLookup,
  type MessageFilter,
} from './message-filter.js';
