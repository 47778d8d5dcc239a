/**
 * The reference broker (RocketMQ's BrokerController): the store, the managers, long polling,
 * the processor table and the HTTP server, started by `Broker.start(options)` and stopped by an
 * idempotent `shutdown()`.
 */
import path from 'node:path';
import { StateError } from '../common/errors.js';
import { ResponseCode, type RemotingResponse } from '../protocol/index.js';
import { MessageStore, parseDelayLevels, DEFAULT_MESSAGE_DELAY_LEVEL } from '../store/index.js';
import type { BrokerContext, BrokerRequest, ConnectionInfo, Processor } from './broker-context.js';
import { resolveBrokerOptions, type BrokerOptions, type ResolvedBrokerOptions } from './broker-options.js';
import { ConsumerFilterManager } from './consumer-filter-manager.js';
import { ConsumerManager } from './consumer-manager.js';
import { ConsumerOffsetManager } from './consumer-offset-manager.js';
import { handleRequest } from './dispatch.js';
import { HttpServer } from './http-server.js';
import { createProcessorTable } from './processor-table.js';
import { PullRequestHoldService } from './pull-request-hold-service.js';
import { ScheduleMessageService } from './schedule-message-service.js';
import { SubscriptionGroupManager } from './subscription-group-manager.js';
import { TopicConfigManager } from './topic-config-manager.js';

const UNSPECIFIED = new Set(['0.0.0.0', '::', '[::]']);

function advertisedHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

const urlHost = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

export class Broker {
  /** The HTTP base URL clients use, e.g. `http://127.0.0.1:8081`. */
  readonly address: string;
  /** The port the server is bound to. */
  readonly port: number;
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
  private readonly http: HttpServer;
  private readonly table: ReadonlyMap<number, Processor>;
  private readonly unsubscribeArrival: () => void;
  private shutdownPromise: Promise<void> | undefined;

  private constructor(parts: {
    options: ResolvedBrokerOptions;
    http: HttpServer;
    port: number;
    address: string;
    store: MessageStore;
  }) {
    const o = parts.options;
    this.options = o;
    this.http = parts.http;
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
      defaultTopicQueueNums: o.defaultTopicQueueNums,
      scheduleTopicQueueNums: delayLevels.length,
      logger,
    });
    this.subscriptionGroupManager = new SubscriptionGroupManager({
      storePath: o.storePath,
      autoCreateSubscriptionGroup: o.autoCreateSubscriptionGroup,
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
    const schedule = this.scheduleMessageService;
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
      clock,
      logger,
      putMessage: (msg) => store.putMessage(schedule.transformDelayedMessage(msg)),
      lookMessageByOffset: (offset) => store.lookMessageByOffset(offset),
    };
    this.table = createProcessorTable();
  }

  /** Binds the HTTP server, opens the store, loads the config files and starts the services. */
  static async start(options: BrokerOptions): Promise<Broker> {
    const o = resolveBrokerOptions(options);
    let broker: Broker | undefined;
    const http = new HttpServer({
      host: o.host,
      port: o.port,
      maxRequestBodyBytes: o.maxRequestBodyBytes,
      accessToken: o.accessToken,
      logger: o.logger,
      handle: (request, connection) =>
        broker
          ? broker.handle(request, connection)
          : Promise.resolve({ code: ResponseCode.SYSTEM_BUSY, header: {}, remark: 'the broker is starting' }),
    });
    const port = await http.listen();
    const host = advertisedHost(o.host);
    const address = o.advertisedAddress ?? `http://${urlHost(host)}:${port}`;
    let store: MessageStore;
    try {
      store = await MessageStore.open({
        ...o.store,
        storePath: o.storePath,
        storeHost: { ip: UNSPECIFIED.has(o.host) ? '127.0.0.1' : host, port },
        clock: o.clock,
        logger: o.logger,
      });
    } catch (e) {
      await http.close(0);
      throw e;
    }
    try {
      broker = new Broker({ options: o, http, port, address, store });
      broker.consumerOffsetManager.start();
      broker.pullRequestHoldService.start();
      broker.consumerManager.start();
      await broker.scheduleMessageService.start();
    } catch (e) {
      if (broker) await broker.shutdown().catch(() => undefined);
      else {
        await http.close(0);
        await store.shutdown();
      }
      throw e;
    }
    o.logger.info({ address, storePath: o.storePath }, 'broker started');
    return broker;
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
    await step('stop accepting', () => this.http.stopAccepting());
    await step('answer held pulls', () => this.pullRequestHoldService.shutdown());
    await step('consumer manager', () => this.consumerManager.shutdown());
    await step('close HTTP', () => this.http.close(this.options.shutdownTimeoutMs));
    await step('schedule service', () => this.scheduleMessageService.shutdown());
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
