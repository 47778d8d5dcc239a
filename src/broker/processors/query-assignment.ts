/**
 * QUERY_ASSIGNMENT (400) and SET_MESSAGE_REQUEST_MODE (401): RocketMQ's QueryAssignmentProcessor.
 *
 * A (topic, group) in POP mode gets, for every member, every queue of the topic on this broker as one
 * assignment with queue id -1 (RocketMQ's allocate4Pop when popShareQueueNum does not split the queues);
 * a member pops them all and the broker's queue locks keep two members off the same message. In PULL
 * mode (the default) the group's live members share the queues by averaging, as the client's rebalance
 * would. The mode is persisted with the POP state.
 */
import { RETRY_GROUP_TOPIC_PREFIX } from '../../common/message.js';
import {
  ResponseCode,
  isReadable,
  type QueryAssignmentRequestBody,
  type SetMessageRequestModeRequestBody,
} from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { popServiceOf } from './pop-message.js';
import { fail, ok } from './responses.js';

export const setMessageRequestMode: Processor = async (ctx, request) => {
  const b = request.parsedBody as SetMessageRequestModeRequestBody;
  const pop = popServiceOf(ctx);
  if (!('state' in pop)) return pop;
  if (b.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
    return fail(ResponseCode.NO_PERMISSION, 'retry topic is not allowed to set mode');
  }
  if (!ctx.topicConfigManager.selectTopicConfig(b.topic)) {
    return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${b.topic}] not exist`);
  }
  if (!ctx.subscriptionGroupManager.findSubscriptionGroupConfig(b.consumerGroup)) {
    return fail(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, 'subscription group does not exist');
  }
  pop.state.setRequestMode({
    topic: b.topic,
    consumerGroup: b.consumerGroup,
    mode: b.mode,
    popShareQueueNum: b.popShareQueueNum,
  });
  await pop.state.persist();
  return ok();
};

export const queryAssignment: Processor = (ctx, request) => {
  const b = request.parsedBody as QueryAssignmentRequestBody;
  const pop = popServiceOf(ctx);
  if (!('state' in pop)) return Promise.resolve(pop);
  const topicConfig = ctx.topicConfigManager.selectTopicConfig(b.topic);
  const mode = b.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)
    ? 'PULL'
    : (pop.state.requestMode(b.topic, b.consumerGroup)?.mode ?? 'PULL');
  const queueNums = topicConfig && isReadable(topicConfig.perm) ? topicConfig.readQueueNums : 0;
  const queue = (queueId: number) => ({
    messageQueue: { topic: b.topic, brokerName: ctx.brokerName, queueId },
    mode,
    attachments: {},
  });
  let assignments: ReturnType<typeof queue>[];
  if (queueNums === 0) assignments = [];
  else if (mode === 'POP') assignments = [queue(-1)];
  else if (b.messageModel === 'BROADCASTING') {
    assignments = Array.from({ length: queueNums }, (_, i) => queue(i));
  } else {
    const members = ctx.consumerManager.getConsumerGroupInfo(b.consumerGroup)?.getAllClientIds() ?? [];
    const cids = [...new Set([...members, b.clientId])].sort();
    const index = cids.indexOf(b.clientId);
    // RocketMQ's AllocateMessageQueueAveragely.
    const mod = queueNums % cids.length;
    const size =
      queueNums <= cids.length
        ? 1
        : mod > 0 && index < mod
          ? Math.floor(queueNums / cids.length) + 1
          : Math.floor(queueNums / cids.length);
    const start = mod > 0 && index < mod ? index * size : index * size + mod;
    const range = Math.min(size, queueNums - start);
    assignments = Array.from({ length: Math.max(0, range) }, (_, i) => queue((start + i) % queueNums));
  }
  const body = Buffer.from(JSON.stringify({ messageQueueAssignments: assignments }), 'utf8');
  return Promise.resolve(ok({}, undefined, body));
};
