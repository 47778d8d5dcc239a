/**
 * The reference broker (RocketMQ's BrokerController): the store, the managers, long polling, the processor
 * table and the HTTP server, started by `Broker.start(options)` and stopped by an idempotent `shutdown()`.
 */
import path from 'node:path';
import { StateError } from '../common/errors.js';
import { ResponseCode, type RemotingResponse } from '../protocol/index.js';
import { MessageStore, parseDelayLevels, DEFAULT_MESSAGE_DELAY_LEVEL } from '../store/index.js';
import { RebalanceLockManager } from './rebalance-lock-manager.js';
import type { BrokerContext, BrokerRequest, ConnectionInfo, Processor } from './broker-context.js';
import { resolveBrokerOptions, type BrokerOptions, type ResolvedBrokerOptions } from './broker-options.js';
import { ConsumerFilterManager } from './consumer-filter-manager.js';
import { ConsumerManager } from './consumer-manager.js';
import { ConsumerOffsetManager } from './consumer-offset-manager.js';
import { handleRequest } from './dispatch.js';
import { ConnectionLimits, type ConnectionStats } from './connection-limits.js';
import type { HttpServer } from './http-server.js';
import { openListeners, type ListenerTarget } from './broker-listeners.js';
import { createProcessorTable } from './processor-table.js';
import { PullRequestHoldService } from './pull-request-hold-service.js';
import type { RemotingServer } from './remoting-server.js';
import type { RemotingListenerStats } from './remoting/remoting-server-options.js';
import { PopService, attachPopService } from './pop/pop-service.js';
import { RemotingDispatcher } from './remoting/remoting-dispatcher.js';
import { AclGuard } from './acl/acl-guard.js';
import { BrokerStatsManager } from './broker-stats-manager.js';
import { ClientChannelTable } from './client-channel-table.js';
import { BrokerConfigTable } from './broker-config-table.js';
import { NameServerState } from './name-server-state.js';
import { BrokerRuntimeInfo } from './runtime-info.js';
import { ScheduleMessageService } from './schedule-message-service.js';
import { SubscriptionGroupManager } from './subscription-group-manager.js';
import { TopicConfigManager } from './topic-config-manager.js';
import { TransactionalMessageService } from './transaction/transactional-message-service.js';
import { renderBrokerMetrics } from './metrics/broker-metrics.js';
import { startMetricsServer, type MetricsServer } from './metrics/metrics-server.js';
import { reportLostConfig } from './lost-config.js';
import { holdIdleReclaim } from './idle-memory-reclaim.js';

/**
 * The bundled broker, in your process: `await Broker.start({ storePath, port })` resolves once it
 * listens (`broker.address` is its HTTP URL; `remotingPort` adds RocketMQ's TCP protocol, NameServer
 * queries included), and `shutdown()` flushes the store and closes every connection.
 */
