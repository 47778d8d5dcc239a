/**
 * ACK_MESSAGE (200051), BATCH_ACK_MESSAGE (200151) and CHANGE_MESSAGE_INVISIBLETIME (200053): RocketMQ's
 * AckMessageProcessor and ChangeInvisibleTimeProcessor.
 *
 * A receipt handle is honoured only when it names this broker, the queue and offset the request names,
 * and a message of this group that is still in flight, popped at the handle's pop time and still
 * invisible. Anything else is refused with a remark saying which: malformed (INVALID_PARAMETER), another
 * broker's or another queue's (INVALID_PARAMETER), unknown topic (TOPIC_NOT_EXIST), already acknowledged or
 * revived, another group's, superseded by a later pop or change, or expired (NO_MESSAGE). So an ack is never
 * applied to another message than the one its handle was issued for.
 */
import {
  FAQ_SUFFIX,
  POP_ORDER_REVIVE_QUEUE,
  ResponseCode,
  bitSetIndexes,
  parseExtraInfo,
  storeTopicOf,
  type AckMessageRequestHeader,
  type BatchAckMessageRequestBody,
  type ChangeInvisibleTimeRequestHeader,
  type ExtraInfo,
  type RemotingResponse,
} from '../../protocol/index.js';
import type { BrokerContext, Processor } from '../broker-context.js';
import type { PopService } from '../pop/pop-service.js';
import { entryKey, type InflightEntry } from '../pop/pop-state.js';
import { checkInvisibleTime, popServiceOf } from './pop-message.js';
import { fail, ok } from './responses.js';

interface Target {
  group: string;
  topic: string;
  queueId: number;
  queueOffset: number;
  info: ExtraInfo;
}

