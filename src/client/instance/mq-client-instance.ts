/**
 * MQClientInstance (RocketMQ's MQClientInstance): one per client id in a process, shared
 * by the producers and consumers that use that id. It owns the transport, the route cache, the broker
 * address table, the heartbeat, offset persistence, the RebalanceService and the membership watcher,
 * and every timer and loop they run: `shutdown()` (run by the last `release()`) stops them all.
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
import type { TimerHandle } from '../../common/clock.js';
import { InvalidArgumentError, RocketMQError, StateError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { compareMessageQueue, type MessageQueue } from '../../common/message.js';
import { ResponseCode } from '../../protocol/response-code.js';
import { errorFromResponse } from '../../protocol/response-error.js';
import {
  isReadable,
  isWriteable,
  type ConsumerDataWire,
  type HeartbeatData,
  type SubscriptionDataWire,
  type TopicRouteData,
} from '../../protocol/commands/index.js';
import type { RemotingClient } from '../../remoting/remoting-client.js';
import { BrokerHealth, ObservedRemotingClient } from './broker-health.js';
import { ClientRemotingProcessor, CLIENT_REQUEST_CODES } from './client-remoting-processor.js';
import { createRemotingClient, serverRequestHost } from './transport.js';
import { buildClientId, type ResolvedClientOptions } from './client-options.js';
import { ConsumerIdsWatcher } from './consumer-ids-watcher.js';
import { MQClientAPI } from './mq-client-api.js';
import type { MQConsumerInner, MQProducerInner, SubscriptionDataLike } from './mq-consumer-inner.js';
import { RebalanceService } from './rebalance-service.js';
import { SafeEventEmitter } from './safe-emitter.js';

/** A call to one broker failed: the broker's address and the failure (with the topic when one was involved). */
export class AddressedFailure extends Error {
  constructor(
    readonly addr: string,
    readonly error: unknown,
    readonly topic?: string,
  ) {
    super(`${addr}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    this.name = 'AddressedFailure';
  }
}

/** Broker id of a master (MixAll.MASTER_ID). */
export const MASTER_ID = 0;

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

/** RocketMQ's FindBrokerResult. */
export interface FindBrokerResult {
  brokerAddr: string;
  slave: boolean;
  brokerId: number;
}

/** The writable queues of a topic, as a producer uses them (RocketMQ's TopicPublishInfo). */
export interface TopicPublishInfo {
  topic: string;
  messageQueues: MessageQueue[];
  route: TopicRouteData;
}

type State = 'CREATE_JUST' | 'RUNNING' | 'SHUTDOWN';

/** Readable queues of a route (MQClientInstance.topicRouteData2TopicSubscribeInfo), sorted. */
export function topicRouteToSubscribeInfo(topic: string, route: TopicRouteData): MessageQueue[] {
  const out: MessageQueue[] = [];
  for (const qd of route.queueDatas) {
    if (!isReadable(qd.perm)) continue;
    for (let i = 0; i < qd.readQueueNums; i++) out.push({ topic, brokerName: qd.brokerName, queueId: i });
  }
  return out.sort(compareMessageQueue);
}

/**
 * Writable queues of a route whose broker has a master (topicRouteData2TopicPublishInfo), in
 * RocketMQ's order: queue datas sorted by broker name, queues 0..writeQueueNums-1.
 */
export function topicRouteToPublishInfo(topic: string, route: TopicRouteData): MessageQueue[] {
  const out: MessageQueue[] = [];
  const qds = [...route.queueDatas].sort((a, b) =>
    a.brokerName < b.brokerName ? -1 : a.brokerName > b.brokerName ? 1 : 0,
  );
  for (const qd of qds) {
    if (!isWriteable(qd.perm)) continue;
    const bd = route.brokerDatas.find((b) => b.brokerName === qd.brokerName);
    if (!bd || bd.brokerAddrs[String(MASTER_ID)] === undefined) continue;
    for (let i = 0; i < qd.writeQueueNums; i++) out.push({ topic, brokerName: qd.brokerName, queueId: i });
  }
  return out;
}

function toWireSubscription(sd: SubscriptionDataLike): SubscriptionDataWire {
  return {
    topic: sd.topic,
    subString: sd.subString,
    tagsSet: [...sd.tagsSet],
    codeSet: [...sd.codeSet],
    subVersion: sd.subVersion,
    expressionType: sd.expressionType || 'TAG',
    classFilterMode: sd.classFilterMode ?? false,
  };
}

/** A canonical form of a route for change detection (RocketMQ's topicRouteDataChanged compares sorted copies). */
function routeKey(route: TopicRouteData): string {
  const qds = [...route.queueDatas]
    .map((q) => [q.brokerName, q.readQueueNums, q.writeQueueNums, q.perm, q.topicSysFlag])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  const bds = [...route.brokerDatas]
    .map((b) => [b.brokerName, b.cluster, Object.entries(b.brokerAddrs).sort(([x], [y]) => Number(x) - Number(y))])
    .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
  return JSON.stringify([qds, bds]);
}

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

  #state: State = 'CREATE_JUST';
  #refs = 0;
  #shutdownPromise: Promise<void> | undefined;
  readonly #timeouts: TimerHandle[] = [];
  readonly #intervals: TimerHandle[] = [];
  readonly #intervalsRunning = new Set<string>();
  readonly #tasksInFlight = new Set<Promise<unknown>>();

  readonly #consumers = new Map<string, MQConsumerInner>();
  readonly #producers = new Map<string, MQProducerInner>();
  readonly #routes = new Map<string, TopicRouteData>();
  readonly #routeKeys = new Map<string, string>();
  readonly #routeUpdates = new Map<string, Promise<TopicRouteData | null>>();
  /** brokerName → (brokerId → address). */
  readonly #brokerAddrTable = new Map<string, Map<number, string>>();
  #endpointCursor = 0;
  /** Routes come from NameServers and brokers are reached over TCP (`namesrvAddr`). */
  readonly #nameServerMode: boolean;
  readonly #unhook: Array<() => void> = [];

  #heartbeatRunning: Promise<void> | undefined;
  #heartbeatQueued: Promise<void> | undefined;

  private constructor(options: ResolvedClientOptions, clientId: string, remoting?: RemotingClient) {
    this.options = options;
    this.clientId = clientId;
    this.#logger = options.logger;
    this.remoting = remoting ?? createRemotingClient(options);
    this.#nameServerMode = options.namesrvAddr.length > 0;
    // RocketMQ picks a NameServer at random and keeps it while it answers.
    if (this.#nameServerMode) this.#endpointCursor = Math.floor(Math.random() * options.namesrvAddr.length);
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
    this.brokerHealth = new BrokerHealth(options.clock, options.logger, options.brokerUnreachableWarnMs, {
      connected: (addr) => this.events.emit('brokerConnected', addr),
      disconnected: (addr, err) => this.events.emit('brokerDisconnected', addr, err),
    });
    this.api = new MQClientAPI(new ObservedRemotingClient(this.remoting, this.brokerHealth), {
      requestTimeoutMs: options.requestTimeoutMs,
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
    this.#every('route', 10, o.pollNameServerIntervalMs, () => this.updateAllTopicRouteInfo());
    this.#every('heartbeat', 1000, o.heartbeatBrokerIntervalMs, () => this.sendHeartbeatToAllBrokers());
    this.#every('persist', o.persistConsumerOffsetIntervalMs, o.persistConsumerOffsetIntervalMs, () =>
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
    for (const t of this.#timeouts.splice(0)) this.options.clock.clearTimeout(t);
    for (const t of this.#intervals.splice(0)) this.options.clock.clearInterval(t);
    const steps: Array<[string, () => Promise<unknown>]> = [
      ['rebalance service', () => this.rebalanceService.shutdown()],
      ['membership watcher', () => this.#watcher.shutdown()],
      ['scheduled tasks', () => Promise.allSettled([...this.#tasksInFlight])],
    ];
    if (wasRunning) {
      for (const group of [...this.#consumers.keys()])
        steps.push([`unregister consumer ${group}`, () => this.#unregisterClient(undefined, group)]);
      for (const group of [...this.#producers.keys()])
        steps.push([`unregister producer ${group}`, () => this.#unregisterClient(group, undefined)]);
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

  /** Runs `task` after `firstMs`, then every `periodMs`; a run never overlaps the previous one. */
  #every(name: string, firstMs: number, periodMs: number, task: () => Promise<unknown>): void {
    const { clock } = this.options;
    const run = (): void => {
      if (this.#state !== 'RUNNING' || this.#intervalsRunning.has(name)) return;
      this.#intervalsRunning.add(name);
      const p = task()
        .catch((err: unknown) => this.#logger.warn({ err, task: name }, 'scheduled task failed'))
        .finally(() => {
          this.#intervalsRunning.delete(name);
          this.#tasksInFlight.delete(p);
        });
      this.#tasksInFlight.add(p);
    };
    const first = clock.setTimeout(() => {
      run();
      if (this.#state === 'RUNNING') this.#intervals.push(this.#keepAliveAsNeeded(clock.setInterval(run, periodMs)));
    }, firstMs);
    this.#timeouts.push(this.#keepAliveAsNeeded(first));
  }

  /**
   * The scheduled tasks keep the process alive only while a consumer is registered (a started
   * consumer is expected to keep running); a producer alone does not, so a script that forgets
   * `shutdown()` still exits, as Node users expect of a client.
   */
  #keepAliveAsNeeded(h: TimerHandle): TimerHandle {
    const t = h as { ref?: () => unknown; unref?: () => unknown };
    if (this.#consumers.size > 0) t.ref?.();
    else t.unref?.();
    return h;
  }

  #updateTimerRefs(): void {
    for (const h of this.#timeouts) this.#keepAliveAsNeeded(h);
    for (const h of this.#intervals) this.#keepAliveAsNeeded(h);
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
    this.#updateTimerRefs();
    this.#syncWatcher();
  }

  /** Removes a consumer group and tells every broker (UNREGISTER_CLIENT) at once. */
  async unregisterConsumer(group: string): Promise<void> {
    if (!this.#consumers.delete(group)) return;
    this.#updateTimerRefs();
    this.#syncWatcher();
    if (this.#state === 'RUNNING') await this.#unregisterClient(undefined, group);
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
    if (this.#state === 'RUNNING') await this.#unregisterClient(group, undefined);
  }

  selectConsumer(group: string): MQConsumerInner | undefined {
    return this.#consumers.get(group);
  }

  consumers(): MQConsumerInner[] {
    return [...this.#consumers.values()];
  }

  async #unregisterClient(producerGroup: string | undefined, consumerGroup: string | undefined): Promise<void> {
    await Promise.allSettled(
      this.allBrokerAddrs().map((addr) =>
        this.api.unregisterClient(addr, this.clientId, { producerGroup, consumerGroup }).catch((err: unknown) => {
          this.#logger.warn({ err, addr, producerGroup, consumerGroup }, 'unregister client failed');
        }),
      ),
    );
  }

  // ---- rebalance and membership ----------------------------------------------------------------

  /** Wakes the RebalanceService (RocketMQ's rebalanceImmediately). */
  rebalanceImmediately(): void {
    this.rebalanceService.wakeup();
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

  /**
   * The client ids of `group`, asked of a random broker of `topic` (its master when it has one), as
   * RocketMQ's findConsumerIdList. Throws when no broker is known or the call fails.
   */
  async findConsumerIdList(topic: string, group: string): Promise<string[]> {
    let route = this.#routes.get(topic);
    if (!route) route = (await this.updateTopicRouteInfo(topic)) ?? undefined;
    const bds = route?.brokerDatas ?? [];
    if (bds.length === 0)
      throw new RocketMQError('ERR_BROKER_NOT_EXIST', `no broker known for topic ${topic} to ask for group ${group}`);
    const bd = bds[Math.floor(Math.random() * bds.length)] ?? bds[0]!;
    const addr = bd.brokerAddrs[String(MASTER_ID)] ?? Object.values(bd.brokerAddrs)[0];
    if (addr === undefined) throw new RocketMQError('ERR_BROKER_NOT_EXIST', `broker ${bd.brokerName} has no address`);
    return this.api.getConsumerIdListByGroup(addr, group);
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

  // ---- heartbeat -------------------------------------------------------------------------------

  /** RocketMQ's HeartbeatData for this instance: every consumer group with its subscriptions, every producer group. */
  buildHeartbeatData(): HeartbeatData {
    const consumerDataSet: ConsumerDataWire[] = [...this.#consumers.values()].map((c) => ({
      groupName: c.groupName(),
      consumeType: c.consumeType(),
      messageModel: c.messageModel(),
      consumeFromWhere: c.consumeFromWhere() as ConsumerDataWire['consumeFromWhere'],
      subscriptionDataSet: c.subscriptions().map(toWireSubscription),
      unitMode: false,
    }));
    const producerDataSet = [...this.#producers.keys()].map((groupName) => ({ groupName }));
    return { clientID: this.clientId, consumerDataSet, producerDataSet };
  }

  /**
   * Sends one heartbeat to every broker known from the routes (only masters when there are no
   * consumers). Calls made while one is running are coalesced into one more run after it.
   */
  sendHeartbeatToAllBrokers(): Promise<void> {
    if (this.#heartbeatRunning) {
      this.#heartbeatQueued ??= this.#heartbeatRunning.then(() => {
        this.#heartbeatQueued = undefined;
        return this.sendHeartbeatToAllBrokers();
      });
      return this.#heartbeatQueued;
    }
    this.#heartbeatRunning = this.#heartbeatOnce().finally(() => {
      this.#heartbeatRunning = undefined;
    });
    return this.#heartbeatRunning;
  }

  async #heartbeatOnce(): Promise<void> {
    if (this.#state === 'SHUTDOWN') return;
    if (this.#consumers.size === 0 && this.#producers.size === 0) return;
    const data = this.buildHeartbeatData();
    const onlyMasters = this.#consumers.size === 0;
    const addrs: string[] = [];
    for (const ids of this.#brokerAddrTable.values())
      for (const [id, addr] of ids) if (!onlyMasters || id === MASTER_ID) addrs.push(addr);
    await Promise.all(
      [...new Set(addrs)].map((addr) =>
        this.api.sendHeartbeat(addr, data).catch((err: unknown) => {
          this.#logger.warn({ err, addr }, 'heartbeat failed');
          this.events.emit('heartbeatError', addr, err);
        }),
      ),
    );
  }

  /**
   * Sends this instance's heartbeat to each of `addrs` and resolves when every one accepted it; rejects
   * with the first failure, its address attached as `addr`. Used by a consumer's start, which must not
   * claim to run before its brokers know it.
   */
  async heartbeatOrThrow(addrs: readonly string[]): Promise<void> {
    this.#assertUsable();
    const data = this.buildHeartbeatData();
    await Promise.all(
      addrs.map((addr) =>
        this.api.sendHeartbeat(addr, data).catch((err: unknown) => {
          throw new AddressedFailure(addr, err);
        }),
      ),
    );
  }

  /**
   * RocketMQ's checkClientInBroker: every subscription of `group` that is not a tag expression is
   * checked by each of `addrs` (CHECK_CLIENT_CONFIG). Rejects with the first refusal or failure.
   */
  async checkClientInBroker(
    group: string,
    subscriptions: readonly SubscriptionDataLike[],
    addrs: readonly string[],
  ): Promise<void> {
    const checks: Promise<void>[] = [];
    for (const sd of subscriptions) {
      if (!sd.expressionType || sd.expressionType === 'TAG') continue;
      const subscriptionData = toWireSubscription(sd);
      for (const addr of addrs)
        checks.push(
          this.api
            .checkClientInBroker(addr, { clientId: this.clientId, group, subscriptionData })
            .catch((err: unknown) => {
              throw new AddressedFailure(addr, err, sd.topic);
            }),
        );
    }
    await Promise.all(checks);
  }

  // ---- routes ----------------------------------------------------------------------------------

  /** Refreshes the routes of every topic in use: those cached and those the consumers subscribe. */
  async updateAllTopicRouteInfo(): Promise<void> {
    const topics = new Set(this.#routes.keys());
    for (const c of this.#consumers.values()) for (const sd of c.subscriptions()) topics.add(sd.topic);
    await Promise.all(
      [...topics].map((t) =>
        this.updateTopicRouteInfo(t).catch((err: unknown) => {
          this.#logger.warn({ err, topic: t }, 'route refresh failed');
          this.events.emit('routeError', t, err);
        }),
      ),
    );
  }

  /**
   * Fetches the route of `topic` from the endpoints or NameServers (the first that answers), updates the cache, the
   * broker table and every consumer's subscribe info, and resolves with it; `null` when the topic does
   * not exist (the cached route, if any, is kept, as RocketMQ keeps it). Concurrent calls share one fetch.
   */
  updateTopicRouteInfo(topic: string): Promise<TopicRouteData | null> {
    this.#assertUsable();
    let p = this.#routeUpdates.get(topic);
    if (!p) {
      p = this.#fetchRoute(topic).finally(() => this.#routeUpdates.delete(topic));
      this.#routeUpdates.set(topic, p);
    }
    return p;
  }

  async #fetchRoute(topic: string): Promise<TopicRouteData | null> {
    const route = await this.#queryEndpoints((addr) => this.api.getTopicRouteInfo(addr, topic));
    if (route === null || this.#state === 'SHUTDOWN') return route;
    const key = routeKey(route);
    if (this.#routeKeys.get(topic) !== key) {
      this.#routes.set(topic, route);
      this.#routeKeys.set(topic, key);
      for (const bd of route.brokerDatas) {
        const ids = new Map<number, string>();
        for (const [id, addr] of Object.entries(bd.brokerAddrs)) ids.set(Number(id), addr);
        this.#brokerAddrTable.set(bd.brokerName, ids);
      }
      const mqs = topicRouteToSubscribeInfo(topic, route);
      for (const c of this.#consumers.values()) {
        const wants = c.isSubscribeTopicNeedUpdate
          ? c.isSubscribeTopicNeedUpdate(topic)
          : c.subscriptions().some((sd) => sd.topic === topic);
        if (!wants) continue;
        try {
          c.updateTopicSubscribeInfo(topic, mqs);
        } catch (err) {
          this.#logger.warn({ err, group: c.groupName(), topic }, 'updateTopicSubscribeInfo threw');
        }
      }
      this.#syncWatcher();
      this.events.emit('routeChanged', topic, route);
    }
    return route;
  }

  /**
   * Tries `call` on each endpoint (or NameServer) in turn, starting with the last that worked, until
   * one answers.
   */
  async #queryEndpoints<T>(call: (addr: string) => Promise<T>): Promise<T> {
    const eps = this.#nameServerMode ? this.options.namesrvAddr : this.options.endpoints;
    let lastErr: unknown;
    for (let i = 0; i < eps.length; i++) {
      const idx = (this.#endpointCursor + i) % eps.length;
      try {
        const r = await call(eps[idx]!);
        this.#endpointCursor = idx;
        return r;
      } catch (err) {
        lastErr = err;
        if (!(err instanceof RocketMQError) || !err.retriable) throw err;
      }
    }
    throw lastErr;
  }

  /** The cached route of `topic`, if any. */
  getTopicRouteData(topic: string): TopicRouteData | undefined {
    return this.#routes.get(topic);
  }

  /** Readable queues of `topic` from the cached route (RocketMQ's topicSubscribeInfo), sorted; [] if unknown. */
  getTopicSubscribeInfo(topic: string): MessageQueue[] {
    const route = this.#routes.get(topic);
    return route ? topicRouteToSubscribeInfo(topic, route) : [];
  }

  /**
   * Readable queues of `topic` from a fresh route (RocketMQ's fetchSubscribeMessageQueues), sorted.
   * Throws ERR_TOPIC_NOT_EXIST when the topic does not exist or has no readable queue.
   */
  async fetchSubscribeMessageQueues(topic: string): Promise<MessageQueue[]> {
    const route = await this.updateTopicRouteInfo(topic);
    const mqs = route ? topicRouteToSubscribeInfo(topic, route) : [];
    if (mqs.length === 0)
      throw errorFromResponse(ResponseCode.TOPIC_NOT_EXIST, `can not find message queue for topic ${topic}`);
    return mqs;
  }

  /** Writable queues of `topic` from the cached route, or from a fresh one when none is cached; null if the topic does not exist. */
  async getTopicPublishInfo(topic: string, opts: { refresh?: boolean } = {}): Promise<TopicPublishInfo | null> {
    let route = opts.refresh ? undefined : this.#routes.get(topic);
    if (!route) route = (await this.updateTopicRouteInfo(topic)) ?? undefined;
    if (!route) return null;
    return { topic, messageQueues: topicRouteToPublishInfo(topic, route), route };
  }

  // ---- broker addresses ------------------------------------------------------------------------

  /**
   * The address to pull `brokerName` from (RocketMQ's findBrokerAddressInSubscribe): broker `brokerId`
   * if known; else, for a slave id, the next id; else (unless `onlyThisBroker`) any broker of the name.
   */
  findBrokerAddressInSubscribe(
    brokerName: string,
    brokerId = MASTER_ID,
    onlyThisBroker = false,
  ): FindBrokerResult | undefined {
    const ids = this.#brokerAddrTable.get(brokerName);
    if (!ids || ids.size === 0) return undefined;
    let addr = ids.get(brokerId);
    if (addr !== undefined) return { brokerAddr: addr, slave: brokerId !== MASTER_ID, brokerId };
    if (brokerId !== MASTER_ID) {
      addr = ids.get(brokerId + 1);
      if (addr !== undefined) return { brokerAddr: addr, slave: true, brokerId: brokerId + 1 };
    }
    if (onlyThisBroker) return undefined;
    const first = ids.entries().next().value;
    return first ? { brokerAddr: first[1], slave: first[0] !== MASTER_ID, brokerId: first[0] } : undefined;
  }

  /** The master address of `brokerName` (RocketMQ's findBrokerAddressInPublish). */
  findBrokerAddressInPublish(brokerName: string): string | undefined {
    return this.#brokerAddrTable.get(brokerName)?.get(MASTER_ID);
  }

  /** Every broker address known from the routes. */
  allBrokerAddrs(): string[] {
    const out = new Set<string>();
    for (const ids of this.#brokerAddrTable.values()) for (const a of ids.values()) out.add(a);
    return [...out];
  }

  /** Every master address known from the routes. */
  masterBrokerAddrs(): string[] {
    const out = new Set<string>();
    for (const ids of this.#brokerAddrTable.values()) {
      const a = ids.get(MASTER_ID);
      if (a !== undefined) out.add(a);
    }
    return [...out];
  }

  /**
   * The address for a queue's broker, refreshing the topic's route once when the broker is unknown
   * (RocketMQ's pattern in pullKernelImpl and the offset calls).
   */
  async findBrokerAddressForQueue(mq: MessageQueue, brokerId = MASTER_ID): Promise<FindBrokerResult> {
    let found = this.findBrokerAddressInSubscribe(mq.brokerName, brokerId, false);
    if (!found) {
      await this.updateTopicRouteInfo(mq.topic);
      found = this.findBrokerAddressInSubscribe(mq.brokerName, brokerId, false);
    }
    if (!found) throw new RocketMQError('ERR_BROKER_NOT_EXIST', `the broker[${mq.brokerName}] not exist`);
    return found;
  }
}