export class Broker {
  /** The HTTP base URL clients use, e.g. `http://127.0.0.1:8081`. */
  readonly address: string;
  /** The port the server is bound to. */
  readonly port: number;
  /** `ip:port` of the RocketMQ remoting listener (clients' `namesrvAddr`), when `remotingPort` was given. */
  readonly remotingAddress: string | undefined;
  /** The port the remoting listener is bound to, when it runs. */
  readonly remotingPort: number | undefined;
  readonly options: ResolvedBrokerOptions;
  /**
   * The parts processors see (exposed for tests and tools; not a stable API).
   * @internal
   */
  readonly context: BrokerContext;
  /** @internal */
  readonly store: MessageStore;
  /** @internal */
  readonly topicConfigManager: TopicConfigManager;
  /** @internal */
  readonly subscriptionGroupManager: SubscriptionGroupManager;
  /** @internal */
  readonly consumerOffsetManager: ConsumerOffsetManager;
  /** @internal */
  readonly consumerManager: ConsumerManager;
  /** @internal */
  readonly consumerFilterManager: ConsumerFilterManager;
  /** @internal */
  readonly scheduleMessageService: ScheduleMessageService;
  /** @internal */
  readonly pullRequestHoldService: PullRequestHoldService;
  /** @internal */
  readonly popService: PopService;
  /** @internal */
  readonly transactionalMessageService: TransactionalMessageService;
  private readonly http: HttpServer;
  private readonly limits: ConnectionLimits;
  private readonly remoting: RemotingServer | undefined;
  private readonly remotingDispatcher: RemotingDispatcher | undefined;
  private readonly acl: AclGuard | undefined;
  private readonly unsubscribeConsumerChange: () => void;
  /** RocketMQ's broker runtime figures (GET_BROKER_RUNTIME_INFO). */
  private readonly runtime: BrokerRuntimeInfo;
  private readonly table: ReadonlyMap<number, Processor>;
  private readonly unsubscribeArrival: () => void;
  private shutdownPromise: Promise<void> | undefined;
  /** The Prometheus endpoint, when `metricsPort` was given. */
  private metrics: MetricsServer | undefined;
  /** Lets go of the process's idle-memory watcher (see idle-memory-reclaim.ts). */
  private releaseIdleReclaim: (() => void) | undefined;
  /**
   * Put and get counters (RocketMQ: BrokerStatsManager).
   * @internal
   */
  readonly brokerStats: BrokerStatsManager;

