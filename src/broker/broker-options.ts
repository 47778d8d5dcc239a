/**
 * Broker options: one type with a doc comment per field (default, unit), frozen defaults and one resolve
 * function that validates with zod and throws an InvalidArgumentError naming the option. Defaults are
 * RocketMQ's BrokerConfig values unless a comment says why ours differ.
 */
import { parseStrictOptions } from '../common/option-errors.js';
import { z } from 'zod';
import { systemClock, type Clock } from '../common/clock.js';
import { InvalidArgumentError } from '../common/errors.js';
import { type Logger } from '../common/logger.js';
import { defaultLogger } from '../common/env-logger.js';
import type { MessageStoreOptions } from '../store/index.js';
import { TLS_MODES, type BrokerTlsOptions } from './broker-tls.js';

/** Store options the broker passes through to the MessageStore (storePath, clock and logger come from the broker). */
export type BrokerStoreOptions = Omit<MessageStoreOptions, 'storePath' | 'clock' | 'logger' | 'storeHost'>;

export interface BrokerOptions {
  /** Root directory of the store and the config files (required). */
  storePath: string;
  /** Interface to bind. Default `127.0.0.1` (never all interfaces unless asked). */
  host?: string;
  /** TCP port; 0 picks a free one. Default 8081. */
  port?: number;
  /**
   * The address clients are told to use (route data, `Broker.address`), e.g. `http://10.0.0.5:8081`.
   * Default: `http://<host>:<port>`, with 127.0.0.1 / ::1 standing for an unspecified bind address.
   */
  advertisedAddress?: string;
  /** RocketMQ: brokerName. Default `broker-a`. */
  brokerName?: string;
  /** RocketMQ: brokerClusterName. Default `DefaultCluster`. */
  clusterName?: string;
  /** Topics are created on first send from the template TBW102. Default true (RocketMQ: autoCreateTopicEnable). */
  autoCreateTopicEnable?: boolean;
  /**
   * The broker starts with the message-trace topic `msgTraceTopicName` (one queue), where clients with
   * `enableMsgTrace` send their trace records. Default false (RocketMQ: traceTopicEnable).
   */
  traceTopicEnable?: boolean;
  /** The trace topic `traceTopicEnable` creates. Default `RMQ_SYS_TRACE_TOPIC` (RocketMQ: msgTraceTopicName). */
  msgTraceTopicName?: string;
  /** Queue count of TBW102 and so the ceiling for auto-created topics. Default 8 (RocketMQ: defaultTopicQueueNums). */
  defaultTopicQueueNums?: number;
  /** Subscription groups are created on first use. Default true (RocketMQ: autoCreateSubscriptionGroup). */
  autoCreateSubscriptionGroup?: boolean;
  /** Hold pulls that find nothing up to their suspend timeout. Default true (RocketMQ: longPollingEnable). */
  longPollingEnable?: boolean;
  /** Hold time when long polling is disabled, ms. Default 1000 (RocketMQ: shortPollingTimeMills). */
  shortPollingTimeMills?: number;
  /**
   * SQL92 subscriptions are served. Default **true** — RocketMQ's default is false, but SQL92 filtering is
   * a headline feature of this project, so the bundled broker serves it out of the box.
   */
  enablePropertyFilter?: boolean;
  /** SQL filters also apply to the group's retry topic. Default false (RocketMQ: filterSupportRetry). */
  filterSupportRetry?: boolean;
  /** PermName bits of the whole broker (READ 4, WRITE 2). Default 6 (RocketMQ: brokerPermission). */
  brokerPermission?: number;
  /** Period of the consumer-offset (and config) persistence, ms. Default 5000 (RocketMQ: flushConsumerOffsetInterval). */
  flushConsumerOffsetIntervalMs?: number;
  /** (Transactions) A half message younger than this is not checked yet, ms. Default 6000 (RocketMQ: transactionTimeOut). */
  transactionTimeOut?: number;
  /** (Transactions) How often undecided half messages are checked, ms. Default 60000 (RocketMQ: transactionCheckInterval). */
  transactionCheckInterval?: number;
  /** (Transactions) Checks of one half message before it is given up. Default 15 (RocketMQ: transactionCheckMax). */
  transactionCheckMax?: number;
  /** (Transactions) Transactional sends are refused (NO_PERMISSION). Default false (RocketMQ: rejectTransactionMessage). */
  rejectTransactionMessage?: boolean;
  /** Largest request body accepted over HTTP, bytes; larger ones are answered 413. Default 8 MiB. */
  maxRequestBodyBytes?: number;
  /** When set, every call must carry `Authorization: Bearer <token>`; otherwise it is answered 401. */
  accessToken?: string;
  /**
   * TLS (RocketMQ's `tls.server.mode`, `tls.server.certPath`, `tls.server.keyPath`): `cert` and `key`
   * are paths of PEM files, read and checked at start; `mode` is `enforcing` (default: TLS only),
   * `permissive` (TLS and plain on the remoting port, told apart by the first byte) or `disabled`. With
   * TLS on, the HTTP listener serves HTTPS only, with the same certificate, in either mode.
   */
  tls?: BrokerTlsOptions;
  /**
   * RocketMQ's plain ACL: the path of a `plain_acl.yml`. Every request on both listeners must then be
   * signed by one of its accounts (RocketMQ: aclEnable); the file is re-read when it changes.
   */
  aclFile?: string;
  /** LITE_PULL_MESSAGE is served. Default true (RocketMQ: litePullMessageEnable). */
  litePullMessageEnable?: boolean;
  /** Period of the safety-net check of held pulls, ms. Default 5000 (RocketMQ: PullRequestHoldService). */
  pullHoldCheckIntervalMs?: number;
  /** How long shutdown waits for calls in flight before closing their connections, ms. Default 5000. */
  shutdownTimeoutMs?: number;
  /** (Consumer groups) A client silent this long is evicted from its groups, ms. Default 120000 (RocketMQ: channelExpiredTimeout). */
  channelExpiredTimeoutMs?: number;
  /**
   * (Orderly consumption) A queue lock not renewed for this long is free for another client, ms.
   * Default 60000 (RocketMQ: rocketmq.broker.rebalance.lockMaxLiveTime).
   */
  rebalanceLockMaxLiveTimeMs?: number;
  /**
   * (Consumer groups) Once a member's last WATCH_CONSUMER_IDS call ends (answered or its connection closed), a new
   * watch or a heartbeat must come within this, else the member is evicted, ms. Default 3000 (docs/protocol.md).
   */
  watchRenewGraceMs?: number;
  /** (Consumer groups) Period of the liveness scan, ms. Default 1000. */
  clientScanIntervalMs?: number;
  /**
   * (Consumer groups) A `%DLQ%<group>` topic created by send-back is readable (perm 6). Default false: created
   * write-only (perm 2), as RocketMQ up to 4.8 did, so dead letters are consumed only once an admin allows it.
   */
  dlqReadable?: boolean;
  /**
   * Topics are no longer created on first send once the broker knows this many (system, retry and DLQ
   * topics included); such a send is answered TOPIC_NOT_EXIST with a remark naming this option. Topics
   * created with UPDATE_AND_CREATE_TOPIC are not limited. Default 20000 (ours: RocketMQ has no bound, and a
   * flood of new names then exhausts memory).
   */
  autoCreateTopicLimit?: number;
  /**
   * Subscription groups are no longer created on first use once the broker knows this many; a pull or
   * send-back of a new group is then answered SUBSCRIPTION_GROUP_NOT_EXIST with a remark naming this
   * option. Groups created with UPDATE_AND_CREATE_SUBSCRIPTIONGROUP are not limited. Default 10000 (ours).
   */
  autoCreateSubscriptionGroupLimit?: number;
  /** Open client connections at most; connections past it are closed at once. Default 4096. */
  maxConnections?: number;
  /**
   * Requests one connection may have in flight (received, not yet answered; HTTP/1.1 pipelining); more
   * are answered SYSTEM_BUSY at once, without being handled. Default 16 (the SDK's HTTP
   * transport sends one request at a time per connection).
   */
  maxInFlightRequestsPerConnection?: number;
  /**
   * Answer bytes one connection may have waiting for the client to read them; while over it, further
   * requests on that connection are answered SYSTEM_BUSY at once. Default 4 MiB.
   */
  maxBufferedResponseBytesPerConnection?: number;
  /**
   * Port of the RocketMQ remoting listener (TCP, RocketMQ's framing), on the same host as the HTTP port;
   * 0 picks a free one. Off unless set. RocketMQ's own clients, `mqadmin` and other RocketMQ clients
   * use it as their name server and broker (`namesrvAddr=127.0.0.1:<port>`).
   */
  remotingPort?: number;
  /**
   * Port of the Prometheus metrics endpoint (`GET /metrics`, RocketMQ 5's metric names); 0 picks a free
   * one. Off unless set.
   */
  metricsPort?: number;
  /** Address the metrics endpoint binds. Default 127.0.0.1 (this host only). */
  metricsHost?: string;
  /** Most remoting connections open at once; one more is closed at once. Default 10000. */
  remotingMaxConnections?: number;
  /** Largest remoting frame accepted, bytes; a larger one closes its connection. Default 16 MiB (RocketMQ's frameMaxLength). */
  remotingMaxFrameBytes?: number;
  /**
   * A remoting connection with no traffic and no call in flight this long is closed (checked once a second, or
   * every quarter of the timeout when that is shorter), ms. Default 120000 (RocketMQ).
   */
  remotingIdleTimeoutMs?: number;
  /**
   * Remoting connections from one IP address at most; past it the oldest connection of that address that
   * never sent a complete request is closed to make room, else the new one is. Default 1000 (ours).
   */
  remotingMaxConnectionsPerAddress?: number;
  /**
   * A remoting connection that has not sent one complete request this long after opening is closed, ms; at
   * `remotingMaxConnections` such connections are also the first closed to make room. Default 10000 (ours).
   */
  remotingFirstRequestTimeoutMs?: number;
  /**
   * A remoting frame in progress must arrive at least this fast, bytes per second (judged after two
   * seconds), else its connection is closed: a client trickling bytes never holds a connection. Default 1024.
   */
  remotingMinFrameBytesPerSecond?: number;
  /**
   * Bytes one remoting connection may hold: frames arriving (reserved in full when their length arrives),
   * requests not yet answered and answers not yet sent. Past it the connection is not read, an answer with
   * a body is replaced by SYSTEM_BUSY, and a frame larger than it is refused (closing the connection).
   * Keep it above the store's maxMessageSize. Default 8 MiB (ours).
   */
  remotingMaxBufferedBytesPerConnection?: number;
  /**
   * Bytes both listeners may hold for all their clients together (frames arriving, requests not yet
   * answered, answers not yet sent); while it is spent no connection is read and new requests or large
   * answers are refused with SYSTEM_BUSY. Default 256 MiB (ours).
   */
  maxBufferedBytes?: number;
  /** A remoting connection not read because of its byte budget that drains nothing for this long is closed, ms. Default 30000. */
  remotingDrainTimeoutMs?: number;
  /**
   * (Consumer groups) Members one group may have; a heartbeat that would add one more is answered
   * SYSTEM_ERROR with a remark naming this option. Default 1000 (ours: RocketMQ has no bound).
   */
  maxConsumersPerGroup?: number;
  /**
   * Client ids that may heartbeat on one remoting connection; one more is answered SYSTEM_ERROR with a
   * remark naming this option. Default 64 (a RocketMQ client process uses one per instance name).
   */
  remotingMaxClientIdsPerConnection?: number;
  /**
   * NOTIFY_CONSUMER_IDS_CHANGED goes to each member of a group at most once per this window, ms: the first
   * change is told at once, the changes during the window in one notice at its end. Default 200.
   */
  notifyConsumerIdsChangedWindowMs?: number;
  /** How often unacknowledged POP messages past their invisible time are looked for and revived, ms (default 1000). */
  popReviveIntervalMs?: number;
  /**
   * Once the process is quiet after a burst, one garbage collection is started so that the Buffers the
   * burst dropped (socket reads, frames, answers) are given back rather than held until traffic returns.
   * Checked every 5 s: the heap and external memory, or the bytes the listeners gave back, grown by 16 MiB
   * (and by a quarter of the footprint) since the last such collection, the event loop under 10 % busy; at
   * most one such collection per 30 s. And while large frames are read, a young-generation collection
   * whenever V8's external memory has grown by 4 MiB over the reads (looked at every 2 MiB read), so that
   * the dead socket reads do not pile up. One watcher serves every broker of a process. Default true.
   */
  idleMemoryReclaim?: boolean;
  /** Options of the message store (segment sizes, flush mode, retention ...). */
  store?: BrokerStoreOptions;
  clock?: Clock;
  logger?: Logger;
}

