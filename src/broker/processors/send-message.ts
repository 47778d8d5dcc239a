/**
 * SEND_MESSAGE (10) and SEND_BATCH_MESSAGE (320): RocketMQ's SendMessageProcessor.
 *
 * msgCheck, in RocketMQ's order: the broker is writable; the topic name is legal (SYSTEM_ERROR with
 * TopicValidator's remarks) and not a reserved one (NO_PERMISSION); the topic exists or is created from
 * the template topic (`defaultTopic`, TBW102) when it carries INHERIT — a `%RETRY%` topic falls back to
 * one RW queue — else TOPIC_NOT_EXIST; the queue id is below the topic's queue count (SYSTEM_ERROR).
 * Then the message: a random queue when queueId < 0, the MULTI_TAGS sysFlag for a MULTI_TAG topic,
 * UNIQ_KEY added when the producer sent none, CLUSTER set; a plain send to `%RETRY%group` whose
 * reconsumeTimes has reached the maximum goes to `%DLQ%group` (the rule of dead-letter-queue.ts). Single messages go through the
 * broker's put (the delay transform applies); a batch is stored as one record per message.
 *
 * Ours beyond RocketMQ: a read-only broker or topic refuses every send (NO_PERMISSION); RocketMQ relies on
 * the route for that, and this broker serves the route itself. After msgCheck, the sysFlag and every body
 * flagged compressed are checked (message-check.ts): a message consumers could not decode is refused
 * with MESSAGE_ILLEGAL rather than stored.
 */
import { createUniqId, decodeBatchBody, string2messageProperties, MessageSysFlag } from '../../common/codec/index.js';
import { MessageConst, RETRY_GROUP_TOPIC_PREFIX } from '../../common/message.js';
import {
  FAQ_SUFFIX,
  PermName,
  RequestCode,
  ResponseCode,
  isWriteable,
  type RemotingResponse,
  type SendMessageRequestHeader,
} from '../../protocol/index.js';
import type { MessageToStore, PutMessageResult } from '../../store/index.js';
import type { BrokerContext, ConnectionInfo, Processor, TopicConfig } from '../broker-context.js';
import { NOT_ALLOWED_SEND_TOPICS } from '../topic-config-manager.js';
import { deadLetterQueueOf, pastMaxReconsumeTimes } from './dead-letter-queue.js';
import { compressedBodyProblem, maxBodyBytes, sysFlagProblem } from './message-check.js';
import { fail, ok, parseHostAddress } from './responses.js';
import { validateTopicRemark } from './topic-validator.js';
import { isTransactionPrepared, prepareHalfMessage, requestsHalfMessage } from '../transaction/half-message.js';

const RW = PermName.READ | PermName.WRITE;

/** RocketMQ: TopicSysFlag.buildSysFlag(unit, hasUnitSub). */
const topicSysFlagFor = (unitMode: boolean | undefined, topic: string): number =>
  !unitMode ? 0 : topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? 0x2 : 0x1;

/** RocketMQ: msgCheck — the topic config to send to, or the answer refusing the send. */
function msgCheck(
  ctx: BrokerContext,
  h: SendMessageRequestHeader,
  connection: ConnectionInfo,
): TopicConfig | RemotingResponse {
  if (!isWriteable(ctx.brokerConfig.brokerPermission)) {
    return fail(ResponseCode.NO_PERMISSION, `the broker[${ctx.brokerIP}] sending message is forbidden`);
  }
  const problem = validateTopicRemark(h.topic);
  if (problem) return fail(ResponseCode.SYSTEM_ERROR, problem);
  if (NOT_ALLOWED_SEND_TOPICS.has(h.topic)) {
    return fail(ResponseCode.NO_PERMISSION, `Sending message to topic[${h.topic}] is forbidden.`);
  }
  let cfg = ctx.topicConfigManager.selectTopicConfig(h.topic);
  if (!cfg) {
    const limit = ctx.topicConfigManager.autoCreateLimitRemark?.();
    if (limit) return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${h.topic}] not exist, ${limit}${FAQ_SUFFIX}`);
    const sysFlag = topicSysFlagFor(h.unitMode, h.topic);
    ctx.logger.warn({ topic: h.topic, producer: connection.remoteAddress }, 'the topic does not exist');
    cfg = ctx.topicConfigManager.createTopicInSendMessageMethod(
      h.topic,
      h.defaultTopic,
      h.defaultTopicQueueNums,
      sysFlag,
    );
    if (!cfg && h.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
      cfg = ctx.topicConfigManager.createTopicIfAbsent(h.topic, 1, RW, sysFlag);
    }
    if (!cfg) {
      return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${h.topic}] not exist, apply first please!${FAQ_SUFFIX}`);
    }
  }
  if (!isWriteable(cfg.perm)) {
    return fail(ResponseCode.NO_PERMISSION, `the topic[${h.topic}] sending message is forbidden`);
  }
  const idValid = Math.max(cfg.writeQueueNums, cfg.readQueueNums);
  if (h.queueId >= idValid) {
    return fail(
      ResponseCode.SYSTEM_ERROR,
      `request queueId[${h.queueId}] is illegal, TopicConfig [topicName=${cfg.topicName}, readQueueNums=${cfg.readQueueNums}, writeQueueNums=${cfg.writeQueueNums}, perm=${cfg.perm}] Producer: ${connection.remoteAddress}`,
    );
  }
  return cfg;
}

