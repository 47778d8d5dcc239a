/**
 * What a consumer reports about itself when a broker asks on behalf of an admin tool: RocketMQ's
 * ConsumerRunningInfo (GET_CONSUMER_RUNNING_INFO, shown by `mqadmin consumerStatus`) and
 * ConsumeMessageDirectlyResult (CONSUME_MESSAGE_DIRECTLY, run by `mqadmin queryMsgById -g G -d CLIENT`).
 *
 * Both go back as JSON the way fastjson writes them, since the admin tool reads them with fastjson:
 * keys sorted, and the queue table keyed by MessageQueue objects —
 * `"mqTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"cachedMsgCount":0,…}}` — which is not
 * standard JSON but is what RocketMQ's own consumers send.
 * @pure
 */
import { compareMessageQueue, type MessageQueue } from '../../common/message.js';
import type { SubscriptionDataLike } from './subscription-data-like.js';

/** RocketMQ's ConsumerRunningInfo property names. */
export const RunningInfoProperty = Object.freeze({
  NAMESERVER_ADDR: 'PROP_NAMESERVER_ADDR',
  THREADPOOL_CORE_SIZE: 'PROP_THREADPOOL_CORE_SIZE',
  CONSUME_ORDERLY: 'PROP_CONSUMEORDERLY',
  CONSUME_TYPE: 'PROP_CONSUME_TYPE',
  CLIENT_VERSION: 'PROP_CLIENT_VERSION',
  CONSUMER_START_TIMESTAMP: 'PROP_CONSUMER_START_TIMESTAMP',
} as const);

/** RocketMQ's ProcessQueueInfo: one held queue's cache and progress. */
export interface ProcessQueueInfo {
  /** The offset the consumer would commit now (in memory). */
  commitOffset: number;
  cachedMsgMinOffset: number;
  cachedMsgMaxOffset: number;
  cachedMsgCount: number;
  cachedMsgSizeInMiB: number;
  transactionMsgMinOffset: number;
  transactionMsgMaxOffset: number;
  transactionMsgCount: number;
  locked: boolean;
  tryUnlockTimes: number;
  lastLockTimestamp: number;
  /** RocketMQ's spelling. */
  droped: boolean;
  lastPullTimestamp: number;
  lastConsumeTimestamp: number;
}

export interface ConsumerRunningInfo {
  /** String properties: the PROP_* keys above and the consumer's settings. */
  properties: Record<string, string>;
  subscriptionSet: SubscriptionDataLike[];
  mqTable: Array<[MessageQueue, ProcessQueueInfo]>;
  /** A stack dump, when the caller asked for one and the consumer has one. */
  jstack?: string | undefined;
}

/** RocketMQ's CMResult. */
export type CMResult =
  'CR_SUCCESS' | 'CR_LATER' | 'CR_ROLLBACK' | 'CR_COMMIT' | 'CR_THROW_EXCEPTION' | 'CR_RETURN_NULL';

/** RocketMQ's ConsumeMessageDirectlyResult. */
export interface ConsumeMessageDirectlyResult {
  order: boolean;
  autoCommit: boolean;
  consumeResult: CMResult;
  remark?: string | undefined;
  spentTimeMills: number;
}

const PQ_KEYS: readonly (keyof ProcessQueueInfo)[] = Object.freeze(
  (
    [
      'commitOffset',
      'cachedMsgMinOffset',
      'cachedMsgMaxOffset',
      'cachedMsgCount',
      'cachedMsgSizeInMiB',
      'transactionMsgMinOffset',
      'transactionMsgMaxOffset',
      'transactionMsgCount',
      'locked',
      'tryUnlockTimes',
      'lastLockTimestamp',
      'droped',
      'lastPullTimestamp',
      'lastConsumeTimestamp',
    ] as const
  )
    .slice()
    .sort(),
);

/** An object's keys in sorted order, as fastjson writes beans and sorted maps. */
function sortedObject(o: Record<string, unknown>): string {
  const parts = Object.keys(o)
    .filter((k) => o[k] !== undefined && o[k] !== null)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${JSON.stringify(o[k])}`);
  return `{${parts.join(',')}}`;
}

function subscriptionJson(sd: SubscriptionDataLike): string {
  return sortedObject({
    classFilterMode: sd.classFilterMode ?? false,
    codeSet: [...sd.codeSet],
    expressionType: sd.expressionType || 'TAG',
    subString: sd.subString,
    subVersion: sd.subVersion,
    tagsSet: [...sd.tagsSet],
    topic: sd.topic,
  });
}

/** ConsumerRunningInfo as fastjson writes it (see the module comment). */
export function encodeConsumerRunningInfo(info: ConsumerRunningInfo): string {
  const mqs = [...info.mqTable].sort((a, b) => compareMessageQueue(a[0], b[0]));
  const mqTable = mqs
    .map(([mq, pq]) => {
      const key = sortedObject({ brokerName: mq.brokerName, queueId: mq.queueId, topic: mq.topic });
      const value = `{${PQ_KEYS.map((k) => `"${k}":${JSON.stringify(pq[k])}`).join(',')}}`;
      return `${key}:${value}`;
    })
    .join(',');
  // RocketMQ keeps subscriptions in a TreeSet ordered by topic, then expression.
  const subs = [...info.subscriptionSet].sort((a, b) =>
    a.topic !== b.topic
      ? a.topic < b.topic
        ? -1
        : 1
      : a.subString < b.subString
        ? -1
        : a.subString > b.subString
          ? 1
          : 0,
  );
  const parts: string[] = [];
  if (info.jstack !== undefined) parts.push(`"jstack":${JSON.stringify(info.jstack)}`);
  parts.push(`"mqTable":{${mqTable}}`);
  parts.push(`"properties":${sortedObject(info.properties)}`);
  parts.push(`"statusTable":{}`);
  parts.push(`"subscriptionSet":[${subs.map(subscriptionJson).join(',')}]`);
  return `{${parts.join(',')}}`;
}

/** ConsumeMessageDirectlyResult as fastjson writes it. */
export function encodeConsumeMessageDirectlyResult(r: ConsumeMessageDirectlyResult): string {
  return sortedObject({ ...r });
}
