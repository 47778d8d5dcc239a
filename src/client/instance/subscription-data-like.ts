/**
 * A subscription as the heartbeat and the running info carry it (RocketMQ's SubscriptionData), in its
 * own file so that MQConsumerInner and ConsumerRunningInfo, which refer to each other's types, can both
 * import it without importing each other.
 * @pure
 */

/** The filter module's `SubscriptionData` fits it: `tagsSet` and `codeSet` may be arrays or Sets. */
export interface SubscriptionDataLike {
  topic: string;
  subString: string;
  tagsSet: Iterable<string>;
  codeSet: Iterable<number>;
  subVersion: number;
  expressionType?: string | undefined;
  classFilterMode?: boolean | undefined;
}
