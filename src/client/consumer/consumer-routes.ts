/**
 * A consumer's topic routes (the push consumer's and the lite pull consumer's): the readable queues
 * of each subscribed topic (RocketMQ: RebalanceImpl.topicSubscribeInfoTable), asked for at most once
 * a second while unknown, and the extra heartbeat that tells the brokers about this member when a
 * route appears or changes or when a subscription changes, each followed by an immediate rebalance.
 */
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import type { MessageQueue } from '../../common/message.js';
import type { MQClientInstance } from '../instance/mq-client-instance.js';

/** What the routes read of their consumer (the push consumer's host fits; so does the lite pull consumer's). */
export interface RoutesHost {
  readonly logger: Logger;
  readonly options: { readonly clock: Clock };
  readonly subscriptions: { has(topic: string): boolean };
  isRunning(): boolean;
  /** The started consumer's client instance; undefined before start() and after a failed start. */
  run():
    | {
        instance: Pick<
          MQClientInstance,
          'sendHeartbeatToAllBrokers' | 'rebalanceImmediately' | 'getTopicSubscribeInfo' | 'updateTopicRouteInfo'
        >;
      }
    | undefined;
}

/** A topic without a route asks for one at most this often; extra heartbeats are as rare. */
const ROUTE_RETRY_MS = 1000;

export class ConsumerRoutes {
  readonly #topicSubscribeInfo = new Map<string, MessageQueue[]>();
  readonly #routeAskedAt = new Map<string, number>();
  #lastExtraHeartbeat = -Infinity;

  constructor(private readonly host: RoutesHost) {}

  /** A route appeared or changed: a topic of ours may have new brokers, so heartbeat and rebalance now. */
  readonly onRouteChanged = (topic: string): void => {
    if (!this.host.subscriptions.has(topic) || !this.host.isRunning()) return;
    this.heartbeatSoon(true);
  };

  /** MQConsumerInner.updateTopicSubscribeInfo: the instance's new route of a subscribed topic. */
  updateTopicSubscribeInfo(topic: string, mqs: MessageQueue[]): void {
    if (this.host.subscriptions.has(topic)) this.#topicSubscribeInfo.set(topic, mqs);
  }

  /**
   * The group's members for a rebalance of `topic`: `settled` (the start-up settle's list, in the first
   * pass) or else the broker's. A list without this member means the broker does not know it yet (first
   * route just found, broker restarted): a heartbeat goes out now.
   */
  async members(
    topic: string,
    group: string,
    instance: Pick<MQClientInstance, 'findConsumerIdList' | 'clientId'>,
    settled: string[] | undefined,
  ): Promise<string[]> {
    const ids = settled ?? (await instance.findConsumerIdList(topic, group));
    if (!ids.includes(instance.clientId)) this.heartbeatSoon();
    return ids;
  }

  /** Sends a heartbeat (at most once a second), then wakes the rebalance. */
  heartbeatSoon(force = false): void {
    const run = this.host.run();
    if (!run || !this.host.isRunning()) return;
    const now = this.host.options.clock.now();
    if (!force && now - this.#lastExtraHeartbeat < ROUTE_RETRY_MS) return;
    this.#lastExtraHeartbeat = now;
    void run.instance
      .sendHeartbeatToAllBrokers()
      .catch(() => {})
      .then(() => run.instance.rebalanceImmediately());
  }

  /** The route's readable queues of `topic`; asks for the route (at most once a second) when unknown. */
  routeOf(topic: string): MessageQueue[] | undefined {
    const mine = this.#topicSubscribeInfo.get(topic);
    if (mine && mine.length > 0) return mine;
    const shared = this.host.run()?.instance.getTopicSubscribeInfo(topic) ?? [];
    if (shared.length > 0) return shared;
    const now = this.host.options.clock.now();
    if (now - (this.#routeAskedAt.get(topic) ?? -Infinity) >= ROUTE_RETRY_MS) {
      this.#routeAskedAt.set(topic, now);
      void this.refreshRoute(topic);
    }
    return undefined;
  }

  async refreshRoute(topic: string): Promise<void> {
    const run = this.host.run();
    if (!run || !this.host.isRunning()) return;
    try {
      await run.instance.updateTopicRouteInfo(topic);
    } catch (err) {
      this.host.logger.warn({ err, topic }, 'route update failed');
    }
  }

  /**
   * A subscription changed (the lite pull consumer's subscribe/unsubscribe): fetch the topic's route,
   * tell the brokers at once, then rebalance.
   */
  subscriptionChanged(topic?: string): void {
    const run = this.host.run();
    if (!run) return;
    void (async () => {
      if (topic !== undefined) await this.refreshRoute(topic);
      await run.instance.sendHeartbeatToAllBrokers().catch(() => {});
      run.instance.rebalanceImmediately();
    })();
  }
}
