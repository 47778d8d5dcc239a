/**
 * POP_MESSAGE (200050): RocketMQ 5's PopMessageProcessor, without orderly POP.
 *
 * 1. The checks, in RocketMQ's order and with its codes and remarks, plus the bounds RocketMQ's proxy
 *    puts on maxMsgNums and invisibleTime; `order=true` is refused (INVALID_PARAMETER).
 * 2. The filter: the request's exp / expType (TAG or SQL92), applied to the topic and its POP retry topic.
 * 3. Under each queue's lock: read from the group's POP offset (initialised by initMode), record every
 *    message found as in flight until popTime + invisibleTime, move the POP offset past them. The state
 *    is on disk before the answer leaves.
 * 4. Every message goes back with its receipt handle in the POP_CK property (retry messages under the
 *    popped topic's name), and the header carries startOffsetInfo / msgOffsetInfo as RocketMQ's do.
 * 5. Nothing found: held until a message arrives or pollTime ends (POLLING_TIMEOUT).
 */
import { encodeMessage, decodeMessages } from '../../common/codec/index.js';
import {
  ExpressionMessageFilter,
  buildSubscriptionDataWithType,
  compileSql92,
  isTagType,
  type CompiledSql92,
} from '../../filter/index.js';
import {
  FAQ_SUFFIX,
  ResponseCode,
  buildExtraInfo,
  isReadable,
  msgOffsetInfoOf,
  popRetryTopic,
  retryMarkOf,
  startOffsetInfoOf,
  type PopMessageRequestHeader,
  type RemotingResponse,
} from '../../protocol/index.js';
import type { MessageFilter } from '../../store/index.js';
import type { BrokerContext, ConnectionInfo, Processor } from '../broker-context.js';
import { PROPERTY_POP_CK, findPopService, type PopService } from '../pop/pop-service.js';
import { MAX_SUSPEND_TIMEOUT_MS } from './pull-message.js';
import { fail } from './responses.js';

/** RocketMQ's PopMessageProcessor refuses more than this many messages a pop. */
export const POP_MAX_MSG_NUMS = 32;
/** The longest invisible time accepted (RocketMQ proxy's maxInvisibleTimeMills: 12 hours). */
export const POP_MAX_INVISIBLE_TIME_MS = 12 * 3600 * 1000;
/** RocketMQ: ConsumeInitMode. */
export const ConsumeInitMode = Object.freeze({ MIN: 0, MAX: 1 });
/** RocketMQ: BrokerConfig.popFromRetryProbability (percent of pops that read the retry topic first). */
const POP_FROM_RETRY_PROBABILITY = 20;

/** The POP service, or the answer saying it is missing. */
export function popServiceOf(ctx: BrokerContext): PopService | RemotingResponse {
  const pop = findPopService(ctx);
  if (!pop || pop.isClosed) return fail(ResponseCode.SYSTEM_BUSY, 'the broker is shutting down');
  return pop;
}

/** The checks on an invisible time (POP, CHANGE_MESSAGE_INVISIBLETIME). */
export function checkInvisibleTime(invisibleTime: number): RemotingResponse | undefined {
  if (invisibleTime <= 0 || invisibleTime > POP_MAX_INVISIBLE_TIME_MS) {
    return fail(
      ResponseCode.INVALID_PARAMETER,
      `invisibleTime ${invisibleTime} ms is out of range: it must be between 1 and ${POP_MAX_INVISIBLE_TIME_MS} ms`,
    );
  }
  return undefined;
}

