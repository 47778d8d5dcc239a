/**
 * PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361): RocketMQ's PullMessageProcessor.
 *
 * 1. The checks, in RocketMQ's order, with its codes and remarks.
 * 2. The subscription: from the request when the SUBSCRIPTION flag is set, else the one registered by
 *    the group's heartbeat (with its SQL filter data); then the MessageFilter.
 * 3. Commit-on-pull (the consumer's offset, as the request arrives), store.getMessage, the status →
 *    response-code mapping, the response header.
 * 4. The pull offset is recorded, then: FOUND → the stored records' bytes as the body;
 *    PULL_NOT_FOUND with the SUSPEND flag → held by the PullRequestHoldService and run again (without
 *    suspension and without a second commit) when a matching message arrives or the hold times out;
 *    PULL_OFFSET_MOVED → logged (RocketMQ no longer writes the OFFSET_MOVED_EVENT topic).
 */
import {
  ExpressionForRetryMessageFilter,
  ExpressionMessageFilter,
  buildSubscriptionDataWithType,
  compileSql92,
  isTagType,
  type CompiledSql92,
  type SubscriptionData,
} from '../../filter/index.js';
import {
  FAQ_SUFFIX,
  RequestCode,
  ResponseCode,
  hasCommitOffsetFlag,
  hasSubscriptionFlag,
  hasSuspendFlag,
  isReadable,
  type PullMessageRequestHeader,
  type RemotingResponse,
} from '../../protocol/index.js';
import type { GetMessageResult, GetMessageStatus, MessageFilter } from '../../store/index.js';
import type {
  BrokerContext,
  BrokerRequest,
  ConnectionInfo,
  ConsumerFilterDataApi,
  Processor,
} from '../broker-context.js';
import { fail } from './responses.js';

/** RocketMQ: ForbiddenType. */
export const ForbiddenType = Object.freeze({
  BROKER_FORBIDDEN: 1,
  GROUP_FORBIDDEN: 2,
  TOPIC_FORBIDDEN: 3,
  BROADCASTING_DISABLE_FORBIDDEN: 4,
  SUBSCRIPTION_FORBIDDEN: 5,
});

/** RocketMQ: composeResponseHeader's status → code table. */
export function pullResponseCode(status: GetMessageStatus, requestOffset: number): number {
  switch (status) {
    case 'FOUND':
      return ResponseCode.SUCCESS;
    case 'MESSAGE_WAS_REMOVING':
    case 'NO_MATCHED_MESSAGE':
      return ResponseCode.PULL_RETRY_IMMEDIATELY;
    case 'NO_MATCHED_LOGIC_QUEUE':
    case 'NO_MESSAGE_IN_QUEUE':
      return requestOffset !== 0 ? ResponseCode.PULL_OFFSET_MOVED : ResponseCode.PULL_NOT_FOUND;
    case 'OFFSET_FOUND_NULL':
    case 'OFFSET_OVERFLOW_ONE':
      return ResponseCode.PULL_NOT_FOUND;
    case 'OFFSET_OVERFLOW_BADLY':
    case 'OFFSET_TOO_SMALL':
    case 'OFFSET_RESET':
      return ResponseCode.PULL_OFFSET_MOVED;
  }
}

const forbidden = (remark: string, forbiddenType: number): RemotingResponse =>
  fail(ResponseCode.NO_PERMISSION, remark, { forbiddenType });

/** A heartbeat-registered filter as the filter module's compiled-expression shape. */
function compiledFrom(data: ConsumerFilterDataApi): CompiledSql92 {
  return {
    expression: data.expression,
    propertyNames: [],
    evaluate: (p) => data.matches((p ?? null) as Record<string, string> | null),
    matches: (p) => data.matches((p ?? null) as Record<string, string> | null),
  };
}

/** A filter built from a pull's own subscription, with what it was built from. */
interface KnownFilter {
  expressionType: string | undefined;
  subVersion: number;
  filterSupportRetry: boolean;
  filter: ExpressionMessageFilter;
}

/**
 * Per broker, topic and subscription expression: the filter built for the pulls that carry their
 * subscription (the SUBSCRIPTION flag). Such a consumer sends the same subscription with every pull, and
 * a filter is never changed once built, so it is built once rather than on every pull. Bounded: emptied
 * when it holds this many.
 */
const knownFilters = new WeakMap<BrokerContext, Map<string, Map<string, KnownFilter>>>();
const MAX_KNOWN_FILTERS = 1024;
let knownFilterCount = 0;

