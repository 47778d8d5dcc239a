/**
 * MQClientInstance (RocketMQ's MQClientInstance): one per client id in a process, shared
 * by the producers and consumers that use that id. It owns the transport, the routes and broker
 * addresses (topic-route-table.ts), the heartbeat (client-heartbeat.ts), the periodic tasks
 * (scheduled-tasks.ts), offset persistence, the RebalanceService and the membership watcher, and every
 * timer and loop they run: `shutdown()` (run by the last `release()`) stops them all. The producers and
 * consumers use this class only; it hands each call to the part that does it.
 *
 * Scheduled tasks (RocketMQ's startScheduledTask), periods from the options:
 *
 * | task | first run | period |
 * |---|---|---|
 * | route refresh (GET_ROUTEINFO_BY_TOPIC, to the broker or the NameServers) | 10 ms | pollNameServerIntervalMs (30 s) |
 * | heartbeat to every broker | 1 s | heartbeatBrokerIntervalMs (30 s) |
 * | persistAllConsumerOffset | persistConsumerOffsetIntervalMs | persistConsumerOffsetIntervalMs (5 s) |
 * | RebalanceService | rebalanceIntervalMs, or on wake-up | rebalanceIntervalMs (20 s) |
 */
import { InvalidArgumentError, StateError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { MessageQueue } from '../../common/message.js';
import type { TopicRouteData } from '../../protocol/commands/index.js';
import type { RemotingClient } from '../../remoting/remoting-client.js';
import { BrokerHealth, ObservedRemotingClient } from './broker-health.js';
import { ClientHeartbeat } from './client-heartbeat.js';
import { ConnectionErrorReporter } from './connection-errors.js';
import { ClientRemotingProcessor, CLIENT_REQUEST_CODES } from './client-remoting-processor.js';
import { createRemotingClient, serverRequestHost } from './transport.js';
import { buildClientId, type ResolvedClientOptions } from './client-options.js';
import { ConsumerIdsWatcher } from './consumer-ids-watcher.js';
import { MQClientAPI } from './mq-client-api.js';
import type { MQConsumerInner, MQProducerInner, SubscriptionDataLike } from './mq-consumer-inner.js';
import { RebalanceService } from './rebalance-service.js';
import { SafeEventEmitter } from './safe-emitter.js';
import { ScheduledTasks } from './scheduled-tasks.js';
import { MASTER_ID, TopicRouteTable, type FindBrokerResult, type TopicPublishInfo } from './topic-route-table.js';

export { AddressedFailure } from './client-heartbeat.js';
export {
  MASTER_ID,
  topicRouteToPublishInfo,
  topicRouteToSubscribeInfo,
  type FindBrokerResult,
  type TopicPublishInfo,
} from './topic-route-table.js';

export interface ClientInstanceEvents {
  /** The route of a topic changed (first fetch included). */
  routeChanged: [topic: string, route: TopicRouteData];
  /** A heartbeat to one broker failed. */
  heartbeatError: [addr: string, err: unknown];
  /** A route refresh failed. */
  routeError: [topic: string, err: unknown];
  /** A member joined or left a consumer group (seen through the membership watch). */
  consumerIdsChanged: [group: string, consumerIdList: string[]];
  /** A broker answered for the first time, or again after it could not be reached. */
  brokerConnected: [addr: string];
  /** A broker that had answered could not be reached (connection refused or reset, timeout). */
  brokerDisconnected: [addr: string, err: unknown];
}

type State = 'CREATE_JUST' | 'RUNNING' | 'SHUTDOWN';

export class MQClientInstance {
  static readonly #registry = new Map<string, MQClientInstance>();

  /**
   * The instance for the client id of `options` (`clientIP@instanceName`), created on first use;
   * each call takes a reference that `release()` gives back. Options of later callers with the same
   * id are ignored, as in RocketMQ's MQClientManager.
   */
  static acquire(options: ResolvedClientOptions, remoting?: RemotingClient): MQClientInstance {
    const clientId = buildClientId(options);
    let inst = MQClientInstance.#registry.get(clientId);
    if (!inst || inst.#state === 'SHUTDOWN') {
      inst = new MQClientInstance(options, clientId, remoting);
      MQClientInstance.#registry.set(clientId, inst);
    }
    inst.#refs++;
    return inst;
  }

  readonly clientId: string;
  readonly options: ResolvedClientOptions;
  readonly api: MQClientAPI;
  readonly remoting: RemotingClient;
  readonly events: SafeEventEmitter<ClientInstanceEvents>;
  readonly rebalanceService: RebalanceService;
  /** Which brokers answer; drives the `brokerConnected` / `brokerDisconnected` events. */
  readonly brokerHealth: BrokerHealth;
  readonly #logger: Logger;
  readonly #watcher: ConsumerIdsWatcher;
  readonly #routes: TopicRouteTable;
  readonly #heartbeat: ClientHeartbeat;
  readonly #tasks: ScheduledTasks;

  #state: State = 'CREATE_JUST';
  #refs = 0;
  #shutdownPromise: Promise<void> | undefined;

  readonly #consumers = new Map<string, MQConsumerInner>();
  readonly #producers = new Map<string, MQProducerInner>();
  /** Routes come from NameServers and brokers are reached over TCP (`namesrvAddr`). */
  readonly #nameServerMode: boolean;
  readonly #unhook: Array<() => void> = [];

  private constructor(options: ResolvedClientOptions, clientId: string, remoting?: RemotingClient) {
    this.options = options;
    this.clientId = clientId;
    this.#logger = options.logger;
    this.remoting = remoting ?? createRemotingClient(options);
    this.#nameServerMode = options.namesrvAddr.length > 0;
    const host = serverRequestHost(this.remoting);
    if (host) {
      const processor = new ClientRemotingProcessor({
        selectConsumer: (group) => this.#consumers.get(group),
        selectProducer: (group) => this.#producers.get(group),
        rebalanceImmediately: () => {
          if (this.#state === 'RUNNING') this.rebalanceImmediately();
        },
        logger: options.logger,
      });
      for (const code of CLIENT_REQUEST_CODES)
        this.#unhook.push(host.onServerRequest(code, (request, addr) => processor.processRequest(request, addr)));
    }
    this.events = new SafeEventEmitter<ClientInstanceEvents>((err, event) =>
      this.#logger.error({ err, event }, 'a client event listener threw'),
    );
    const connectionErrors = new ConnectionErrorReporter(() => [
      ...this.#consumers.values(),
      ...this.#producers.values(),
    ]);
    this.brokerHealth = new BrokerHealth(options.clock, options.logger, options.brokerUnreachableWarnMs, {
      connected: (addr) => {
        connectionErrors.answered(addr);
        this.events.emit('brokerConnected', addr);
      },
      disconnected: (addr, err) => this.events.emit('brokerDisconnected', addr, err),
      notReachedYet: (addr, err) => connectionErrors.failed(addr, err),
    });
    this.api = new MQClientAPI(new ObservedRemotingClient(this.remoting, this.brokerHealth), {
      requestTimeoutMs: options.requestTimeoutMs,
    });
    const isShutdown = (): boolean => this.#state === 'SHUTDOWN';
    this.#routes = new TopicRouteTable({
      api: this.api,
      namesrvAddr: options.namesrvAddr,
      endpoints: options.endpoints,
      logger: options.logger,
      consumers: () => this.#consumers.values(),
      assertUsable: () => this.#assertUsable(),
      isShutdown,
      changed: (topic, route) => {
        this.#syncWatcher();
        this.events.emit('routeChanged', topic, route);
      },
      refreshFailed: (topic, err) => this.events.emit('routeError', topic, err),
    });
    this.#heartbeat = new ClientHeartbeat({
      api: this.api,
      clientId,
      logger: options.logger,
      consumers: () => [...this.#consumers.values()],
      producerGroups: () => [...this.#producers.keys()],
      brokerAddrs: (onlyMasters) => (onlyMasters ? this.#routes.masterBrokerAddrs() : this.#routes.allBrokerAddrs()),
      isShutdown,
      heartbeatFailed: (addr, err) => this.events.emit('heartbeatError', addr, err),
    });
    this.#tasks = new ScheduledTasks({
      clock: options.clock,
      logger: options.logger,
      isRunning: () => this.#state === 'RUNNING',
      keepAlive: () => this.#consumers.size > 0,
    });
    this.rebalanceService = new RebalanceService(() => this.#consumers.values(), {
      rebalanceIntervalMs: options.rebalanceIntervalMs,
      clock: options.clock,
      logger: options.logger,
    });
    this.#watcher = new ConsumerIdsWatcher({
      api: this.api,
      clientId,
      holdMs: options.watchConsumerIdsHoldMs,
      clock: options.clock,
      logger: options.logger,
      onChange: (group, _addr, ids) => {
        this.events.emit('consumerIdsChanged', group, ids);
        this.rebalanceImmediately();
      },
      // Evicted (or not yet registered) on that broker: prove we are alive at once.
      onNotMember: () => {
        if (this.#state === 'RUNNING') void this.sendHeartbeatToAllBrokers();
      },
    });
  }

  get state(): State {
    return this.#state;
  }

  /** References taken by `acquire` and not yet released. */
  get refCount(): number {
    return this.#refs;
  }

  /** Starts the scheduled tasks, the RebalanceService and the membership watcher. Idempotent. */
  async start(): Promise<void> {
    if (this.#state === 'RUNNING') return;
    if (this.#state === 'SHUTDOWN') throw new StateError(`client instance ${this.clientId} has been shut down`);
    this.#state = 'RUNNING';
    const o = this.options;
    this.#tasks.every('route', 10, o.pollNameServerIntervalMs, () => this.#routes.updateAll());
    this.#tasks.every('heartbeat', 1000, o.heartbeatBrokerIntervalMs, () => this.sendHeartbeatToAllBrokers());
    this.#tasks.every('persist', o.persistConsumerOffsetIntervalMs, o.persistConsumerOffsetIntervalMs, () =>
      this.persistAllConsumerOffset(),
    );
    this.rebalanceService.start();
    this.#syncWatcher();
  }

  /** Gives back a reference from `acquire`; the last one shuts the instance down. */
  async release(): Promise<void> {
    if (this.#refs > 0) this.#refs--;
    if (this.#refs === 0) await this.shutdown();
  }

  /**
   * Stops every timer and loop, unregisters the groups still registered from every broker, and closes
   * the transport. Idempotent (returns the same promise); every step runs even if one fails.
   */
  shutdown(): Promise<void> {
    this.#shutdownPromise ??= this.#shutdown();
    return this.#shutdownPromise;
  }

  async #shutdown(): Promise<void> {
    const wasRunning = this.#state === 'RUNNING';
    this.#state = 'SHUTDOWN';
    if (MQClientInstance.#registry.get(this.clientId) === this) MQClientInstance.#registry.delete(this.clientId);
    this.#tasks.cancel();
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['rebalance service', () => this.rebalanceService.shutdown()],
      ['membership watcher', () => this.#watcher.shutdown()],
      ['scheduled tasks', () => this.#tasks.settled()],
    ];
    if (wasRunning) {
      for (const group of [...this.#consumers.keys()])
        steps.push([`unregister consumer ${group}`, () => this.#heartbeat.unregister(undefined, group)]);
      for (const group of [...this.#producers.keys()])
        steps.push([`unregister producer ${group}`, () => this.#heartbeat.unregister(group, undefined)]);
    }
    for (const unhook of this.#unhook.splice(0)) unhook();
    steps.push(['transport', () => this.remoting.close()]);
    for (const [name, step] of steps) {
      try {
        await step();
      } catch (err) {
        this.#logger.warn({ err, step: name }, 'client instance shutdown step failed');
      }
    }
    this.#consumers.clear();
    this.#producers.clear();
    this.events.removeAllListeners();
  }

  #assertUsable(): void {
    if (this.#state === 'SHUTDOWN') throw new StateError(`client instance ${this.clientId} has been shut down`);
  }

  // ---- registries ------------------------------------------------------------------------------

  /** Registers a consumer group; throws if this instance already serves that group. */
  registerConsumer(group: string, inner: MQConsumerInner): void {
    this.#assertUsable();
    if (this.#consumers.has(group))
      throw new InvalidArgumentError(
        'consumerGroup',
        `the consumer group ${group} has been created before in client ${this.clientId}; give each consumer of a group its own instanceName`,
      );
    this.#consumers.set(group, inner);
    this.#tasks.refreshRefs();
    this.#syncWatcher();
  }

  /** Removes a consumer group and tells every broker (UNREGISTER_CLIENT) at once. */
  async unregisterConsumer(group: string): Promise<void> {
    if (!this.#consumers.delete(group)) return;
    this.#tasks.refreshRefs();
    this.#syncWatcher();
    if (this.#state === 'RUNNING') await this.#heartbeat.unregister(undefined, group);
  }

  registerProducer(group: string, inner: MQProducerInner): void {
    this.#assertUsable();
    if (this.#producers.has(group))
      throw new InvalidArgumentError(
        'producerGroup',
        `the producer group ${group} has been created before in client ${this.clientId}; give each producer its own instanceName`,
      );
    this.#producers.set(group, inner);
  }

  async unregisterProducer(group: string): Promise<void> {
    if (!this.#producers.delete(group)) return;
    if (this.#state === 'RUNNING') await this.#heartbeat.unregister(group, undefined);
  }

  selectConsumer(group: string): MQConsumerInner | undefined {
    return this.#consumers.get(group);
  }

  consumers(): MQConsumerInner[] {
    return [...this.#consumers.values()];
  }

  // ---- rebalance, membership and offsets -------------------------------------------------------

  /**
   * Wakes the RebalanceService (RocketMQ's rebalanceImmediately). `now`: a consumer has just started
   * (or been told to divide its queues at once): the pass skips the minimum interval.
   */
  rebalanceImmediately(now = false): void {
    this.rebalanceService.wakeup(now);
  }

  #syncWatcher(): void {
    // A RocketMQ broker has no membership watch: it sends NOTIFY_CONSUMER_IDS_CHANGED instead, and the
    // 20 s rebalance timer covers a lost notification.
    if (this.#state !== 'RUNNING' || this.#nameServerMode) return;
    const groups = [...this.#consumers.values()]
      .filter((c) => c.messageModel() === 'CLUSTERING' && c.subscriptions().length > 0)
      .map((c) => c.groupName());
    this.#watcher.sync(groups, this.masterBrokerAddrs());
  }

  /** The client ids of `group`, asked of a broker of `topic` (RocketMQ's findConsumerIdList). */
  findConsumerIdList(topic: string, group: string): Promise<string[]> {
    return this.#routes.findConsumerIdList(topic, group);
  }

  /** Persists the offsets of every consumer (the 5 s task; also run by consumers at shutdown). */
  async persistAllConsumerOffset(): Promise<void> {
    for (const c of [...this.#consumers.values()]) {
      try {
        await c.persistConsumerOffset();
      } catch (err) {
        this.#logger.warn({ err, group: c.groupName() }, 'persisting consumer offsets failed');
      }
    }
  }

  // ---- heartbeat (client-heartbeat.ts) ---------------------------------------------------------

  /** One heartbeat to every broker known from the routes; concurrent calls coalesce (ClientHeartbeat.sendToAllBrokers). */
  sendHeartbeatToAllBrokers(): Promise<void> {
    return this.#heartbeat.sendToAllBrokers();
  }

  /**
   * Sends this instance's heartbeat to each of `addrs` and resolves when every one accepted it; rejects
   * with the first failure, its address attached as `addr`. Used by a consumer's start, which must not
   * claim to run before its brokers know it.
   */
  async heartbeatOrThrow(addrs: readonly string[]): Promise<void> {
    this.#assertUsable();
    await this.#heartbeat.sendOrThrow(addrs);
  }

  /** RocketMQ's checkClientInBroker (CHECK_CLIENT_CONFIG of each subscription that is not a tag expression). */
  checkClientInBroker(group: string, subscriptions: readonly SubscriptionDataLike[], addrs: readonly string[]) {
    return this.#heartbeat.checkClientInBroker(group, subscriptions, addrs);
  }

  // ---- routes and broker addresses (topic-route-table.ts) --------------------------------------

  /** Fetches the route of `topic` and applies it; `null` when the topic does not exist (TopicRouteTable.update). */
  updateTopicRouteInfo(topic: string): Promise<TopicRouteData | null> {
    return this.#routes.update(topic);
  }

  /** The cached route of `topic`, if any. */
  getTopicRouteData(topic: string): TopicRouteData | undefined {
    return this.#routes.get(topic);
  }

  /** Readable queues of `topic` from the cached route (RocketMQ's topicSubscribeInfo), sorted; [] if unknown. */
  getTopicSubscribeInfo(topic: string): MessageQueue[] {
    return this.#routes.subscribeInfo(topic);
  }

  /** Readable queues of `topic` from a fresh route (RocketMQ's fetchSubscribeMessageQueues); ERR_TOPIC_NOT_EXIST if none. */
  fetchSubscribeMessageQueues(topic: string): Promise<MessageQueue[]> {
    return this.#routes.fetchSubscribeMessageQueues(topic);
  }

  /** Writable queues of `topic` from the cached route, or from a fresh one when none is cached; null if the topic does not exist. */
  getTopicPublishInfo(topic: string, opts: { refresh?: boolean } = {}): Promise<TopicPublishInfo | null> {
    return this.#routes.publishInfo(topic, opts);
  }

  /** The address to pull `brokerName` from (RocketMQ's findBrokerAddressInSubscribe). */
  findBrokerAddressInSubscribe(
    brokerName: string,
    brokerId = MASTER_ID,
    onlyThisBroker = false,
  ): FindBrokerResult | undefined {
    return this.#routes.findBrokerAddressInSubscribe(brokerName, brokerId, onlyThisBroker);
  }

  /** The master address of `brokerName` (RocketMQ's findBrokerAddressInPublish). */
  findBrokerAddressInPublish(brokerName: string): string | undefined {
    return this.#routes.findBrokerAddressInPublish(brokerName);
  }

  /** Every broker address known from the routes. */
  allBrokerAddrs(): string[] {
    return this.#routes.allBrokerAddrs();
  }

  /** Every master address known from the routes. */
  masterBrokerAddrs(): string[] {
    return this.#routes.masterBrokerAddrs();
  }

  /** The address for a queue's broker, refreshing the topic's route once when the broker is unknown. */
  findBrokerAddressForQueue(mq: MessageQueue, brokerId = MASTER_ID): Promise<FindBrokerResult> {
    return this.#routes.findBrokerAddressForQueue(mq, brokerId);
  }
}
