/**
 * Store times and offsets of a topic's queues, as RocketMQ's AdminBrokerProcessor answers them:
 * - GET_EARLIEST_MSG_STORETIME (32) `topic`, `queueId`: response header `timestamp`, the store time of
 *   the queue's first message still stored; -1 for an empty or unknown queue (RocketMQ:
 *   getEarliestMessageTime, which does not check the topic either).
 * - QUERY_CONSUME_TIME_SPAN (303) `topic`, `group`: body QueryConsumeTimeSpanBody, for each write queue the
 *   store times of its first and last messages, of the last one the group consumed (its first message
 *   when the group has consumed nothing), and `delayTime`, how long the group's next message has waited
 *   (0 when the group is caught up). TOPIC_NOT_EXIST `topic[<t>] not exist` for an unknown topic.
 * - QUERY_CORRECTION_OFFSET (308) `topic`, `compareGroup`, `filterGroups` (comma-separated): body
 *   QueryCorrectionOffsetBody, per queue the smallest committed offset of the groups on the topic outside
 *   `filterGroups` (offsets below the queue's min left out); Java's Long.MAX_VALUE where that minimum is
 *   past `compareGroup`'s own offset (RocketMQ: ConsumerOffsetManager.queryMinOffsetInAllGroup).
 */
import {
  ResponseCode,
  toFastJson,
  type GetEarliestMsgStoretimeRequestHeader,
  type QueryConsumeTimeSpanRequestHeader,
  type QueryCorrectionOffsetRequestHeader,
} from '../../protocol/index.js';
import type { BrokerContext, Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

/** Java's Long.MAX_VALUE as fastjson writes it (beyond a JS number's exact range, so written as text). */
const JAVA_LONG_MAX = '9223372036854775807';

/** RocketMQ: UtilAll.formatDate with YYYY_MM_DD_HH_MM_SS_SSS (`yyyy-MM-dd#HH:mm:ss:SSS`, local time). */
function formatDate(ms: number): string {
  const d = new Date(ms);
  const p = (n: number, w = 2): string => String(n).padStart(w, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}#${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}:${p(d.getMilliseconds(), 3)}`;
}

/** RocketMQ: DefaultMessageStore.getEarliestMessageTime. */
function earliestMessageTime(ctx: BrokerContext, topic: string, queueId: number): Promise<number> {
  const store = ctx.store;
  if (store.getMaxOffsetInQueue(topic, queueId) <= store.getMinOffsetInQueue(topic, queueId)) {
    return Promise.resolve(-1);
  }
  return store.getMessageStoreTimeStamp(topic, queueId, store.getMinOffsetInQueue(topic, queueId));
}

export const getEarliestMsgStoretime: Processor = async (ctx, request) => {
  const h = request.header as GetEarliestMsgStoretimeRequestHeader;
  return ok({ timestamp: await earliestMessageTime(ctx, h.topic, h.queueId) });
};

export const queryConsumeTimeSpan: Processor = async (ctx, request) => {
  const h = request.header as QueryConsumeTimeSpanRequestHeader;
  const cfg = ctx.topicConfigManager.selectTopicConfig(h.topic);
  if (!cfg) return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${h.topic}] not exist`);
  const store = ctx.store;
  const consumeTimeSpanSet = [];
  for (let queueId = 0; queueId < cfg.writeQueueNums; queueId++) {
    const minTimeStamp = await earliestMessageTime(ctx, h.topic, queueId);
    const max = store.getMaxOffsetInQueue(h.topic, queueId);
    const maxTimeStamp = max > 0 ? await store.getMessageStoreTimeStamp(h.topic, queueId, max - 1) : -1;
    const consumerOffset = ctx.consumerOffsetManager.queryOffset(h.group, h.topic, queueId);
    const consumeTimeStamp =
      consumerOffset > 0 ? await store.getMessageStoreTimeStamp(h.topic, queueId, consumerOffset - 1) : minTimeStamp;
    let delayTime = 0;
    // The group's next message: at its offset, or the queue's first one when it has none.
    const next = Math.max(consumerOffset, store.getMinOffsetInQueue(h.topic, queueId));
    if (next < max) {
      const nextTime = await store.getMessageStoreTimeStamp(h.topic, queueId, next);
      if (nextTime >= 0) delayTime = ctx.clock.now() - nextTime;
    }
    // fastjson writes QueueTimeSpan's *Str getters too.
    consumeTimeSpanSet.push({
      consumeTimeStamp,
      consumeTimeStampStr: formatDate(consumeTimeStamp),
      delayTime,
      maxTimeStamp,
      maxTimeStampStr: formatDate(maxTimeStamp),
      messageQueue: { brokerName: ctx.brokerName, queueId, topic: h.topic },
      minTimeStamp,
      minTimeStampStr: formatDate(minTimeStamp),
    });
  }
  return ok({}, undefined, Buffer.from(toFastJson({ consumeTimeSpanSet }), 'utf8'));
};

export const queryCorrectionOffset: Processor = (ctx, request) => {
  const h = request.header as QueryCorrectionOffsetRequestHeader;
  const filtered = new Set((h.filterGroups ?? '').split(',').map((g) => g.trim()));
  const com = ctx.consumerOffsetManager;
  const min = new Map<number, number>();
  for (const group of com.whichGroupByTopic(h.topic)) {
    if (filtered.has(group)) continue;
    for (const [queueId, offset] of com.offsetsOfGroup(group).get(h.topic) ?? []) {
      if (offset < ctx.store.getMinOffsetInQueue(h.topic, queueId)) continue;
      min.set(queueId, Math.min(offset, min.get(queueId) ?? offset));
    }
  }
  const compare = com.offsetsOfGroup(h.compareGroup).get(h.topic) ?? new Map<number, number>();
  const entries = [...min].sort(([a], [b]) => a - b);
  const text = entries.map(([queueId, offset]) => {
    const own = compare.get(queueId);
    return `${queueId}:${own !== undefined && offset > own ? JAVA_LONG_MAX : String(offset)}`;
  });
  return Promise.resolve(ok({}, undefined, Buffer.from(`{"correctionOffsets":{${text.join(',')}}}`, 'utf8')));
};
