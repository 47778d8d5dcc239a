/**
 * The routes a client instance knows (RocketMQ's topicRouteTable and brokerAddrTable in
 * MQClientInstance): fetching a topic's route from the endpoints or NameServers, keeping the broker
 * address table it implies, telling the consumers when a route changed, and answering "which address
 * serves this broker" for pulls, sends and offset calls.
 */
import { RocketMQError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import { compareMessageQueue, type MessageQueue } from '../../common/message.js';
import { ResponseCode } from '../../protocol/response-code.js';
import { errorFromResponse } from '../../protocol/response-error.js';
import { isReadable, isWriteable, type TopicRouteData } from '../../protocol/commands/index.js';
import { unreachableError } from './connection-errors.js';
import type { MQClientAPI } from './mq-client-api.js';
import type { MQConsumerInner } from './mq-consumer-inner.js';

/** Broker id of a master (MixAll.MASTER_ID). */
export const MASTER_ID = 0;

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

export interface TopicRouteTableDeps {
  api: MQClientAPI;
  /** The NameServers to ask (`namesrvAddr`); empty when the routes come from the brokers themselves. */
  namesrvAddr: readonly string[];
  /** The bundled broker's endpoints, asked when there is no NameServer. */
  endpoints: readonly string[];
  logger: Logger;
  /** The consumers whose subscribe info follows the routes. */
  consumers(): Iterable<MQConsumerInner>;
  /** Throws when the instance has been shut down. */
  assertUsable(): void;
  isShutdown(): boolean;
  /** A route was fetched for the first time or changed (after the table and the consumers took it). */
  changed(topic: string, route: TopicRouteData): void;
  /** A refresh of `topic` by `updateAll` failed. */
  refreshFailed(topic: string, err: unknown): void;
}

export class TopicRouteTable {
  readonly #d: TopicRouteTableDeps;
  readonly #routes = new Map<string, TopicRouteData>();
  readonly #routeKeys = new Map<string, string>();
  readonly #routeUpdates = new Map<string, Promise<TopicRouteData | null>>();
  /** brokerName → (brokerId → address). */
  readonly #brokerAddrTable = new Map<string, Map<number, string>>();
  #endpointCursor = 0;

  constructor(deps: TopicRouteTableDeps) {
    this.#d = deps;
    // RocketMQ picks a NameServer at random and keeps it while it answers.
    if (deps.namesrvAddr.length > 0) this.#endpointCursor = Math.floor(Math.random() * deps.namesrvAddr.length);
  }

  /** Refreshes the routes of every topic in use: those cached and those the consumers subscribe. */
  async updateAll(): Promise<void> {
    const topics = new Set(this.#routes.keys());
    for (const c of this.#d.consumers()) for (const sd of c.subscriptions()) topics.add(sd.topic);
    await Promise.all(
      [...topics].map((t) =>
        this.update(t).catch((err: unknown) => {
          this.#d.logger.warn({ err, topic: t }, 'route refresh failed');
          this.#d.refreshFailed(t, err);
        }),
      ),
    );
  }

  /**
   * Fetches the route of `topic` from the endpoints or NameServers (the first that answers), updates the cache, the
   * broker table and every consumer's subscribe info, and resolves with it; `null` when the topic does
   * not exist (the cached route, if any, is kept, as RocketMQ keeps it). Concurrent calls share one fetch.
   */
  update(topic: string): Promise<TopicRouteData | null> {
    this.#d.assertUsable();
    let p = this.#routeUpdates.get(topic);
    if (!p) {
      p = this.#fetchRoute(topic).finally(() => this.#routeUpdates.delete(topic));
      this.#routeUpdates.set(topic, p);
    }
    return p;
  }

  async #fetchRoute(topic: string): Promise<TopicRouteData | null> {
    const route = await this.#queryEndpoints(`to fetch the route of ${topic}`, (addr) =>
      this.#d.api.getTopicRouteInfo(addr, topic),
    );
    if (route === null || this.#d.isShutdown()) return route;
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
      for (const c of this.#d.consumers()) {
        const wants = c.isSubscribeTopicNeedUpdate
          ? c.isSubscribeTopicNeedUpdate(topic)
          : c.subscriptions().some((sd) => sd.topic === topic);
        if (!wants) continue;
        try {
          c.updateTopicSubscribeInfo(topic, mqs);
        } catch (err) {
          this.#d.logger.warn({ err, group: c.groupName(), topic }, 'updateTopicSubscribeInfo threw');
        }
      }
      this.#d.changed(topic, route);
    }
    return route;
  }

  /**
   * Tries `call` on each endpoint (or NameServer) in turn, starting with the last that worked, until
   * one answers. When none could be reached, the error names them all and each one's failure.
   */
  async #queryEndpoints<T>(purpose: string, call: (addr: string) => Promise<T>): Promise<T> {
    const nameServers = this.#d.namesrvAddr.length > 0;
    const eps = nameServers ? this.#d.namesrvAddr : this.#d.endpoints;
    const failures: Array<[string, unknown]> = [];
    for (let i = 0; i < eps.length; i++) {
      const idx = (this.#endpointCursor + i) % eps.length;
      const addr = eps[idx]!;
      try {
        const r = await call(addr);
        this.#endpointCursor = idx;
        return r;
      } catch (err) {
        failures.push([addr, err]);
        if (!(err instanceof RocketMQError) || !err.retriable) throw err;
      }
    }
    throw unreachableError(nameServers ? 'NameServer' : 'broker', purpose, failures);
  }

  /** The cached route of `topic`, if any. */
  get(topic: string): TopicRouteData | undefined {
    return this.#routes.get(topic);
  }

  /** Readable queues of `topic` from the cached route (RocketMQ's topicSubscribeInfo), sorted; [] if unknown. */
  subscribeInfo(topic: string): MessageQueue[] {
    const route = this.#routes.get(topic);
    return route ? topicRouteToSubscribeInfo(topic, route) : [];
  }

  /**
   * Readable queues of `topic` from a fresh route (RocketMQ's fetchSubscribeMessageQueues), sorted.
   * Throws ERR_TOPIC_NOT_EXIST when the topic does not exist or has no readable queue.
   */
  async fetchSubscribeMessageQueues(topic: string): Promise<MessageQueue[]> {
    const route = await this.update(topic);
    const mqs = route ? topicRouteToSubscribeInfo(topic, route) : [];
    if (mqs.length === 0)
      throw errorFromResponse(ResponseCode.TOPIC_NOT_EXIST, `can not find message queue for topic ${topic}`);
    return mqs;
  }

  /** Writable queues of `topic` from the cached route, or from a fresh one when none is cached; null if the topic does not exist. */
  async publishInfo(topic: string, opts: { refresh?: boolean } = {}): Promise<TopicPublishInfo | null> {
    let route = opts.refresh ? undefined : this.#routes.get(topic);
    if (!route) route = (await this.update(topic)) ?? undefined;
    if (!route) return null;
    return { topic, messageQueues: topicRouteToPublishInfo(topic, route), route };
  }

  /**
   * The client ids of `group`, asked of a random broker of `topic` (its master when it has one), as
   * RocketMQ's findConsumerIdList. Throws when no broker is known or the call fails.
   */
  async findConsumerIdList(topic: string, group: string): Promise<string[]> {
    let route = this.#routes.get(topic);
    if (!route) route = (await this.update(topic)) ?? undefined;
    const bds = route?.brokerDatas ?? [];
    if (bds.length === 0)
      throw new RocketMQError('ERR_BROKER_NOT_EXIST', `no broker known for topic ${topic} to ask for group ${group}`);
    const bd = bds[Math.floor(Math.random() * bds.length)] ?? bds[0]!;
    const addr = bd.brokerAddrs[String(MASTER_ID)] ?? Object.values(bd.brokerAddrs)[0];
    if (addr === undefined) throw new RocketMQError('ERR_BROKER_NOT_EXIST', `broker ${bd.brokerName} has no address`);
    return this.#d.api.getConsumerIdListByGroup(addr, group);
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
      await this.update(mq.topic);
      found = this.findBrokerAddressInSubscribe(mq.brokerName, brokerId, false);
    }
    if (!found) throw new RocketMQError('ERR_BROKER_NOT_EXIST', `the broker[${mq.brokerName}] not exist`);
    return found;
  }
}