export interface ResolvedBrokerOptions extends Required<
  Omit<
    BrokerOptions,
    | 'accessToken'
    | 'aclFile'
    | 'advertisedAddress'
    | 'store'
    | 'clock'
    | 'logger'
    | 'remotingPort'
    | 'tls'
    | 'metricsPort'
  >
> {
  tls: BrokerTlsOptions | undefined;
  remotingPort: number | undefined;
  metricsPort: number | undefined;
  accessToken: string | undefined;
  aclFile: string | undefined;
  advertisedAddress: string | undefined;
  store: BrokerStoreOptions;
  clock: Clock;
  logger: Logger;
}

const MiB = 1024 * 1024;

export const BROKER_DEFAULTS = Object.freeze({
  host: '127.0.0.1',
  port: 8081,
  brokerName: 'broker-a',
  clusterName: 'DefaultCluster',
  autoCreateTopicEnable: true,
  traceTopicEnable: false,
  msgTraceTopicName: 'RMQ_SYS_TRACE_TOPIC',
  defaultTopicQueueNums: 8,
  autoCreateSubscriptionGroup: true,
  longPollingEnable: true,
  shortPollingTimeMills: 1000,
  enablePropertyFilter: true,
  filterSupportRetry: false,
  brokerPermission: 6,
  flushConsumerOffsetIntervalMs: 5000,
  transactionTimeOut: 6000,
  transactionCheckInterval: 60_000,
  transactionCheckMax: 15,
  rejectTransactionMessage: false,
  maxRequestBodyBytes: 8 * MiB,
  litePullMessageEnable: true,
  pullHoldCheckIntervalMs: 5000,
  shutdownTimeoutMs: 5000,
  channelExpiredTimeoutMs: 120_000,
  rebalanceLockMaxLiveTimeMs: 60_000,
  watchRenewGraceMs: 3000,
  clientScanIntervalMs: 1000,
  dlqReadable: false,
  autoCreateTopicLimit: 20_000,
  autoCreateSubscriptionGroupLimit: 10_000,
  maxConnections: 4096,
  maxInFlightRequestsPerConnection: 16,
  maxBufferedResponseBytesPerConnection: 4 * MiB,
  remotingMaxConnections: 10_000,
  remotingMaxFrameBytes: 16 * MiB,
  remotingIdleTimeoutMs: 120_000,
  remotingMaxConnectionsPerAddress: 1000,
  remotingFirstRequestTimeoutMs: 10_000,
  remotingMinFrameBytesPerSecond: 1024,
  remotingMaxBufferedBytesPerConnection: 8 * MiB,
  maxBufferedBytes: 256 * MiB,
  remotingDrainTimeoutMs: 30_000,
  maxConsumersPerGroup: 1000,
  remotingMaxClientIdsPerConnection: 64,
  notifyConsumerIdsChangedWindowMs: 200,
  popReviveIntervalMs: 1000,
  idleMemoryReclaim: true,
  metricsHost: '127.0.0.1',
});