  private constructor(parts: {
    options: ResolvedBrokerOptions;
    http: HttpServer;
    limits: ConnectionLimits;
    port: number;
    address: string;
    store: MessageStore;
    remoting: RemotingServer | undefined;
    remotingAddress: string | undefined;
    remotingPort: number | undefined;
    acl: AclGuard | undefined;
  }) {
    const o = parts.options;
    this.options = o;
    this.acl = parts.acl;
    this.http = parts.http;
    this.limits = parts.limits;
    this.remoting = parts.remoting;
    this.remotingAddress = parts.remotingAddress;
    this.remotingPort = parts.remotingPort;
    this.port = parts.port;
    this.address = parts.address;
    this.store = parts.store;
    const logger = o.logger;
    const clock = o.clock;
    const store = parts.store;
    const delayLevels = parseDelayLevels(o.store.messageDelayLevel ?? DEFAULT_MESSAGE_DELAY_LEVEL);

    this.topicConfigManager = new TopicConfigManager({
      storePath: o.storePath,
      brokerName: o.brokerName,
      clusterName: o.clusterName,
      autoCreateTopicEnable: o.autoCreateTopicEnable,
      traceTopicEnable: o.traceTopicEnable,
      msgTraceTopicName: o.msgTraceTopicName,
      defaultTopicQueueNums: o.defaultTopicQueueNums,
      autoCreateTopicLimit: o.autoCreateTopicLimit,
      scheduleTopicQueueNums: delayLevels.length,
      logger,
    });
    this.subscriptionGroupManager = new SubscriptionGroupManager({
      storePath: o.storePath,
      autoCreateSubscriptionGroup: o.autoCreateSubscriptionGroup,
      autoCreateSubscriptionGroupLimit: o.autoCreateSubscriptionGroupLimit,
      logger,
    });
    this.consumerOffsetManager = new ConsumerOffsetManager({
      storePath: o.storePath,
      flushConsumerOffsetIntervalMs: o.flushConsumerOffsetIntervalMs,
      clock,
      logger,
    });
    this.consumerFilterManager = new ConsumerFilterManager({ clock, logger });
    this.consumerManager = new ConsumerManager({
      clock,
      logger,
      consumerFilterManager: this.consumerFilterManager,
      channelExpiredTimeoutMs: o.channelExpiredTimeoutMs,
      watchRenewGraceMs: o.watchRenewGraceMs,
      scanIntervalMs: o.clientScanIntervalMs,
    });
    this.scheduleMessageService = new ScheduleMessageService({
      store,
      progressFile: path.join(o.storePath, 'config', 'delayOffset.json'),
      messageDelayLevel: o.store.messageDelayLevel,
      clock,
      logger,
    });
    this.pullRequestHoldService = new PullRequestHoldService({
      maxOffsetInQueue: (topic, queueId) => store.getMaxOffsetInQueue(topic, queueId),
      longPollingEnable: o.longPollingEnable,
      shortPollingTimeMills: o.shortPollingTimeMills,
      checkIntervalMs: o.pullHoldCheckIntervalMs,
      clock,
      logger,
    });
    const hold = this.pullRequestHoldService;
    this.unsubscribeArrival = store.onMessageArriving((a) =>
      hold.onMessageArriving(a.topic, a.queueId, a.maxOffset, a.tagsCode, a.properties),
    );
    this.popService = new PopService({
      storePath: o.storePath,
      store,
      clock,
      logger,
      reviveIntervalMs: o.popReviveIntervalMs,
      context: () => this.context,
    });
    const schedule = this.scheduleMessageService;
    const clientChannels = new ClientChannelTable();
    this.brokerStats = new BrokerStatsManager(clock, o.clusterName);
    this.runtime = new BrokerRuntimeInfo({
      clock,
      storePath: o.storePath,
      store,
      stats: this.brokerStats,
      schedule: this.scheduleMessageService,
      versionEntries: () => RemotingDispatcher.versionEntries(),
    });
    this.transactionalMessageService = new TransactionalMessageService({
      store,
      topicConfigManager: this.topicConfigManager,
      consumerOffsetManager: this.consumerOffsetManager,
      transformDelayedMessage: (msg) => schedule.transformDelayedMessage(msg),
      sendCheck: (group, header, body) =>
        this.remotingDispatcher?.checkProducerTransactionState(group, header, body) ?? false,
      transactionTimeOut: o.transactionTimeOut,
      transactionCheckInterval: o.transactionCheckInterval,
      transactionCheckMax: o.transactionCheckMax,
      clock,
      logger,
    });
    this.context = {
      brokerName: o.brokerName,
      clusterName: o.clusterName,
      brokerAddress: parts.address,
      brokerIP: new URL(parts.address).hostname.replace(/^\[|\]$/g, ''),
      options: o as unknown as Readonly<Record<string, unknown>>,
      brokerConfig: o,
      store,
      topicConfigManager: this.topicConfigManager,
      subscriptionGroupManager: this.subscriptionGroupManager,
      consumerOffsetManager: this.consumerOffsetManager,
      consumerManager: this.consumerManager,
      consumerFilterManager: this.consumerFilterManager,
      scheduleMessageService: schedule,
      pullRequestHoldService: hold,
      rebalanceLockManager: new RebalanceLockManager(clock, logger, o.rebalanceLockMaxLiveTimeMs),
      clock,
      logger,
      putMessage: (msg) => store.putMessage(schedule.transformDelayedMessage(msg)),
      lookMessageByOffset: (offset) => store.lookMessageByOffset(offset),
      ops: {
        stats: this.brokerStats,
        clients: clientChannels,
        config: new BrokerConfigTable(o, parts.remotingPort ?? parts.port, clock.now()),
        nameServer: new NameServerState(o.storePath, parts.remotingPort ?? parts.port, logger),
        acl: parts.acl,
        runtimeInfo: () => this.runtime.read(),
        callClient: (clientId, request, timeoutMs) => this.remotingDispatcher?.callClient(clientId, request, timeoutMs),
        sendOnewayToConsumer: (id, group, r) => this.remotingDispatcher?.sendOnewayToConsumer(id, group, r) ?? false,
      },
      transactionalMessageService: this.transactionalMessageService,
    };
    attachPopService(this.context, this.popService);
    this.table = createProcessorTable();
    const remotingAddress = parts.remotingAddress;
    if (remotingAddress !== undefined) {
      const dispatcher = new RemotingDispatcher(
        {
          clusterName: o.clusterName,
          brokerName: o.brokerName,
          remotingAddress,
          consumerManager: this.consumerManager,
          handle: (request, connection) => this.handle(request, connection),
          runtimeInfo: () => this.runtime.read(),
          topicConsumedBy: (topic) => {
            const groups = new Set(this.consumerOffsetManager.whichGroupByTopic(topic));
            for (const g of this.consumerManager.getGroups()) {
              if (this.consumerManager.getConsumerGroupInfo(g)?.findSubscriptionData(topic)) groups.add(g);
            }
            return [...groups];
          },
          clientChannels,
          maxClientIdsPerConnection: o.remotingMaxClientIdsPerConnection,
          notifyWindowMs: o.notifyConsumerIdsChangedWindowMs,
          acl: parts.acl,
          notifyEnabled: (group) =>
            this.subscriptionGroupManager.findSubscriptionGroupConfig(group)?.notifyConsumerIdsChangedEnable ?? true,
        },
        logger,
      );
      this.remotingDispatcher = dispatcher;
      this.unsubscribeConsumerChange = this.consumerManager.onChange((group) =>
        dispatcher.notifyConsumerIdsChanged(group),
      );
    } else {
      this.unsubscribeConsumerChange = () => undefined;
    }
    reportLostConfig(this.store, o, {
      'topics.json': this.topicConfigManager.configLoadedFrom,
      'consumerOffset.json': this.consumerOffsetManager.configLoadedFrom,
      'subscriptionGroup.json': this.subscriptionGroupManager.configLoadedFrom,
    });
  }

