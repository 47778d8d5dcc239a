/**
 * AdminClient (RocketMQ's DefaultMQAdminExt, the API behind `mqadmin`): topics, queue offsets, a
 * consumer group's progress and members, message queries and offset resets — without joining any
 * group. It sends no heartbeat and registers nothing, so watching a group's lag never takes queues
 * from its consumers; committed offsets are read from the broker's table in memory, as fresh as the
 * consumers' last commit.
 *
 * `endpoints` names the bundled brokers by their HTTP address; `namesrvAddr` names the NameServers of
 * an Apache RocketMQ cluster (or the bundled broker's remoting port), from which the cluster's master
 * brokers are read on each call, and reached over RocketMQ's TCP remoting. Each call asks every broker
 * and merges the answers (a topic's queues may live on several brokers).
 */
import { z } from 'zod';
import { InvalidArgumentError, RocketMQError, StateError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { defaultLogger } from '../../common/env-logger.js';
import type { MessageExt, MessageQueue } from '../../common/message.js';
import { decodeMessageId, decodeMessages } from '../../common/codec/index.js';
import { topicNameProblem } from '../../common/names.js';
import {
  ConsumerConnectionBody,
  FastJsonMap,
  RequestCode,
  ResponseCode,
  TopicListBody,
  UNIQUE_MSG_QUERY_FLAG,
  describeZodError,
  errorFromResponse,
  parseFastJson,
  type RemotingResponse,
} from '../../protocol/index.js';
import type { RemotingClient } from '../../remoting/remoting-client.js';
import { createTransport } from '../../remoting/transport-factory.js';
import { clientOptionsShape, finishClientOptions, loggerSchema, ms, parseOptions } from '../instance/client-options.js';

export interface AdminClientOptions {
  /**
   * The bundled brokers' HTTP addresses, e.g. `http://127.0.0.1:8081` (one or several). Give exactly
   * one of `endpoints` and `namesrvAddr`.
   */
  endpoints?: string | readonly string[];
  /**
   * The NameServers of an Apache RocketMQ cluster, or the bundled broker's remoting port:
   * `'host:port;host:port'` or an array of `'host:port'` (mqadmin's `-n`). Every master broker of the
   * cluster is asked, over RocketMQ's TCP remoting. Give exactly one of `endpoints` and `namesrvAddr`.
   */
  namesrvAddr?: string | readonly string[];
  /** Sent as `Authorization: Bearer <token>` to brokers started with an access token (`endpoints` only). */
  accessToken?: string | undefined;
  /** Deadline of each call, ms. Default 5000. */
  requestTimeoutMs?: number;
  /** A pino-shaped logger. Default: silent. */
  logger?: Logger;
}

export const DEFAULT_ADMIN_CLIENT_OPTIONS = Object.freeze({ requestTimeoutMs: 5000 });

const adminOptionsSchema = z.strictObject({
  endpoints: clientOptionsShape.endpoints,
  namesrvAddr: clientOptionsShape.namesrvAddr,
  accessToken: z.string().min(1).optional(),
  requestTimeoutMs: ms(1).default(DEFAULT_ADMIN_CLIENT_OPTIONS.requestTimeoutMs),
  logger: loggerSchema.default(() => defaultLogger()),
});

/** One queue of `topicStatus`: RocketMQ's TopicOffset. */
export interface TopicQueueStatus {
  mq: MessageQueue;
  minOffset: number;
  maxOffset: number;
  /** Store time of the queue's last message, ms (0 when empty). */
  lastUpdateTimestamp: number;
}

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

export interface CreateTopicOptions {
  /** Read and write queues. Default 8 (mqadmin's default). */
  queueNums?: number;
  /** PermName bits: 6 = read and write (default), 4 = read only, 2 = write only. */
  perm?: number;
  /** Marks the topic ordered. Default false. */
  order?: boolean;
  /** Read queues, when they should differ from `queueNums`. */
  readQueueNums?: number;
  /** Write queues, when they should differ from `queueNums`. */
  writeQueueNums?: number;
}

export interface QueryByKeyOptions {
  /** At most this many messages (the broker caps it at 64). Default 32. */
  maxNum?: number;
  /** Only messages stored at or after this time, ms. Default 0. */
  beginTimestamp?: number;
  /** Only messages stored at or before this time, ms. Default: no limit. */
  endTimestamp?: number;
}

type MQKey = { topic: string; brokerName: string; queueId: number };

function mqOf(k: unknown): MessageQueue {
  const o = k as Partial<MQKey>;
  if (typeof o?.topic !== 'string' || typeof o.brokerName !== 'string' || typeof o.queueId !== 'number')
    throw new RocketMQError(
      'ERR_BAD_RESPONSE',
      'malformed response: a MessageQueue key is not {topic, brokerName, queueId}',
    );
  return { topic: o.topic, brokerName: o.brokerName, queueId: o.queueId };
}

/** The entries of a fastjson `offsetTable` keyed by MessageQueue. */
function offsetTableOf(
  res: RemotingResponse,
  what: string,
): { entries: Array<[MessageQueue, unknown]>; root: Record<string, unknown> } {
  let root: unknown;
  try {
    root = parseFastJson(res.body ? res.body.toString('utf8') : 'null');
  } catch (e) {
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${what} body`, { cause: e });
  }
  if (root === null || typeof root !== 'object')
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${what} body is not an object`);
  const table = (root as { offsetTable?: unknown }).offsetTable;
  const entries =
    table instanceof FastJsonMap ? table.entries.map(([k, v]): [MessageQueue, unknown] => [mqOf(k), v]) : [];
  return { entries, root: root as Record<string, unknown> };
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const byQueue = (a: { mq: MessageQueue }, b: { mq: MessageQueue }): number =>
  a.mq.topic.localeCompare(b.mq.topic) || a.mq.brokerName.localeCompare(b.mq.brokerName) || a.mq.queueId - b.mq.queueId;

function checkTopic(topic: unknown, field = 'topic'): asserts topic is string {
  const problem = topicNameProblem(topic);
  if (problem) throw new InvalidArgumentError(field, problem);
}

function checkGroup(group: unknown): asserts group is string {
  if (typeof group !== 'string' || group.trim() === '')
    throw new InvalidArgumentError('group', 'must be a consumer group name');
}

/**
 * The admin API. Create it with the brokers' addresses, call what you need, then `shutdown()`:
 *
 * ```ts
 * const admin = new AdminClient({ endpoints: 'http://127.0.0.1:8081' });
 * const progress = await admin.consumerProgress('my-group');
 * console.log(progress.diffTotal);
 * await admin.shutdown();
 * ```
 */
export class AdminClient {
  readonly #endpoints: readonly string[];
  readonly #namesrvAddr: readonly string[];
  readonly #remoting: RemotingClient;
  readonly #timeoutMs: number;
  #closed: Promise<void> | undefined;

  constructor(options: AdminClientOptions) {
    const o = finishClientOptions(parseOptions(adminOptionsSchema, options, 'AdminClient'));
    if (o.namesrvAddr.length > 0 && o.accessToken !== undefined)
      throw new InvalidArgumentError(
        'accessToken',
        'is for the bundled broker over HTTP (endpoints); RocketMQ NameServers (namesrvAddr) take no token',
      );
    this.#endpoints = o.endpoints;
    this.#namesrvAddr = o.namesrvAddr;
    this.#timeoutMs = o.requestTimeoutMs;
    this.#remoting =
      o.namesrvAddr.length > 0
        ? createTransport({ kind: 'tcp', logger: o.logger, connectTimeoutMs: o.requestTimeoutMs })
        : createTransport({ kind: 'http', accessToken: o.accessToken, logger: o.logger, connectionsPerBroker: 2 });
  }

  /** The bundled brokers this client asks (empty when `namesrvAddr` is used). */
  get endpoints(): readonly string[] {
    return this.#endpoints;
  }

  /** The NameServers this client asks (empty when `endpoints` is used). */
  get namesrvAddr(): readonly string[] {
    return this.#namesrvAddr;
  }

  /**
   * The brokers each call goes to: the endpoints, or the master brokers of the cluster as the
   * NameServers list them now (mqadmin's GET_BROKER_CLUSTER_INFO).
   */
  async brokerAddresses(): Promise<string[]> {
    if (this.#namesrvAddr.length === 0) return [...this.#endpoints];
    const res = await this.#nameServerCall(RequestCode.GET_BROKER_CLUSTER_INFO);
    let root: unknown;
    try {
      root = parseFastJson(res.body ? res.body.toString('utf8') : 'null');
    } catch (e) {
      throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: cluster info body', { cause: e });
    }
    const table = (root as { brokerAddrTable?: unknown } | null)?.brokerAddrTable;
    if (table === null || typeof table !== 'object')
      throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: cluster info without brokerAddrTable');
    const masters = new Set<string>();
    for (const data of Object.values(table as Record<string, unknown>)) {
      const addrs = (data as { brokerAddrs?: unknown } | null)?.brokerAddrs;
      const entries =
        addrs instanceof FastJsonMap
          ? addrs.entries
          : addrs !== null && typeof addrs === 'object'
            ? Object.entries(addrs)
            : [];
      for (const [id, addr] of entries) if (String(id) === '0' && typeof addr === 'string') masters.add(addr);
    }
    if (masters.size === 0)
      throw new RocketMQError(
        'ERR_BROKER_NOT_EXIST',
        `the NameServers ${this.#namesrvAddr.join(';')} list no master broker`,
        {
          retriable: true,
        },
      );
    return [...masters].sort();
  }

  /** A NameServer request: the next NameServer is tried when one cannot be reached. */
  async #nameServerCall(code: number, header: Record<string, unknown> = {}): Promise<RemotingResponse> {
    let lastError: unknown;
    for (const addr of this.#namesrvAddr) {
      let res: RemotingResponse;
      try {
        res = await this.#invoke(addr, code, header);
      } catch (e) {
        if (e instanceof StateError) throw e;
        lastError = e;
        continue;
      }
      if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
      return res;
    }
    throw lastError;
  }

  async #invoke(addr: string, code: number, header: Record<string, unknown>): Promise<RemotingResponse> {
    if (this.#closed) throw new StateError('the AdminClient is shut down');
    return this.#remoting.invoke(addr, { code, header }, { timeoutMs: this.#timeoutMs });
  }

  async #call(addr: string, code: number, header: Record<string, unknown>): Promise<RemotingResponse> {
    const res = await this.#invoke(addr, code, header);
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    return res;
  }

  /** Every topic the brokers know, system topics included, sorted (mqadmin `topicList`). */
  async topicList(): Promise<string[]> {
    const all = new Set<string>();
    const answers =
      this.#namesrvAddr.length > 0
        ? [await this.#nameServerCall(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)]
        : await Promise.all(
            this.#endpoints.map((addr) => this.#call(addr, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {})),
          );
    for (const res of answers) {
      const parsed = TopicListBody.safeParse(JSON.parse(res.body ? res.body.toString('utf8') : 'null'));
      if (!parsed.success) throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: topic list body');
      for (const t of parsed.data.topicList) all.add(t);
    }
    return [...all].sort();
  }

  /** Creates or updates a topic on every broker (mqadmin `updateTopic`). */
  async createTopic(topic: string, options: CreateTopicOptions = {}): Promise<void> {
    checkTopic(topic);
    const queueNums = options.queueNums ?? 8;
    const readQueueNums = options.readQueueNums ?? queueNums;
    const writeQueueNums = options.writeQueueNums ?? queueNums;
    for (const [field, n] of [
      ['queueNums', queueNums],
      ['readQueueNums', readQueueNums],
      ['writeQueueNums', writeQueueNums],
    ] as const) {
      if (!Number.isInteger(n) || n < 1 || n > 1024)
        throw new InvalidArgumentError(field, `must be an integer from 1 to 1024, got ${String(n)}`);
    }
    const perm = options.perm ?? 6;
    if (![2, 4, 6].includes(perm)) throw new InvalidArgumentError('perm', `must be 2, 4 or 6, got ${String(perm)}`);
    for (const addr of await this.brokerAddresses()) {
      await this.#call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, {
        topic,
        readQueueNums,
        writeQueueNums,
        perm,
        order: options.order ?? false,
        // the fields a RocketMQ broker requires, with mqadmin's values
        defaultTopic: 'TBW102',
        topicFilterType: 'SINGLE_TAG',
        topicSysFlag: 0,
      });
    }
  }

  /**
   * Deletes a topic from every broker — its config, queues and committed offsets — and, with
   * `namesrvAddr`, its route from the NameServers (mqadmin `deleteTopic`).
   */
  async deleteTopic(topic: string): Promise<void> {
    checkTopic(topic);
    for (const addr of await this.brokerAddresses())
      await this.#call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, { topic });
    // As mqadmin: the NameServers forget the topic's route too (else it lingers until brokers re-register).
    for (const addr of this.#namesrvAddr) await this.#call(addr, RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic });
  }

  /** Min and max offset and last store time of each queue of a topic (mqadmin `topicStatus`). */
  async topicStatus(topic: string): Promise<TopicQueueStatus[]> {
    checkTopic(topic);
    const rows: TopicQueueStatus[] = [];
    let found = false;
    for (const addr of await this.brokerAddresses()) {
      const res = await this.#invoke(addr, RequestCode.GET_TOPIC_STATS_INFO, { topic });
      if (res.code === ResponseCode.TOPIC_NOT_EXIST) continue;
      if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
      found = true;
      for (const [mq, v] of offsetTableOf(res, 'GET_TOPIC_STATS_INFO').entries) {
        const o = v as Record<string, unknown>;
        rows.push({
          mq,
          minOffset: num(o.minOffset),
          maxOffset: num(o.maxOffset),
          lastUpdateTimestamp: num(o.lastUpdateTimestamp),
        });
      }
    }
    if (!found) throw errorFromResponse(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist`);
    return rows.sort(byQueue);
  }

  /**
   * A group's progress per queue — broker offset, committed offset, lag, last consume time — and the
   * totals (mqadmin `consumerProgress`). Without `topic`: every topic the group has committed offsets
   * on, its retry topic included.
   */
  async consumerProgress(group: string, topic?: string): Promise<ConsumerProgress> {
    checkGroup(group);
    if (topic !== undefined) checkTopic(topic);
    const queues: ConsumerQueueProgress[] = [];
    let consumeTps = 0;
    for (const addr of await this.brokerAddresses()) {
      const res = await this.#call(addr, RequestCode.GET_CONSUME_STATS, {
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

  /** A group's live members and subscriptions (mqadmin `consumerConnection`); CONSUMER_NOT_ONLINE when none. */
  async consumerConnection(group: string): Promise<ConsumerConnection> {
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
    for (const addr of await this.brokerAddresses()) {
      const res = await this.#invoke(addr, RequestCode.GET_CONSUMER_CONNECTION_LIST, { consumerGroup: group });
      if (res.code !== ResponseCode.SUCCESS) {
        lastError = errorFromResponse(res.code, res.remark);
        continue;
      }
      online = true;
      const parsed = ConsumerConnectionBody.safeParse(JSON.parse(res.body ? res.body.toString('utf8') : 'null'));
      if (!parsed.success) {
        const { field, message } = describeZodError(parsed.error);
        throw new RocketMQError(
          'ERR_BAD_RESPONSE',
          `malformed response: consumer connection body: ${field}: ${message}`,
        );
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

  /**
   * A message by its id (mqadmin `queryMsgById`): an offset message id (store host and commit-log
   * offset) is read directly; a client message id (UNIQ_KEY) is looked up in `topic`, which is then needed.
   */
  async queryMsgById(msgId: string, topic?: string): Promise<MessageExt> {
    if (typeof msgId !== 'string' || !/^[0-9A-Fa-f]{32}$|^[0-9A-Fa-f]{56}$/.test(msgId))
      throw new InvalidArgumentError('msgId', `must be a message id (32 or 56 hex digits), got '${String(msgId)}'`);
    let offset: number | undefined;
    try {
      offset = decodeMessageId(msgId).offset;
    } catch {
      offset = undefined;
    }
    if (offset !== undefined) {
      for (const addr of await this.brokerAddresses()) {
        const res = await this.#invoke(addr, RequestCode.VIEW_MESSAGE_BY_ID, { offset });
        if (res.code !== ResponseCode.SUCCESS || !res.body) continue;
        const [m] = decodeMessages(res.body);
        if (m && (m.msgId === msgId.toUpperCase() || m.offsetMsgId === msgId.toUpperCase())) return m;
      }
    }
    if (topic !== undefined) {
      checkTopic(topic);
      const found = await this.#query(topic, msgId, 32, 0, Number.MAX_SAFE_INTEGER, true);
      const m = found.find((x) => x.msgId === msgId.toUpperCase()) ?? found[0];
      if (m) return m;
    }
    throw errorFromResponse(
      ResponseCode.QUERY_NOT_FOUND,
      topic === undefined
        ? `no message with id ${msgId} (for a client message id, name its topic)`
        : `no message with id ${msgId} in topic ${topic}`,
    );
  }

  /** The messages of a topic whose keys hold `key`, newest first (mqadmin `queryMsgByKey`). */
  async queryMsgByKey(topic: string, key: string, options: QueryByKeyOptions = {}): Promise<MessageExt[]> {
    checkTopic(topic);
    if (typeof key !== 'string' || key === '') throw new InvalidArgumentError('key', 'must be a non-empty string');
    const maxNum = options.maxNum ?? 32;
    if (!Number.isInteger(maxNum) || maxNum < 1) throw new InvalidArgumentError('maxNum', 'must be an integer >= 1');
    return this.#query(
      topic,
      key,
      maxNum,
      options.beginTimestamp ?? 0,
      options.endTimestamp ?? Number.MAX_SAFE_INTEGER,
      false,
    );
  }

  async #query(
    topic: string,
    key: string,
    maxNum: number,
    begin: number,
    end: number,
    unique: boolean,
  ): Promise<MessageExt[]> {
    const out: MessageExt[] = [];
    for (const addr of await this.brokerAddresses()) {
      const res = await this.#invoke(addr, RequestCode.QUERY_MESSAGE, {
        topic,
        key,
        maxNum,
        beginTimestamp: begin,
        endTimestamp: end,
        ...(unique ? { [UNIQUE_MSG_QUERY_FLAG]: 'true' } : {}),
      });
      if (res.code === ResponseCode.QUERY_NOT_FOUND) continue;
      if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
      if (res.body) out.push(...decodeMessages(res.body));
    }
    return out.sort((a, b) => b.storeTimestamp - a.storeTimestamp).slice(0, maxNum);
  }

  /**
   * Moves a group's offsets on a topic to the first message stored at or after `timestamp` (ms; -1:
   * the end of each queue) (mqadmin `resetOffsetByTime`). With `force` false an offset only moves back.
   * Online consumers move there on their next pull of each queue.
   */
  async resetOffsetByTime(group: string, topic: string, timestamp: number, force = true): Promise<ResetOffsetResult[]> {
    checkGroup(group);
    checkTopic(topic);
    if (!Number.isSafeInteger(timestamp) || timestamp < -1)
      throw new InvalidArgumentError('timestamp', `must be ms since the epoch or -1, got ${String(timestamp)}`);
    const rows: ResetOffsetResult[] = [];
    for (const addr of await this.brokerAddresses()) {
      const res = await this.#call(addr, RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, {
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

  /** Closes the connections. Idempotent. */
  shutdown(): Promise<void> {
    this.#closed ??= this.#remoting.close();
    return this.#closed;
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
