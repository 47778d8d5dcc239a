/**
 * The AdminClient's consumer-group commands (mqadmin `consumerProgress`, `consumerConnection`,
 * `resetOffsetByTime`). The AdminClient's methods of the same names document them.
 */
import { InvalidArgumentError, RocketMQError } from '../../common/errors.js';
import type { MessageQueue } from '../../common/message.js';
import {
  ConsumerConnectionBody,
  RequestCode,
  ResponseCode,
  describeZodError,
  errorFromResponse,
} from '../../protocol/index.js';
import { byQueue, checkGroup, checkTopic, num, offsetTableOf, type AdminTransport } from './admin-transport.js';

/** One queue of `consumerProgress`. */
export interface ConsumerQueueProgress {
  mq: MessageQueue;
  /** The queue's max offset (one past its last message). */
  brokerOffset: number;
  /** The group's committed offset (0 when none). */
  consumerOffset: number;
  /** Messages not yet consumed: brokerOffset - consumerOffset. */
  lag: number;
  /** Store time of the last consumed message, ms (0 when none). */
  lastTimestamp: number;
}

/** A group's progress: RocketMQ's ConsumeStats with the per-queue lag and the totals mqadmin prints. */
export interface ConsumerProgress {
  group: string;
  queues: ConsumerQueueProgress[];
  /** Messages consumed per second over the last minute. */
  consumeTps: number;
  brokerOffsetTotal: number;
  consumerOffsetTotal: number;
  /** The sum of the queues' lag (mqadmin's "Diff Total"). */
  diffTotal: number;
}

/** A member of a group as `consumerConnection` reports it. */
export interface ConsumerConnectionInfo {
  clientId: string;
  clientAddr: string;
  language: string;
  version: number;
}

/** The members of a group and its subscriptions: RocketMQ's ConsumerConnection. */
export interface ConsumerConnection {
  group: string;
  connections: ConsumerConnectionInfo[];
  /** topic → subscription expression (and its type, TAG or SQL92). */
  subscriptions: Array<{ topic: string; subString: string; expressionType: string }>;
  consumeType: string | undefined;
  messageModel: string | undefined;
  consumeFromWhere: string | undefined;
}

/** The offset a queue was reset to. */
export interface ResetOffsetResult {
  mq: MessageQueue;
  offset: number;
}

export async function consumerProgress(t: AdminTransport, group: string, topic?: string): Promise<ConsumerProgress> {
  checkGroup(group);
  if (topic !== undefined) checkTopic(topic);
  const queues: ConsumerQueueProgress[] = [];
  let consumeTps = 0;
  for (const addr of await t.brokerAddresses()) {
    const res = await t.call(addr, RequestCode.GET_CONSUME_STATS, {
      consumerGroup: group,
      ...(topic !== undefined ? { topic } : {}),
    });
    const { entries, root } = offsetTableOf(res, 'GET_CONSUME_STATS');
    consumeTps += num(root.consumeTps);
    for (const [mq, v] of entries) {
      const o = v as Record<string, unknown>;
      const brokerOffset = num(o.brokerOffset);
      const consumerOffset = num(o.consumerOffset);
      queues.push({
        mq,
        brokerOffset,
        consumerOffset,
        lag: Math.max(0, brokerOffset - consumerOffset),
        lastTimestamp: num(o.lastTimestamp),
      });
    }
  }
  queues.sort(byQueue);
  const sum = (f: (q: ConsumerQueueProgress) => number): number => queues.reduce((s, q) => s + f(q), 0);
  return {
    group,
    queues,
    consumeTps,
    brokerOffsetTotal: sum((q) => q.brokerOffset),
    consumerOffsetTotal: sum((q) => q.consumerOffset),
    diffTotal: sum((q) => q.lag),
  };
}

export async function consumerConnection(t: AdminTransport, group: string): Promise<ConsumerConnection> {
  checkGroup(group);
  const out: ConsumerConnection = {
    group,
    connections: [],
    subscriptions: [],
    consumeType: undefined,
    messageModel: undefined,
    consumeFromWhere: undefined,
  };
  let lastError: unknown;
  let online = false;
  for (const addr of await t.brokerAddresses()) {
    const res = await t.invoke(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: group });
    if (res.code !== ResponseCode.SUCCESS) {
      lastError = errorFromResponse(res.code, res.remark);
      continue;
    }
    online = true;
    const parsed = ConsumerConnectionBody.safeParse(JSON.parse(res.body ? res.body.toString('utf8') : 'null'));
    if (!parsed.success) {
      const { field, message } = describeZodError(parsed.error);
      throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: consumer connection body: ${field}: ${message}`);
    }
    const b = parsed.data;
    for (const c of b.connectionSet)
      if (!out.connections.some((x) => x.clientId === c.clientId)) out.connections.push(c);
    for (const s of Object.values(b.subscriptionTable)) {
      if (!out.subscriptions.some((x) => x.topic === s.topic))
        out.subscriptions.push({ topic: s.topic, subString: s.subString, expressionType: s.expressionType });
    }
    out.consumeType ??= b.consumeType;
    out.messageModel ??= b.messageModel;
    out.consumeFromWhere ??= b.consumeFromWhere;
  }
  if (!online)
    throw lastError ?? errorFromResponse(ResponseCode.CONSUMER_NOT_ONLINE, `the consumer group[${group}] not online`);
  out.connections.sort((a, b) => a.clientId.localeCompare(b.clientId));
  out.subscriptions.sort((a, b) => a.topic.localeCompare(b.topic));
  return out;
}

export async function resetOffsetByTime(
  t: AdminTransport,
  group: string,
  topic: string,
  timestamp: number,
  force: boolean,
): Promise<ResetOffsetResult[]> {
  checkGroup(group);
  checkTopic(topic);
  if (!Number.isSafeInteger(timestamp) || timestamp < -1)
    throw new InvalidArgumentError('timestamp', `must be ms since the epoch or -1, got ${String(timestamp)}`);
  const rows: ResetOffsetResult[] = [];
  for (const addr of await t.brokerAddresses()) {
    const res = await t.call(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
      topic,
      group,
      timestamp,
      isForce: force,
    });
    for (const [mq, v] of offsetTableOf(res, 'INVOKE_BROKER_TO_RESET_OFFSET').entries)
      rows.push({ mq, offset: num(v) });
  }
  return rows.sort(byQueue);
}