function knownFilter(ctx: BrokerContext, h: PullMessageRequestHeader): ExpressionMessageFilter | undefined {
  const known = knownFilters
    .get(ctx)
    ?.get(h.topic)
    ?.get(h.subscription ?? '');
  if (
    known === undefined ||
    known.expressionType !== h.expressionType ||
    known.subVersion !== h.subVersion ||
    known.filterSupportRetry !== ctx.brokerConfig.filterSupportRetry
  )
    return undefined;
  return known.filter;
}

function rememberFilter(ctx: BrokerContext, h: PullMessageRequestHeader, filter: ExpressionMessageFilter): void {
  let byTopic = knownFilters.get(ctx);
  if (!byTopic || knownFilterCount >= MAX_KNOWN_FILTERS) {
    byTopic = new Map();
    knownFilters.set(ctx, byTopic);
    knownFilterCount = 0;
  }
  let bySubscription = byTopic.get(h.topic);
  if (!bySubscription) byTopic.set(h.topic, (bySubscription = new Map()));
  if (!bySubscription.has(h.subscription ?? '')) knownFilterCount++;
  bySubscription.set(h.subscription ?? '', {
    expressionType: h.expressionType,
    subVersion: h.subVersion,
    filterSupportRetry: ctx.brokerConfig.filterSupportRetry,
    filter,
  });
}

interface Prepared {
  filter: MessageFilter;
  topicSysFlag: number;
  groupSysFlag: number;
}

/** Checks 1–10 of RocketMQ's PullMessageProcessor; the answer when one fails, else the filter to read with. */
function prepare(
  ctx: BrokerContext,
  code: number,
  h: PullMessageRequestHeader,
  connection: ConnectionInfo,
): RemotingResponse | Prepared {
  const cfg = ctx.brokerConfig;
  // 1-2: the broker
  if (!isReadable(cfg.brokerPermission)) {
    return forbidden(`the broker[${ctx.brokerIP}] pulling message is forbidden`, ForbiddenType.BROKER_FORBIDDEN);
  }
  if (code === RequestCode.LITE_PULL_MESSAGE && !cfg.litePullMessageEnable) {
    return forbidden(`the broker[${ctx.brokerIP}] for lite pull consumer is forbidden`, ForbiddenType.BROKER_FORBIDDEN);
  }
  // 3-4: the subscription group
  const group = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(h.consumerGroup);
  if (!group) {
    const limit = ctx.subscriptionGroupManager.autoCreateLimitRemark?.();
    return fail(
      ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
      `subscription group [${h.consumerGroup}] does not exist, ${limit ? `${limit} ` : ''}${FAQ_SUFFIX}`,
    );
  }
  if (!group.consumeEnable) {
    return forbidden(`subscription group no permission, ${h.consumerGroup}`, ForbiddenType.GROUP_FORBIDDEN);
  }
  // 5-6: the topic
  const topicConfig = ctx.topicConfigManager.selectTopicConfig(h.topic);
  if (!topicConfig) {
    ctx.logger.warn({ topic: h.topic, consumer: connection.remoteAddress }, 'pull: topic not exist');
    return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${h.topic}] not exist, apply first please! ${FAQ_SUFFIX}`);
  }
  if (!isReadable(topicConfig.perm)) {
    return forbidden(`the topic[${h.topic}] pulling message is forbidden`, ForbiddenType.TOPIC_FORBIDDEN);
  }
  // 8: the queue id
  if (h.queueId < 0 || h.queueId >= topicConfig.readQueueNums) {
    return fail(
      ResponseCode.INVALID_PARAMETER,
      `queueId[${h.queueId}] is illegal, topic:[${h.topic}] topicConfig.readQueueNums:[${topicConfig.readQueueNums}] consumer:[${connection.remoteAddress}]`,
    );
  }
  // 9: the subscription
  let subscriptionData: SubscriptionData;
  let filterData: CompiledSql92 | null = null;
  const fromRequest = hasSubscriptionFlag(h.sysFlag);
  const known = fromRequest ? knownFilter(ctx, h) : undefined;
  if (known?.subscriptionData) subscriptionData = known.subscriptionData;
  else if (fromRequest) {
    try {
      subscriptionData = buildSubscriptionDataWithType(h.topic, h.subscription, h.expressionType);
      subscriptionData.subVersion = h.subVersion;
      if (!isTagType(subscriptionData.expressionType)) {
        // Only SQL92 has a compiler: any other type cannot be parsed (RocketMQ's build gives null).
        if (subscriptionData.expressionType !== 'SQL92')
          throw new Error(`no compiler for ${subscriptionData.expressionType}`);
        filterData = compileSql92(subscriptionData.subString);
      }
    } catch (e) {
      ctx.logger.warn(
        { err: e, group: h.consumerGroup, subscription: h.subscription },
        'parse the consumer subscription failed',
      );
      return fail(ResponseCode.SUBSCRIPTION_PARSE_FAILED, "parse the consumer's subscription failed");
    }
  } else {
    const info = ctx.consumerManager.getConsumerGroupInfo(h.consumerGroup);
    if (!info) {
      return fail(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's group info not exist${FAQ_SUFFIX}`);
    }
    if (!group.consumeBroadcastEnable && info.messageModel === 'BROADCASTING') {
      return forbidden(
        `the consumer group[${h.consumerGroup}] can not consume by broadcast way`,
        ForbiddenType.BROADCASTING_DISABLE_FORBIDDEN,
      );
    }
    const registered = info.findSubscriptionData(h.topic);
    if (!registered) {
      return fail(ResponseCode.SUBSCRIPTION_NOT_EXIST, `the consumer's subscription not exist${FAQ_SUFFIX}`);
    }
    if (registered.subVersion < h.subVersion) {
      ctx.logger.warn({ group: h.consumerGroup, topic: h.topic }, "the broker's subscription is not latest");
      return fail(ResponseCode.SUBSCRIPTION_NOT_LATEST, "the consumer's subscription not latest");
    }
    subscriptionData = { ...registered, tagsSet: [...registered.tagsSet], codeSet: [...registered.codeSet] };
    if (!isTagType(registered.expressionType)) {
      const data = ctx.consumerFilterManager.get(h.topic, h.consumerGroup);
      if (!data) {
        return fail(
          ResponseCode.FILTER_DATA_NOT_EXIST,
          "The broker's consumer filter data is not exist!Your expression may be wrong!",
        );
      }
      if (data.clientVersion < h.subVersion) {
        return fail(ResponseCode.FILTER_DATA_NOT_LATEST, "the consumer's consumer filter data not latest");
      }
      filterData = compiledFrom(data);
    }
  }
  // 10: SQL filtering enabled
  if (!isTagType(subscriptionData.expressionType) && !cfg.enablePropertyFilter) {
    return fail(
      ResponseCode.SYSTEM_ERROR,
      `The broker does not support consumer to filter message by ${subscriptionData.expressionType}`,
    );
  }
  let filter = known;
  if (!filter) {
    filter = cfg.filterSupportRetry
      ? new ExpressionForRetryMessageFilter(subscriptionData, filterData, (topic, g) => {
          if (topic === undefined) return null;
          const d = ctx.consumerFilterManager.get(topic, g);
          return d ? compiledFrom(d) : null;
        })
      : new ExpressionMessageFilter(subscriptionData, filterData);
    if (fromRequest) rememberFilter(ctx, h, filter);
  }
  return { filter, topicSysFlag: topicConfig.topicSysFlag, groupSysFlag: group.groupSysFlag };
}

