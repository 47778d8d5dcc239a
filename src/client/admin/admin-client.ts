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
 *
 * The commands are grouped beside this file (admin-topics, admin-consumers, admin-messages, over
 * admin-transport); AdminClient's methods delegate to them.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { defaultLogger } from '../../common/env-logger.js';
import type { MessageExt } from '../../common/message.js';
import { createTransport } from '../../remoting/transport-factory.js';
import {
  clientOptionsShape,
  credentialsSchema,
  finishClientOptions,
  loggerSchema,
  ms,
  parseOptions,
} from '../instance/client-options.js';
import type { CredentialsSource } from '../../remoting/transport-factory.js';
import type { TlsOptions } from '../../remoting/transport-factory.js';
import {
  consumerConnection,
  consumerProgress,
  resetOffsetByTime,
  type ConsumerConnection,
  type ConsumerProgress,
  type ResetOffsetResult,
} from './admin-consumers.js';
import { queryMsgById, queryMsgByKey, type QueryByKeyOptions } from './admin-messages.js';
import { queryMsgTraceById, type MsgTraceView, type QueryMsgTraceOptions } from './admin-trace.js';
import {
  createTopic,
  deleteTopic,
  topicList,
  topicStatus,
  type CreateTopicOptions,
  type TopicQueueStatus,
} from './admin-topics.js';
import { AdminTransport } from './admin-transport.js';
import { NameMapper } from '../instance/namespace.js';