/** RocketMQ: handlePutMessageResult's status → code and remark. */
function putResponse(ctx: BrokerContext, r: PutMessageResult, queueId: number, msgId = r.msgId): RemotingResponse {
  // RocketMQ's SendMessageProcessor adds the region and the trace switch, which clients' trace hooks need.
  const header = { msgId, queueId, queueOffset: r.queueOffset, MSG_REGION: 'DefaultRegion', TRACE_ON: 'true' };
  switch (r.status) {
    case 'PUT_OK':
      return ok(header);
    case 'FLUSH_DISK_TIMEOUT':
      return { code: ResponseCode.FLUSH_DISK_TIMEOUT, header, remark: 'FLUSH_DISK_TIMEOUT' };
    case 'MESSAGE_ILLEGAL':
    case 'PROPERTIES_SIZE_EXCEEDED':
      return fail(
        ResponseCode.MESSAGE_ILLEGAL,
        `the message is illegal, maybe msg body or properties length not matched. ${r.remark ?? ''}`.trim(),
      );
    case 'SERVICE_NOT_AVAILABLE':
      return fail(
        ResponseCode.SERVICE_NOT_AVAILABLE,
        `service not available now. It may be caused by one of the following reasons: the broker's disk is full, message store has been shut down, etc. ${r.remark ?? ''}`.trim(),
      );
    case 'OS_PAGE_CACHE_BUSY':
      return fail(ResponseCode.SYSTEM_ERROR, '[PC_SYNCHRONIZED]broker busy, start flow control for a while');
    default:
      ctx.logger.warn({ status: r.status, remark: r.remark }, 'put message failed');
      return fail(ResponseCode.SYSTEM_ERROR, r.remark ?? 'UNKNOWN_ERROR');
  }
}

function baseMessage(
  ctx: BrokerContext,
  h: SendMessageRequestHeader,
  cfg: TopicConfig,
  queueId: number,
  connection: ConnectionInfo,
  body: Buffer,
  flag: number,
  properties: Record<string, string>,
): MessageToStore {
  let sysFlag = h.sysFlag;
  if (cfg.topicFilterType === 'MULTI_TAG') sysFlag |= MessageSysFlag.MULTI_TAGS_FLAG;
  if (!properties[MessageConst.UNIQ_KEY]) properties[MessageConst.UNIQ_KEY] = createUniqId(ctx.clock);
  properties[MessageConst.CLUSTER] = ctx.clusterName;
  const bornHost = parseHostAddress(connection.remoteAddress);
  // A born host written as IPv6 needs the V6 flag so the record layout matches.
  if (bornHost.ip.includes(':')) sysFlag |= MessageSysFlag.BORNHOST_V6_FLAG;
  else sysFlag &= ~MessageSysFlag.BORNHOST_V6_FLAG;
  return {
    topic: h.topic,
    queueId,
    flag,
    body,
    properties,
    sysFlag,
    bornTimestamp: h.bornTimestamp,
    bornHost,
    reconsumeTimes: h.reconsumeTimes ?? 0,
    preparedTransactionOffset: 0,
  };
}

/** RocketMQ: handleRetryAndDLQ — a retry that reached the maximum goes to the DLQ; a response means refused. */
function handleRetryAndDLQ(
  ctx: BrokerContext,
  h: SendMessageRequestHeader,
  msg: MessageToStore,
): RemotingResponse | null {
  if (!h.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) return null;
  const groupName = h.topic.slice(RETRY_GROUP_TOPIC_PREFIX.length);
  const group = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(groupName);
  if (!group) {
    const limit = ctx.subscriptionGroupManager.autoCreateLimitRemark?.();
    return fail(
      ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
      `subscription group not exist, ${groupName} ${limit ? `${limit} ` : ''}${FAQ_SUFFIX}`,
    );
  }
  const maxReconsumeTimes = h.maxReconsumeTimes ?? group.retryMaxTimes;
  const reconsumeTimes = h.reconsumeTimes ?? 0;
  if (pastMaxReconsumeTimes(reconsumeTimes, maxReconsumeTimes)) {
    const dlq = deadLetterQueueOf(ctx, groupName, h.topic);
    msg.topic = dlq.topic;
    msg.queueId = dlq.queueId;
    msg.properties[MessageConst.DELAY] = '0';
  }
  return null;
}