/** RocketMQ: processRequest(request, channel, brokerAllowSuspend). */
export async function processPullRequest(
  ctx: BrokerContext,
  request: BrokerRequest,
  connection: ConnectionInfo,
  brokerAllowSuspend: boolean,
): Promise<RemotingResponse> {
  const h = request.header as PullMessageRequestHeader;
  const prepared = prepare(ctx, request.code, h, connection);
  if (!('filter' in prepared)) return prepared;
  // RocketMQ 5 (useServerSideResetOffset): an administrator's pending reset answers the group's next
  // pull of the queue with PULL_OFFSET_MOVED and the reset offset. A pull from the reset offset itself
  // comes from a consumer that already moved there (RESET_CONSUMER_CLIENT_OFFSET): it is served.
  const resetOffset = ctx.consumerOffsetManager.queryThenEraseResetOffset(h.topic, h.consumerGroup, h.queueId);
  if (resetOffset !== undefined && resetOffset !== h.queueOffset) {
    const header = {
      nextBeginOffset: resetOffset,
      minOffset: ctx.store.getMinOffsetInQueue(h.topic, h.queueId),
      maxOffset: ctx.store.getMaxOffsetInQueue(h.topic, h.queueId),
      suggestWhichBrokerId: 0,
      topicSysFlag: prepared.topicSysFlag,
      groupSysFlag: prepared.groupSysFlag,
    };
    return { code: ResponseCode.PULL_OFFSET_MOVED, header, remark: 'OFFSET_RESET' };
  }

  // The consumer's offset riding on the pull is committed as the request arrives (RocketMQ commits it
  // after the read). Committed after the read, it could land after an UPDATE_CONSUMER_OFFSET that the
  // consumer sent later on the same connection — the final offset of a queue it is giving up — and move
  // the group's offset back, so the queue's next owner would consume part of it again. Over HTTP a pull
  // has a connection of its own and may still arrive after that update: it never moves the offset back.
  if (brokerAllowSuspend && hasCommitOffsetFlag(h.sysFlag)) {
    const { consumerGroup, topic, queueId, commitOffset } = h;
    ctx.consumerOffsetManager.commitOffset(connection.remoteAddress, consumerGroup, topic, queueId, commitOffset, true);
  }

  let result: GetMessageResult | null;
  try {
    result = await ctx.store.getMessage(
      h.consumerGroup,
      h.topic,
      h.queueId,
      h.queueOffset,
      h.maxMsgNums,
      prepared.filter,
    );
  } catch (e) {
    ctx.logger.warn({ err: e }, 'store getMessage failed');
    result = null;
  }
  if (!result) return fail(ResponseCode.SYSTEM_ERROR, 'store getMessage return null');

  const code = pullResponseCode(result.status, h.queueOffset);
  const header = {
    nextBeginOffset: result.nextBeginOffset,
    minOffset: result.minOffset,
    maxOffset: result.maxOffset,
    // RocketMQ: slave reading is off, so the master (0) is always suggested.
    suggestWhichBrokerId: 0,
    topicSysFlag: prepared.topicSysFlag,
    groupSysFlag: prepared.groupSysFlag,
  };
  const remark: string = result.status;

  // RocketMQ: the pull offset is recorded for every handled pull, also one about to be suspended.
  ctx.consumerOffsetManager.commitPullOffset(h.consumerGroup, h.topic, h.queueId, result.nextBeginOffset);

  switch (code) {
    case ResponseCode.SUCCESS:
      ctx.ops.stats.onGet(h.consumerGroup, h.topic, result.messageCount, result.bufferTotalSize);
      // The store already copied the records into one buffer (messagesBuffer): send it as it is.
      return {
        code,
        header,
        remark,
        body: result.messagesBuffer ?? Buffer.concat(result.messages, result.bufferTotalSize),
      };
    case ResponseCode.PULL_NOT_FOUND:
      if (brokerAllowSuspend && hasSuspendFlag(h.sysFlag)) {
        const pollingTimeMills = ctx.brokerConfig.longPollingEnable
          ? Math.min(h.suspendTimeoutMillis, MAX_SUSPEND_TIMEOUT_MS)
          : ctx.brokerConfig.shortPollingTimeMills;
        return suspend(ctx, request, connection, prepared.filter, pollingTimeMills, { code, header, remark });
      }
      return { code, header, remark };
    case ResponseCode.PULL_OFFSET_MOVED:
      // RocketMQ 5: the OffsetMovedEvent is only logged.
      ctx.logger.info(
        {
          consumerGroup: h.consumerGroup,
          mq: { topic: h.topic, brokerName: ctx.brokerName, queueId: h.queueId },
          offsetRequest: h.queueOffset,
          offsetNew: result.nextBeginOffset,
        },
        `PULL_OFFSET_MOVED: correction offset (${result.status})`,
      );
      return { code, header, remark };
    default:
      return { code, header, remark };
  }
}