  /**
   * Open remoting connections (0 when the listener is off).
   * @internal
   */
  get remotingConnectionCount(): number {
    return this.remoting?.connectionCount ?? 0;
  }

  /** Binds the HTTP server, opens the store, loads the config files and starts the services. */
  static async start(options: BrokerOptions): Promise<Broker> {
    const o = resolveBrokerOptions(options);
    let broker: Broker | undefined;
    // The listeners answer "starting" until the broker exists, then hand it what they read.
    let target: ListenerTarget | undefined;
    // A bad ACL file stops the start before anything listens.
    const acl = o.aclFile === undefined ? undefined : AclGuard.open(o.aclFile, o.logger);
    let listeners: Awaited<ReturnType<typeof openListeners>>;
    try {
      listeners = await openListeners(o, () => target, acl);
    } catch (e) {
      acl?.close();
      throw e;
    }
    const { http, limits, port, address, remoting, remotingPort, remotingAddress, storeIp, budget } = listeners;
    let store: MessageStore;
    try {
      store = await MessageStore.open({
        ...o.store,
        storePath: o.storePath,
        // Message ids name the store host: the remoting port when it runs, so RocketMQ's tools that look a
        // message up by its id (mqadmin queryMsgById) reach this broker.
        storeHost: { ip: storeIp, port: remotingPort ?? port },
        clock: o.clock,
        logger: o.logger,
      });
    } catch (e) {
      acl?.close();
      await http.close(0);
      await remoting?.close(0);
      throw e;
    }
    try {
      broker = new Broker({
        options: o,
        http,
        limits,
        port,
        address,
        store,
        remoting,
        remotingAddress,
        remotingPort,
        acl,
      });
      const built = broker;
      target = {
        handle: (request, connection) => built.handle(request, connection),
        dispatcher: built.remotingDispatcher,
        brokerStats: built.brokerStats,
      };
      broker.consumerOffsetManager.correctOffsetsPastEnd((t, q) => store.getMaxOffsetInQueue(t, q));
      broker.consumerOffsetManager.start();
      broker.pullRequestHoldService.start();
      broker.consumerManager.start();
      await broker.scheduleMessageService.start();
      broker.popService.start();
      await broker.transactionalMessageService.start();
      broker.metrics = await startMetricsServer(o, built);
      if (o.idleMemoryReclaim) broker.releaseIdleReclaim = holdIdleReclaim(() => budget.releasedTotal);
    } catch (e) {
      if (broker) await broker.shutdown().catch(() => undefined);
      else {
        acl?.close();
        await http.close(0);
        await remoting?.close(0);
        await store.shutdown();
      }
      throw e;
    }
    o.logger.info({ address, remotingAddress, storePath: o.storePath }, 'broker started');
    return broker;
  }