function check(ctx: BrokerContext, h: PopMessageRequestHeader, connection: ConnectionInfo): RemotingResponse | number {
  if (!isReadable(ctx.brokerConfig.brokerPermission)) {
    return fail(ResponseCode.NO_PERMISSION, `the broker[${ctx.brokerIP}] pop message is forbidden`);
  }
  if (h.maxMsgNums > POP_MAX_MSG_NUMS) {
    return fail(
      ResponseCode.INVALID_PARAMETER,
      `the broker[${ctx.brokerIP}] pop message's num is greater than ${POP_MAX_MSG_NUMS}`,
    );
  }
  if (h.maxMsgNums <= 0) {
    return fail(ResponseCode.INVALID_PARAMETER, `maxMsgNums ${h.maxMsgNums} is out of range: it must be at least 1`);
  }
  const bad = checkInvisibleTime(h.invisibleTime);
  if (bad) return bad;
  if (h.order === true) {
    return fail(ResponseCode.INVALID_PARAMETER, 'orderly POP (order=true) is not supported by this broker');
  }
  const topicConfig = ctx.topicConfigManager.selectTopicConfig(h.topic);
  if (!topicConfig) {
    return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${h.topic}] not exist, apply first please! ${FAQ_SUFFIX}`);
  }
  if (!isReadable(topicConfig.perm)) {
    return fail(ResponseCode.NO_PERMISSION, `the topic[${h.topic}] peeking message is forbidden`);
  }
  if (h.queueId >= topicConfig.readQueueNums || h.queueId < -1) {
    return fail(
      ResponseCode.INVALID_PARAMETER,
      `queueId[${h.queueId}] is illegal, topic:[${h.topic}] topicConfig.readQueueNums:[${topicConfig.readQueueNums}] consumer:[${connection.remoteAddress}]`,
    );
  }
  const group = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(h.consumerGroup);
  if (!group) {
    return fail(
      ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
      `subscription group [${h.consumerGroup}] does not exist, ${FAQ_SUFFIX}`,
    );
  }
  if (!group.consumeEnable) {
    return fail(ResponseCode.NO_PERMISSION, `subscription group no permission, ${h.consumerGroup}`);
  }
  return topicConfig.readQueueNums;
}

function buildFilter(ctx: BrokerContext, h: PopMessageRequestHeader): MessageFilter | RemotingResponse {
  if (h.exp === undefined || h.exp === '') return new ExpressionMessageFilter(null, null);
  try {
    const data = buildSubscriptionDataWithType(h.topic, h.exp, h.expType);
    let compiled: CompiledSql92 | null = null;
    if (!isTagType(data.expressionType)) {
      if (data.expressionType !== 'SQL92') throw new Error(`no compiler for ${data.expressionType}`);
      if (!ctx.brokerConfig.enablePropertyFilter) {
        return fail(ResponseCode.SYSTEM_ERROR, `The broker does not support consumer to filter message by SQL92`);
      }
      compiled = compileSql92(data.subString);
    }
    return new ExpressionMessageFilter(data, compiled);
  } catch (e) {
    ctx.logger.warn({ err: e, group: h.consumerGroup, exp: h.exp }, 'pop: parse the subscription failed');
    return fail(ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed");
  }
}

interface Collected {
  bodies: Buffer[];
  startOffsetInfo: string[];
  msgOffsetInfo: string[];
  restNum: number;
}

/** Reads one queue under its lock (RocketMQ: popMsgFromQueue). */
async function popFromQueue(
  ctx: BrokerContext,
  pop: PopService,
  h: PopMessageRequestHeader,
  storeTopic: string,
  queueId: number,
  filter: MessageFilter,
  popTime: number,
  out: Collected,
): Promise<boolean> {
  return pop.withQueueLock(h.consumerGroup, storeTopic, queueId, async () => {
    const want = h.maxMsgNums - out.bodies.length;
    if (want <= 0) return false;
    let offset = pop.state.popOffset(h.consumerGroup, storeTopic, queueId);
    if (offset === undefined) {
      const min = ctx.store.getMinOffsetInQueue(storeTopic, queueId);
      const max = ctx.store.getMaxOffsetInQueue(storeTopic, queueId);
      // RocketMQ (initPopOffsetByCheckMsgInMem): MAX starts at the last message, except on a queue that
      // still holds its first message, which is read from its start.
      offset = h.initMode === ConsumeInitMode.MIN || storeTopic !== h.topic || min <= 0 ? min : Math.max(0, max - 1);
      pop.state.setPopOffset(h.consumerGroup, storeTopic, queueId, offset);
    }
    let result = await ctx.store.getMessage(h.consumerGroup, storeTopic, queueId, offset, want, filter);
    if (
      result.status === 'OFFSET_TOO_SMALL' ||
      result.status === 'OFFSET_OVERFLOW_BADLY' ||
      result.status === 'OFFSET_FOUND_NULL'
    ) {
      ctx.logger.warn(
        { group: h.consumerGroup, storeTopic, queueId, offset, next: result.nextBeginOffset },
        'pop offset corrected',
      );
      offset = result.nextBeginOffset;
      pop.state.setPopOffset(h.consumerGroup, storeTopic, queueId, offset);
      result = await ctx.store.getMessage(h.consumerGroup, storeTopic, queueId, offset, want, filter);
    }
    out.restNum += Math.max(0, result.maxOffset - result.nextBeginOffset);
    if (result.nextBeginOffset > offset) {
      pop.state.setPopOffset(h.consumerGroup, storeTopic, queueId, result.nextBeginOffset);
    }
    if (result.messageCount === 0) return result.nextBeginOffset > offset;
    const mark = retryMarkOf(storeTopic);
    const offsets: number[] = [];
    for (let i = 0; i < result.messages.length; i++) {
      const record = result.messages[i]!;
      const [msg] = decodeMessages(record, { decompressBody: false });
      if (!msg) continue;
      const queueOffset = result.queueOffsets[i] ?? msg.queueOffset;
      offsets.push(queueOffset);
      pop.state.add({
        group: h.consumerGroup,
        storeTopic,
        topic: h.topic,
        queueId,
        queueOffset,
        commitLogOffset: msg.commitLogOffset,
        ckOffset: offset,
        popTime,
        invisibleTime: h.invisibleTime,
      });
      const handle = buildExtraInfo({
        ckOffset: offset,
        popTime,
        invisibleTime: h.invisibleTime,
        reviveQid: 0,
        retry: mark,
        brokerName: ctx.brokerName,
        queueId,
        queueOffset,
      });
      // RocketMQ recodes a retry message under the popped topic; every message here carries its handle,
      // so a client needs neither the offset infos nor the retry topic's name to ack it.
      out.bodies.push(
        encodeMessage({
          ...msg,
          topic: h.topic,
          properties: { ...(msg.properties ?? {}), [PROPERTY_POP_CK]: handle },
          storeSize: 0,
        }),
      );
    }
    out.startOffsetInfo.push(startOffsetInfoOf(storeTopic, queueId, offset));
    out.msgOffsetInfo.push(msgOffsetInfoOf(storeTopic, queueId, offsets));
    return true;
  });
}

/** One pass over the retry topic and the topic's queues; true when the state changed. */
async function popOnce(
  ctx: BrokerContext,
  pop: PopService,
  h: PopMessageRequestHeader,
  queueNums: number,
  filter: MessageFilter,
  popTime: number,
  out: Collected,
): Promise<boolean> {
  const retryTopic = popRetryTopic(h.topic, h.consumerGroup);
  const retryConfig = ctx.topicConfigManager.selectTopicConfig(retryTopic);
  const random = Math.floor(Math.random() * 100);
  const queues = h.queueId >= 0 ? [h.queueId] : Array.from({ length: queueNums }, (_, i) => (random + i) % queueNums);
  let changed = false;
  const fromRetry = async (): Promise<void> => {
    if (!retryConfig) return;
    for (let i = 0; i < retryConfig.readQueueNums && out.bodies.length < h.maxMsgNums; i++) {
      changed = (await popFromQueue(ctx, pop, h, retryTopic, i, filter, popTime, out)) || changed;
    }
  };
  const retryFirst = random < POP_FROM_RETRY_PROBABILITY;
  if (retryFirst) await fromRetry();
  for (const q of queues) {
    if (out.bodies.length >= h.maxMsgNums) break;
    changed = (await popFromQueue(ctx, pop, h, h.topic, q, filter, popTime, out)) || changed;
  }
  if (!retryFirst && out.bodies.length < h.maxMsgNums) await fromRetry();
  return changed;
}

export const popMessage: Processor = async (ctx, request, connection) => {
  const h = request.header as PopMessageRequestHeader;
  const pop = popServiceOf(ctx);
  if (!('state' in pop)) return pop;
  const queueNums = check(ctx, h, connection);
  if (typeof queueNums !== 'number') return queueNums;
  const filter = buildFilter(ctx, h);
  if (!('isMatchedByConsumeQueue' in filter)) return filter;

  const topics = new Set([h.topic, popRetryTopic(h.topic, h.consumerGroup)]);
  const deadline = ctx.clock.now() + Math.min(Math.max(0, h.pollTime), MAX_SUSPEND_TIMEOUT_MS);
  for (;;) {
    const seen = pop.arrivalCount(topics);
    const popTime = ctx.clock.now();
    const out: Collected = { bodies: [], startOffsetInfo: [], msgOffsetInfo: [], restNum: 0 };
    const changed = await popOnce(ctx, pop, h, queueNums, filter, popTime, out);
    if (changed) await pop.state.persist();
    const header = {
      popTime,
      invisibleTime: h.invisibleTime,
      reviveQid: 0,
      restNum: out.restNum,
      startOffsetInfo: out.startOffsetInfo.length > 0 ? out.startOffsetInfo.join(';') : undefined,
      msgOffsetInfo: out.msgOffsetInfo.length > 0 ? out.msgOffsetInfo.join(';') : undefined,
    };
    if (out.bodies.length > 0) {
      if (out.restNum > 0) pop.notify(h.topic);
      return { code: ResponseCode.SUCCESS, header, remark: 'FOUND', body: Buffer.concat(out.bodies) };
    }
    const left = deadline - ctx.clock.now();
    if (left <= 0 || connection.signal.aborted || pop.isDraining) {
      return { code: ResponseCode.POLLING_TIMEOUT, header, remark: 'NO_MESSAGE_IN_QUEUE' };
    }
    // A message that arrived while this pass looked is not waited for.
    if (pop.arrivalCount(topics) === seen && !(await pop.waitForArrival(topics, left, connection.signal))) {
      if (connection.signal.aborted || pop.isDraining || deadline - ctx.clock.now() <= 0) {
        return { code: ResponseCode.POLLING_TIMEOUT, header, remark: 'NO_MESSAGE_IN_QUEUE' };
      }
    }
  }
};