/**
 * The longest a pull is held, ms: the longest hold a RocketMQ or rocketmq-ts client asks for (2 min).
 * RocketMQ's broker holds a pull as long as asked; here the hold is a timer, and a timer past
 * 2^31 - 1 ms fires at once, which would turn a huge `suspendTimeoutMillis` into a busy poll.
 */
export const MAX_SUSPEND_TIMEOUT_MS = 120_000;

/** Holds the request; it is answered by a second run (no suspension, no commit) or dropped. */
function suspend(
  ctx: BrokerContext,
  request: BrokerRequest,
  connection: ConnectionInfo,
  filter: MessageFilter,
  pollingTimeMills: number,
  notFound: RemotingResponse,
): Promise<RemotingResponse> {
  const h = request.header as PullMessageRequestHeader;
  connection.held(1);
  return new Promise((resolve) => {
    ctx.pullRequestHoldService.suspendPullRequest({
      topic: h.topic,
      queueId: h.queueId,
      pullFromThisOffset: h.queueOffset,
      suspendTimestamp: ctx.clock.now(),
      timeoutMillis: pollingTimeMills,
      filter,
      client: connection,
      wake: () => {
        connection.held(-1);
        processPullRequest(ctx, request, connection, false).then(resolve, (e: unknown) => {
          ctx.logger.error({ err: e }, 'held pull failed on wake-up');
          resolve(fail(ResponseCode.SYSTEM_ERROR, e instanceof Error ? e.message : String(e)));
        });
      },
      drop: () => {
        connection.held(-1);
        resolve(notFound);
      },
    });
  });
}

export const pullMessage: Processor = (ctx, request, connection) => processPullRequest(ctx, request, connection, true);