const positiveInt = z.number().int().positive();
const nameSchema = z
  .string()
  .min(1)
  .max(127)
  .regex(/^[%|a-zA-Z0-9_-]+$/, 'may contain only %|a-zA-Z0-9_-');

const schema = z.object({
  storePath: z.string().min(1),
  host: z.string().min(1),
  port: z.number().int().min(0).max(65535),
  advertisedAddress: z
    .string()
    .regex(/^https?:\/\/[^/\s]+$/, 'must be an http(s) base URL such as http://10.0.0.5:8081')
    .optional(),
  brokerName: nameSchema,
  clusterName: nameSchema,
  autoCreateTopicEnable: z.boolean(),
  traceTopicEnable: z.boolean(),
  msgTraceTopicName: nameSchema,
  defaultTopicQueueNums: positiveInt.max(1024),
  autoCreateSubscriptionGroup: z.boolean(),
  longPollingEnable: z.boolean(),
  shortPollingTimeMills: positiveInt,
  enablePropertyFilter: z.boolean(),
  filterSupportRetry: z.boolean(),
  brokerPermission: z.number().int().min(0).max(7),
  flushConsumerOffsetIntervalMs: positiveInt,
  transactionTimeOut: z.number().int().nonnegative(),
  transactionCheckInterval: positiveInt,
  transactionCheckMax: z.number().int().nonnegative(),
  rejectTransactionMessage: z.boolean(),
  maxRequestBodyBytes: positiveInt,
  accessToken: z.string().min(1).optional(),
  tls: z
    .strictObject({ cert: z.string().min(1), key: z.string().min(1), mode: z.enum(TLS_MODES).optional() })
    .optional(),
  aclFile: z.string().min(1).optional(),
  litePullMessageEnable: z.boolean(),
  pullHoldCheckIntervalMs: positiveInt,
  shutdownTimeoutMs: z.number().int().nonnegative(),
  channelExpiredTimeoutMs: positiveInt,
  rebalanceLockMaxLiveTimeMs: positiveInt,
  watchRenewGraceMs: positiveInt,
  clientScanIntervalMs: positiveInt,
  dlqReadable: z.boolean(),
  autoCreateTopicLimit: positiveInt,
  autoCreateSubscriptionGroupLimit: positiveInt,
  maxConnections: positiveInt,
  maxInFlightRequestsPerConnection: positiveInt,
  maxBufferedResponseBytesPerConnection: positiveInt,
  remotingPort: z.number().int().min(0).max(65535).optional(),
  metricsPort: z.number().int().min(0).max(65535).optional(),
  metricsHost: z.string().min(1),
  remotingMaxConnections: positiveInt,
  remotingMaxFrameBytes: positiveInt.min(1024),
  remotingIdleTimeoutMs: positiveInt,
  remotingMaxConnectionsPerAddress: positiveInt,
  remotingFirstRequestTimeoutMs: positiveInt,
  remotingMinFrameBytesPerSecond: z.number().int().nonnegative(),
  remotingMaxBufferedBytesPerConnection: positiveInt.min(64 * 1024),
  maxBufferedBytes: positiveInt.min(64 * 1024),
  remotingDrainTimeoutMs: positiveInt,
  maxConsumersPerGroup: positiveInt,
  remotingMaxClientIdsPerConnection: positiveInt,
  notifyConsumerIdsChangedWindowMs: z.number().int().nonnegative(),
  popReviveIntervalMs: positiveInt,
  idleMemoryReclaim: z.boolean(),
  store: z.record(z.string(), z.unknown()).optional(),
});

/** Fills defaults and validates; throws InvalidArgumentError naming the first bad option. */
export function resolveBrokerOptions(options: BrokerOptions): ResolvedBrokerOptions {
  if (options === null || typeof options !== 'object') {
    throw new InvalidArgumentError('options', 'Broker options must be an object');
  }
  const { clock, logger, ...rest } = options;
  const defined = Object.fromEntries(Object.entries(rest).filter(([, v]) => v !== undefined));
  const v = parseStrictOptions(schema, { ...BROKER_DEFAULTS, ...defined }, 'Broker');
  return Object.freeze({
    ...v,
    remotingPort: v.remotingPort,
    metricsPort: v.metricsPort,
    accessToken: v.accessToken,
    tls: v.tls,
    aclFile: v.aclFile,
    advertisedAddress: v.advertisedAddress,
    store: (options.store ?? {}) as BrokerStoreOptions,
    clock: clock ?? systemClock,
    logger: logger ?? defaultLogger(),
  });
}