const illegal = (problem: string): RemotingResponse =>
  fail(ResponseCode.MESSAGE_ILLEGAL, `the message is illegal: ${problem}`);

async function sendSingle(
  ctx: BrokerContext,
  h: SendMessageRequestHeader,
  cfg: TopicConfig,
  queueId: number,
  body: Buffer,
  connection: ConnectionInfo,
): Promise<RemotingResponse> {
  const bodyProblem = await compressedBodyProblem(body, h.sysFlag, maxBodyBytes(ctx));
  if (bodyProblem) return illegal(bodyProblem);
  const msg = baseMessage(ctx, h, cfg, queueId, connection, body, h.flag, string2messageProperties(h.properties ?? ''));
  const refused = handleRetryAndDLQ(ctx, h, msg);
  if (refused) return refused;
  // RocketMQ answers with the queue asked for (or the DLQ's), not the schedule queue a delayed message is parked on.
  const replyQueueId = msg.queueId;
  if (isTransactionPrepared(msg.properties)) {
    const half = await prepareHalfMessage(ctx, msg);
    if ('status' in half && half.wroteBytes > 0)
      ctx.ops.stats.metrics.onStored(h.topic, msg.properties, half.wroteBytes);
    return 'status' in half ? putResponse(ctx, half, replyQueueId) : half;
  }
  const r = await ctx.putMessage(msg);
  if (r.status === 'PUT_OK' || r.status === 'FLUSH_DISK_TIMEOUT') {
    ctx.ops.stats.onPut(h.topic, 1, body.length);
    ctx.ops.stats.metrics.onStored(h.topic, msg.properties, r.wroteBytes);
  }
  return putResponse(ctx, r, replyQueueId);
}

async function sendBatch(
  ctx: BrokerContext,
  h: SendMessageRequestHeader,
  cfg: TopicConfig,
  queueId: number,
  body: Buffer,
  connection: ConnectionInfo,
): Promise<RemotingResponse> {
  if (h.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) {
    return fail(ResponseCode.MESSAGE_ILLEGAL, `Batch request does not support retry group ${h.topic}`);
  }
  let decoded;
  try {
    decoded = decodeBatchBody(body);
  } catch (e) {
    return fail(ResponseCode.MESSAGE_ILLEGAL, `the batch body is malformed: ${(e as Error).message}`);
  }
  if (decoded.length === 0) return fail(ResponseCode.MESSAGE_ILLEGAL, 'the batch is empty');
  for (let i = 0; i < decoded.length; i++) {
    const problem = await compressedBodyProblem(decoded[i]?.body ?? Buffer.alloc(0), h.sysFlag, maxBodyBytes(ctx));
    if (problem) return illegal(`message ${i} of the batch: ${problem}`);
  }
  const msgs = decoded.map((m) => baseMessage(ctx, h, cfg, queueId, connection, m.body, m.flag, m.properties));
  const results = await ctx.store.putMessages(msgs);
  const first = results[0] as PutMessageResult;
  const failed = results.find((r) => r.status !== 'PUT_OK' && r.status !== 'FLUSH_DISK_TIMEOUT');
  if (failed) return putResponse(ctx, failed, queueId);
  ctx.ops.stats.onPut(h.topic, msgs.length, body.length);
  ctx.ops.stats.metrics.onStored(
    h.topic,
    msgs[0]?.properties ?? {},
    results.reduce((n, r) => n + r.wroteBytes, 0),
    msgs.length,
  );
  const timedOut = results.find((r) => r.status === 'FLUSH_DISK_TIMEOUT');
  return putResponse(ctx, timedOut ?? first, queueId, results.map((r) => r.msgId).join(','));
}

export const sendMessage: Processor = async (ctx, request, connection) => {
  const h = request.header as SendMessageRequestHeader;
  const checked = msgCheck(ctx, h, connection);
  if (!('topicName' in checked)) return checked;
  const cfg = checked;
  const flagProblem = sysFlagProblem(
    h.sysFlag,
    request.code !== RequestCode.SEND_BATCH_MESSAGE && requestsHalfMessage(h.properties),
  );
  if (flagProblem) return illegal(flagProblem);
  let queueId = h.queueId;
  if (queueId < 0) queueId = Math.floor(Math.random() * 99_999_999) % Math.max(1, cfg.writeQueueNums);
  const body = request.body ?? Buffer.alloc(0);
  return request.code === RequestCode.SEND_BATCH_MESSAGE
    ? sendBatch(ctx, h, cfg, queueId, body, connection)
    : sendSingle(ctx, h, cfg, queueId, body, connection);
};