/** The in-flight entry a handle names, or the answer refusing it. */
function resolveEntry(ctx: BrokerContext, pop: PopService, t: Target): [string, InflightEntry] | RemotingResponse {
  const { info } = t;
  if (info.brokerName !== ctx.brokerName) {
    return fail(
      ResponseCode.INVALID_PARAMETER,
      `the receipt handle was issued by broker ${info.brokerName}, not by this broker (${ctx.brokerName})`,
    );
  }
  if (info.reviveQid === POP_ORDER_REVIVE_QUEUE) {
    return fail(
      ResponseCode.INVALID_PARAMETER,
      'the receipt handle is of an orderly POP, which this broker does not serve',
    );
  }
  if (info.queueId !== t.queueId || info.queueOffset !== t.queueOffset) {
    return fail(
      ResponseCode.INVALID_PARAMETER,
      `the receipt handle names queue ${info.queueId} offset ${info.queueOffset}, the request queue ${t.queueId} offset ${t.queueOffset}`,
    );
  }
  if (!ctx.topicConfigManager.selectTopicConfig(t.topic)) {
    return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${t.topic}] not exist, apply first please! ${FAQ_SUFFIX}`);
  }
  const storeTopic = storeTopicOf(t.topic, t.group, info.retry);
  const key = entryKey(t.group, storeTopic, info.queueId, info.queueOffset);
  const entry = pop.state.get(key);
  const where = `${storeTopic}@${info.queueId} offset ${info.queueOffset}`;
  if (!entry) {
    if (pop.state.heldByOtherGroup(t.group, storeTopic, info.queueId, info.queueOffset)) {
      return fail(
        ResponseCode.NO_MESSAGE,
        `the receipt handle of ${where} belongs to another consumer group than ${t.group}`,
      );
    }
    return fail(
      ResponseCode.NO_MESSAGE,
      `no message of group ${t.group} is in flight at ${where}: it was already acknowledged, or revived after its invisible time`,
    );
  }
  if (entry.popTime !== info.popTime) {
    return fail(
      ResponseCode.NO_MESSAGE,
      `the receipt handle of ${where} is stale: the message was popped again or its invisible time changed since (pop time ${entry.popTime}, handle ${info.popTime})`,
    );
  }
  const deadline = entry.popTime + entry.invisibleTime;
  if (ctx.clock.now() >= deadline) {
    return fail(
      ResponseCode.NO_MESSAGE,
      `the receipt handle of ${where} expired at ${new Date(deadline).toISOString()}: its invisible time has passed and the message will be delivered again`,
    );
  }
  return [key, entry];
}

function parsed(extraInfo: string): ExtraInfo | RemotingResponse {
  const info = parseExtraInfo(extraInfo);
  return typeof info === 'string' ? fail(ResponseCode.INVALID_PARAMETER, `malformed receipt handle: ${info}`) : info;
}

export const ackMessage: Processor = async (ctx, request) => {
  const h = request.header as AckMessageRequestHeader;
  const pop = popServiceOf(ctx);
  if (!('state' in pop)) return pop;
  const info = parsed(h.extraInfo);
  if (!('popTime' in info)) return info;
  const found = resolveEntry(ctx, pop, {
    group: h.consumerGroup,
    topic: h.topic,
    queueId: h.queueId,
    queueOffset: h.offset,
    info,
  });
  if (!Array.isArray(found)) return found;
  pop.state.remove(found[0]);
  await pop.state.persist();
  return ok();
};

export const batchAckMessage: Processor = async (ctx, request) => {
  const body = request.parsedBody as BatchAckMessageRequestBody;
  const pop = popServiceOf(ctx);
  if (!('state' in pop)) return pop;
  const failures: RemotingResponse[] = [];
  let applied = 0;
  for (const ack of body.acks) {
    if (ack.retry !== '0' && ack.retry !== '1') {
      failures.push(fail(ResponseCode.INVALID_PARAMETER, `retry mark "${ack.retry}" is neither 0 nor 1`));
      continue;
    }
    for (const bit of bitSetIndexes(ack.bitSet)) {
      const queueOffset = ack.startOffset + bit;
      const found = resolveEntry(ctx, pop, {
        group: ack.consumerGroup,
        topic: ack.topic,
        queueId: ack.queueId,
        queueOffset,
        info: {
          ckOffset: ack.startOffset,
          popTime: ack.popTime,
          invisibleTime: ack.invisibleTime,
          reviveQid: ack.reviveQueueId,
          retry: ack.retry,
          brokerName: body.brokerName ?? ctx.brokerName,
          queueId: ack.queueId,
          queueOffset,
        },
      });
      if (Array.isArray(found)) {
        pop.state.remove(found[0]);
        applied++;
      } else failures.push(found);
    }
  }
  if (applied > 0) await pop.state.persist();
  const first = failures[0];
  if (!first) return ok();
  return fail(first.code, `${applied} of ${applied + failures.length} acks applied; ${first.remark ?? ''}`);
};

export const changeInvisibleTime: Processor = async (ctx, request) => {
  const h = request.header as ChangeInvisibleTimeRequestHeader;
  const pop = popServiceOf(ctx);
  if (!('state' in pop)) return pop;
  const bad = checkInvisibleTime(h.invisibleTime);
  if (bad) return bad;
  const info = parsed(h.extraInfo);
  if (!('popTime' in info)) return info;
  const found = resolveEntry(ctx, pop, {
    group: h.consumerGroup,
    topic: h.topic,
    queueId: h.queueId,
    queueOffset: h.offset,
    info,
  });
  if (!Array.isArray(found)) return found;
  const [, entry] = found;
  const now = ctx.clock.now();
  // RocketMQ acks the old checkpoint and writes a new one starting at the message itself; the client
  // builds the new handle from these fields and the message's offset.
  entry.popTime = now;
  entry.invisibleTime = h.invisibleTime;
  entry.ckOffset = entry.queueOffset;
  await pop.state.persist();
  return ok({ popTime: now, invisibleTime: h.invisibleTime, reviveQid: info.reviveQid });
};
