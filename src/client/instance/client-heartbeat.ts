/**
 * What a client instance tells the brokers about itself (RocketMQ's sendHeartbeatToAllBroker,
 * checkClientInBroker and unregisterClient in MQClientInstance): the heartbeat naming every consumer
 * group with its subscriptions and every producer group, the subscription check a consumer's start
 * asks for, and the UNREGISTER_CLIENT sent when a group leaves.
 */
import type { Logger } from '../../common/logger.js';
import type { ConsumerDataWire, HeartbeatData, SubscriptionDataWire } from '../../protocol/commands/index.js';
import type { MQClientAPI } from './mq-client-api.js';
import type { MQConsumerInner, SubscriptionDataLike } from './mq-consumer-inner.js';

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

export function toWireSubscription(sd: SubscriptionDataLike): SubscriptionDataWire {
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

export interface ClientHeartbeatDeps {
  api: MQClientAPI;
  clientId: string;
  logger: Logger;
  consumers(): readonly MQConsumerInner[];
  producerGroups(): readonly string[];
  /** The broker addresses known from the routes: every one, or only the masters. */
  brokerAddrs(onlyMasters: boolean): string[];
  isShutdown(): boolean;
  /** A heartbeat of `sendToAllBrokers` to one broker failed (already logged). */
  heartbeatFailed(addr: string, err: unknown): void;
}

export class ClientHeartbeat {
  readonly #d: ClientHeartbeatDeps;
  #running: Promise<void> | undefined;
  #queued: Promise<void> | undefined;

  constructor(deps: ClientHeartbeatDeps) {
    this.#d = deps;
  }

  /** RocketMQ's HeartbeatData for this instance: every consumer group with its subscriptions, every producer group. */
  data(): HeartbeatData {
    const consumerDataSet: ConsumerDataWire[] = this.#d.consumers().map((c) => ({
      groupName: c.groupName(),
      consumeType: c.consumeType(),
      messageModel: c.messageModel(),
      consumeFromWhere: c.consumeFromWhere() as ConsumerDataWire['consumeFromWhere'],
      subscriptionDataSet: c.subscriptions().map(toWireSubscription),
      unitMode: false,
    }));
    const producerDataSet = this.#d.producerGroups().map((groupName) => ({ groupName }));
    return { clientID: this.#d.clientId, consumerDataSet, producerDataSet };
  }

  /**
   * Sends one heartbeat to every broker known from the routes (only masters when there are no
   * consumers). Calls made while one is running are coalesced into one more run after it.
   */
  sendToAllBrokers(): Promise<void> {
    if (this.#running) {
      this.#queued ??= this.#running.then(() => {
        this.#queued = undefined;
        return this.sendToAllBrokers();
      });
      return this.#queued;
    }
    this.#running = this.#once().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  async #once(): Promise<void> {
    if (this.#d.isShutdown()) return;
    const consumers = this.#d.consumers().length;
    if (consumers === 0 && this.#d.producerGroups().length === 0) return;
    const data = this.data();
    await Promise.all(
      this.#d.brokerAddrs(consumers === 0).map((addr) =>
        this.#d.api.sendHeartbeat(addr, data).catch((err: unknown) => {
          this.#d.logger.warn({ err, addr }, 'heartbeat failed');
          this.#d.heartbeatFailed(addr, err);
        }),
      ),
    );
  }

  /**
   * Sends the heartbeat to each of `addrs` and resolves when every one accepted it; rejects with the
   * first failure as an AddressedFailure.
   */
  async sendOrThrow(addrs: readonly string[]): Promise<void> {
    const data = this.data();
    await Promise.all(
      addrs.map((addr) =>
        this.#d.api.sendHeartbeat(addr, data).catch((err: unknown) => {
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
          this.#d.api
            .checkClientInBroker(addr, { clientId: this.#d.clientId, group, subscriptionData })
            .catch((err: unknown) => {
              throw new AddressedFailure(addr, err, sd.topic);
            }),
        );
    }
    await Promise.all(checks);
  }

  /** UNREGISTER_CLIENT for one producer or consumer group, to every broker known; failures are logged. */
  async unregister(producerGroup: string | undefined, consumerGroup: string | undefined): Promise<void> {
    await Promise.allSettled(
      this.#d.brokerAddrs(false).map((addr) =>
        this.#d.api.unregisterClient(addr, this.#d.clientId, { producerGroup, consumerGroup }).catch((err: unknown) => {
          this.#d.logger.warn({ err, addr, producerGroup, consumerGroup }, 'unregister client failed');
        }),
      ),
    );
  }
}