  /** `http://host:port` of the metrics endpoint (`/metrics` under it), when it runs. */
  get metricsAddress(): string | undefined {
    return this.metrics?.address;
  }

  /** The Prometheus text of the broker's metrics now (what `GET /metrics` answers). */
  metricsText(): string {
    const { clusterName, brokerName } = this.options;
    const connections = (): { http: number; remoting: number } => ({
      http: this.limits.stats().connections,
      remoting: this.remotingConnectionCount,
    });
    return renderBrokerMetrics({
      ...this,
      clusterName,
      brokerName,
      clientChannels: this.context.ops.clients,
      connections,
    });
  }

  /**
   * Answers one validated command (what the HTTP server calls; tests may call it directly).
   * @internal
   */
  handle(request: BrokerRequest, connection: ConnectionInfo): Promise<RemotingResponse> {
    if (this.shutdownPromise) {
      return Promise.resolve({ code: ResponseCode.SYSTEM_BUSY, header: {}, remark: 'the broker is shutting down' });
    }
    return handleRequest(this.context, this.table, request, connection, this.options.logger);
  }

  /**
   * Open connections, requests in flight and answer bytes buffered on the HTTP server, and what its limits
   * refused so far (for tests and tools; not a stable API).
   * @internal
   */
  connectionStats(): ConnectionStats {
    return this.limits.stats();
  }

  /**
   * Bytes the remoting listener holds for its clients and what its bounds refused or closed so far, or
   * undefined when it does not run (for tests and tools; not a stable API).
   * @internal
   */
  remotingStats():
    (RemotingListenerStats & { noticesSent: number; noticesSkipped: number; noticesPending: number }) | undefined {
    const stats = this.remoting?.stats();
    const d = this.remotingDispatcher;
    return stats && d
      ? { ...stats, noticesSent: d.noticesSent, noticesSkipped: d.noticesSkipped, noticesPending: d.noticesPending }
      : undefined;
  }

  /**
   * Stops accepting calls, answers held pulls and watches, waits (bounded) for calls in flight, closes
   * every connection, persists offsets and configs, and closes the store (releasing its lock). Every
   * step runs even when one fails. Idempotent: returns the same promise.
   */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    const logger = this.options.logger;
    const errors: unknown[] = [];
    const step = async (name: string, fn: () => unknown): Promise<void> => {
      try {
        await fn();
      } catch (e) {
        errors.push(e);
        logger.error({ err: e, step: name }, 'broker shutdown step failed');
      }
    };
    this.releaseIdleReclaim?.();
    await step('close metrics', () => this.metrics?.close());
    await step('stop accepting', () => this.http.stopAccepting());
    await step('stop accepting remoting', () => this.remoting?.stopAccepting());
    await step('answer held pulls', () => this.pullRequestHoldService.shutdown());
    await step('answer held pops', () => this.popService.stopPolling());
    await step('consumer manager', () => this.consumerManager.shutdown());
    await step('close HTTP', () => this.http.close(this.options.shutdownTimeoutMs));
    await step('calls to clients and notice timers', () => this.remotingDispatcher?.close());
    await step('close remoting', () => this.remoting?.close(this.options.shutdownTimeoutMs));
    await step('ACL file watch', () => this.acl?.close());
    await step('pop service', () => this.popService.shutdown());
    await step('consumer change listener', () => this.unsubscribeConsumerChange());
    await step('schedule service', () => this.scheduleMessageService.shutdown());
    await step('transactions', () => this.transactionalMessageService.shutdown());
    await step('consumer offsets', () => this.consumerOffsetManager.shutdown());
    await step('topics', () => this.topicConfigManager.persist());
    await step('subscription groups', () => this.subscriptionGroupManager.persist());
    await step('arrival listener', () => this.unsubscribeArrival());
    await step('store', () => this.store.shutdown());
    logger.info({ address: this.address, errors: errors.length }, 'broker stopped');
    if (errors.length > 0) throw new StateError(`broker shutdown finished with ${errors.length} error(s)`);
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.shutdown();
  }
}