export type {
  ConsumerConnection,
  ConsumerConnectionInfo,
  ConsumerProgress,
  ConsumerQueueProgress,
  ResetOffsetResult,
} from './admin-consumers.js';
export type { QueryByKeyOptions } from './admin-messages.js';
export type { CreateTopicOptions, TopicQueueStatus } from './admin-topics.js';

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
  /**
   * The account of a cluster with ACL turned on: `{ accessKey, secretKey, securityToken? }` or a
   * function returning them (sync or async), called for every request. Admin requests (topic and
   * group changes, offset resets) need an account with `admin: true`.
   */
  credentials?: CredentialsSource | undefined;
  /** TLS to the NameServers and brokers, as every client's `tls` option (`true` or Node's tls.connect options). */
  tls?: boolean | TlsOptions | undefined;
  /**
   * RocketMQ's ClientConfig.namespace: the topics and groups named in calls are this namespace's
   * (`ns%Topic` on the wire), and what comes back carries the plain names; `topicList` lists this
   * namespace's topics and the system topics. Default: none.
   */
  namespace?: string | undefined;
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
  credentials: credentialsSchema.optional(),
  tls: clientOptionsShape.tls,
  namespace: clientOptionsShape.namespace,
  requestTimeoutMs: ms(1).default(DEFAULT_ADMIN_CLIENT_OPTIONS.requestTimeoutMs),
  logger: loggerSchema.default(() => defaultLogger()),
});

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
  readonly #transport: AdminTransport;
  /** The namespace's name mapper: calls name wire topics and groups, answers carry plain ones. */
  readonly #names: NameMapper;

  constructor(options: AdminClientOptions) {
    const o = finishClientOptions(parseOptions(adminOptionsSchema, options, 'AdminClient'));
    if (o.namesrvAddr.length > 0 && o.accessToken !== undefined)
      throw new InvalidArgumentError(
        'accessToken',
        'is for the bundled broker over HTTP (endpoints); RocketMQ NameServers (namesrvAddr) take no token',
      );
    const remoting =
      o.namesrvAddr.length > 0
        ? createTransport({
            kind: 'tcp',
            credentials: o.credentials,
            tls: o.tls,
            logger: o.logger,
            connectTimeoutMs: o.requestTimeoutMs,
          })
        : createTransport({
            kind: 'http',
            accessToken: o.accessToken,
            credentials: o.credentials,
            tls: o.tls,
            logger: o.logger,
            connectionsPerBroker: 2,
          });
    this.#transport = new AdminTransport(remoting, o.endpoints, o.namesrvAddr, o.requestTimeoutMs);
    this.#names = new NameMapper(o.namespace);
  }

  /** The namespace, or undefined. */
  get namespace(): string | undefined {
    return this.#names.namespace;
  }

  /** Runs a call with errors and the answer in plain names. */
  async #plain<T>(fn: () => Promise<T>): Promise<T> {
    return this.#names.unwrapPayload(await this.#names.guard(fn));
  }

  /** The bundled brokers this client asks (empty when `namesrvAddr` is used). */
  get endpoints(): readonly string[] {
    return this.#transport.endpoints;
  }

  /** The NameServers this client asks (empty when `endpoints` is used). */
  get namesrvAddr(): readonly string[] {
    return this.#transport.namesrvAddr;
  }

  /**
   * The brokers each call goes to: the endpoints, or the master brokers of the cluster as the
   * NameServers list them now (mqadmin's GET_BROKER_CLUSTER_INFO).
   */
  async brokerAddresses(): Promise<string[]> {
    return this.#transport.brokerAddresses();
  }

  // ---- topics ----

  /** Every topic the brokers know, system topics included, sorted (mqadmin `topicList`). */
  async topicList(): Promise<string[]> {
    const names = this.#names;
    const all = await names.guard(() => topicList(this.#transport));
    return names.active ? all.filter((t) => names.owns(t)).map((t) => names.unwrap(t)) : all;
  }

  /** Creates or updates a topic on every broker (mqadmin `updateTopic`). */
  async createTopic(topic: string, options: CreateTopicOptions = {}): Promise<void> {
    return this.#plain(() => createTopic(this.#transport, this.#names.wrap(topic), options));
  }

  /**
   * Deletes a topic from every broker — its config, queues and committed offsets — and, with
   * `namesrvAddr`, its route from the NameServers (mqadmin `deleteTopic`).
   */
  async deleteTopic(topic: string): Promise<void> {
    return this.#plain(() => deleteTopic(this.#transport, this.#names.wrap(topic)));
  }

  /** Min and max offset and last store time of each queue of a topic (mqadmin `topicStatus`). */
  async topicStatus(topic: string): Promise<TopicQueueStatus[]> {
    return this.#plain(() => topicStatus(this.#transport, this.#names.wrap(topic)));
  }

  // ---- consumer groups ----

  /**
   * A group's progress per queue — broker offset, committed offset, lag, last consume time — and the
   * totals (mqadmin `consumerProgress`). Without `topic`: every topic the group has committed offsets
   * on, its retry topic included.
   */
  async consumerProgress(group: string, topic?: string): Promise<ConsumerProgress> {
    const names = this.#names;
    return this.#plain(() =>
      consumerProgress(this.#transport, names.wrap(group), topic === undefined ? topic : names.wrap(topic)),
    );
  }

  /** A group's live members and subscriptions (mqadmin `consumerConnection`); CONSUMER_NOT_ONLINE when none. */
  async consumerConnection(group: string): Promise<ConsumerConnection> {
    return this.#plain(() => consumerConnection(this.#transport, this.#names.wrap(group)));
  }

  // ---- messages ----

  /**
   * A message by its id (mqadmin `queryMsgById`): an offset message id (store host and commit-log
   * offset) is read directly; a client message id (UNIQ_KEY) is looked up in `topic`, which is then needed.
   */
  async queryMsgById(msgId: string, topic?: string): Promise<MessageExt> {
    const names = this.#names;
    const msg = await names.guard(() =>
      queryMsgById(this.#transport, msgId, topic === undefined ? topic : names.wrap(topic)),
    );
    return names.unwrapMessage(msg);
  }

  /** The messages of a topic whose keys hold `key`, newest first (mqadmin `queryMsgByKey`). */
  async queryMsgByKey(topic: string, key: string, options: QueryByKeyOptions = {}): Promise<MessageExt[]> {
    const names = this.#names;
    const msgs = await names.guard(() => queryMsgByKey(this.#transport, names.wrap(topic), key, options));
    return msgs.map((m) => names.unwrapMessage(m));
  }

  /**
   * The trace records about a message (mqadmin `queryMsgTraceById`): its Pub, SubBefore, SubAfter and
   * EndTransaction records from the trace topic, oldest trace message first.
   */
  async queryMsgTraceById(msgId: string, options: QueryMsgTraceOptions = {}): Promise<MsgTraceView[]> {
    return queryMsgTraceById(this.#transport, msgId, options);
  }

  // ---- offsets ----

  /**
   * Moves a group's offsets on a topic to the first message stored at or after `timestamp` (ms; -1:
   * the end of each queue) (mqadmin `resetOffsetByTime`). With `force` false an offset only moves back.
   * Online consumers move there on their next pull of each queue.
   */
  async resetOffsetByTime(group: string, topic: string, timestamp: number, force = true): Promise<ResetOffsetResult[]> {
    const names = this.#names;
    return this.#plain(() =>
      resetOffsetByTime(this.#transport, names.wrap(group), names.wrap(topic), timestamp, force),
    );
  }

  /** Closes the connections. Idempotent. */
  shutdown(): Promise<void> {
    return this.#transport.close();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
