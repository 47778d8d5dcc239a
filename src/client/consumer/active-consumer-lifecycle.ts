/**
 * The lifecycle the consumers driven by their caller (PullConsumer, SimpleConsumer) share: start joins
 * the client instance and registers the group, shutdown aborts what is in flight and gives both back.
 * They take no part in a rebalance, so this is all of their MQClientInstance bookkeeping; the push and
 * lite consumers have their own, with rebalance and offset persistence in it.
 */
import { StateError } from '../../common/errors.js';
import type { Logger } from '../../common/logger.js';
import type { ResolvedClientOptions } from '../instance/client-options.js';
import { MQClientInstance } from '../instance/mq-client-instance.js';
import type { MQConsumerInner } from '../instance/mq-consumer-inner.js';

export type ActiveConsumerState = 'CREATE_JUST' | 'STARTING' | 'RUNNING' | 'SHUTDOWN';

export interface ActiveConsumerLifecycleOptions<T> {
  /** The consumer as its errors and logs name it, e.g. 'pull consumer'. */
  name: string;
  clientOptions: ResolvedClientOptions & { consumerGroup: string };
  logger: Logger;
  /**
   * What the heartbeat announces of the consumer. The rest of the MQConsumerInner registered under the
   * group is the same for both: no rebalance, no offsets kept on the client, no route of its own to follow.
   */
  inner: Pick<MQConsumerInner, 'messageModel' | 'consumeType' | 'subscriptions'>;
  /** What the consumer needs while it runs, made once the instance has started. */
  attach: (instance: MQClientInstance) => T;
  /** Runs at shutdown before the instance is released (the message trace flushes there). */
  detach?: ((attached: T) => Promise<void> | void) | undefined;
  /** The reason calls in flight are aborted with at shutdown. */
  shutdownReason: () => unknown;
}

export class ActiveConsumerLifecycle<T> {
  readonly #o: ActiveConsumerLifecycleOptions<T>;
  #state: ActiveConsumerState = 'CREATE_JUST';
  #instance: MQClientInstance | undefined;
  #attached: T | undefined;
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<void> | undefined;
  readonly #shutdownController = new AbortController();

  constructor(options: ActiveConsumerLifecycleOptions<T>) {
    this.#o = options;
  }

  get state(): ActiveConsumerState {
    return this.#state;
  }

  /** The client instance while the consumer holds one. */
  get instance(): MQClientInstance | undefined {
    return this.#instance;
  }

  /** Aborted at shutdown. */
  get shutdownSignal(): AbortSignal {
    return this.#shutdownController.signal;
  }

  /** True once shutdown() has been called. */
  get shutdownCalled(): boolean {
    return this.#shutdownPromise !== undefined;
  }

  /** Joins (or creates) the client instance and registers the group. Idempotent. */
  start(): Promise<void> {
    if (this.#state === 'SHUTDOWN') return Promise.reject(new StateError(`the ${this.#o.name} has been shut down`));
    this.#startPromise ??= this.#start();
    return this.#startPromise;
  }

  async #start(): Promise<void> {
    this.#state = 'STARTING';
    const group = this.#o.clientOptions.consumerGroup;
    const instance = MQClientInstance.acquire(this.#o.clientOptions);
    const { messageModel, consumeType, subscriptions } = this.#o.inner;
    const inner: MQConsumerInner = {
      groupName: () => group,
      messageModel,
      consumeType,
      consumeFromWhere: () => 'CONSUME_FROM_LAST_OFFSET',
      subscriptions,
      doRebalance: async () => undefined,
      persistConsumerOffset: async () => undefined,
      updateTopicSubscribeInfo: () => undefined,
      isSubscribeTopicNeedUpdate: () => false,
    };
    try {
      instance.registerConsumer(group, inner);
      await instance.start();
    } catch (err) {
      await instance.unregisterConsumer(group).catch(() => undefined);
      await instance.release();
      this.#state = 'SHUTDOWN';
      throw err;
    }
    this.#instance = instance;
    this.#attached = this.#o.attach(instance);
    if (this.#state === 'STARTING') this.#state = 'RUNNING';
  }

  /** What `attach` made; throws a StateError unless the consumer is running. */
  running(): T {
    if (this.#state !== 'RUNNING' || !this.#instance || this.#attached === undefined)
      throw new StateError(
        this.#state === 'SHUTDOWN'
          ? `the ${this.#o.name} has been shut down`
          : `the ${this.#o.name} is not started: call start() first`,
      );
    return this.#attached;
  }

  /** Aborts calls in flight, unregisters the group and releases the client instance. Idempotent. */
  shutdown(): Promise<void> {
    this.#shutdownPromise ??= this.#shutdown();
    return this.#shutdownPromise;
  }

  async #shutdown(): Promise<void> {
    const starting = this.#startPromise;
    this.#state = 'SHUTDOWN';
    this.#shutdownController.abort(this.#o.shutdownReason());
    if (starting) await starting.catch(() => undefined);
    const instance = this.#instance;
    const attached = this.#attached;
    this.#instance = undefined;
    this.#attached = undefined;
    if (!instance) return;
    try {
      if (attached !== undefined) await this.#o.detach?.(attached);
    } catch (err) {
      this.#o.logger.warn({ err }, `detaching the ${this.#o.name} failed`);
    }
    try {
      await instance.unregisterConsumer(this.#o.clientOptions.consumerGroup);
    } catch (err) {
      this.#o.logger.warn({ err }, `unregistering the ${this.#o.name} failed`);
    }
    await instance.release();
  }
}
