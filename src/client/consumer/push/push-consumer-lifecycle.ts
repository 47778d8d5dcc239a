/**
 * A PushConsumer's lifecycle (RocketMQ's DefaultMQPushConsumerImpl.start and shutdown): CREATE_JUST →
 * STARTING → RUNNING → SHUTTING_DOWN → SHUTDOWN, or START_FAILED. start() joins a client instance,
 * puts the parts together (push-consumer-wiring.ts), registers the consumer and is done once the
 * brokers know this member; shutdown() takes the parts apart (push-consumer-shutdown.ts). Both are
 * idempotent, and shutdown() also ends a start still waiting for its brokers.
 */
import { InvalidArgumentError, StateError } from '../../../common/errors.js';
import { retryTopic } from '../../../common/message.js';
import type { SubscriptionData } from '../../../filter/index.js';
import { buildSubscriptionDataWithType } from '../../../filter/index.js';
import { instanceNameForClient } from '../../instance/client-options.js';
import { reachBrokers } from '../../instance/client-start.js';
import { MQClientInstance } from '../../instance/mq-client-instance.js';
import { MessageModel } from '../consumer-constants.js';
import type { ConsumerRoutes } from '../consumer-routes.js';
import { Deferred } from '../consumer-startup.js';
import type { PushConsumerShutdownReport, PushConsumerState } from './push-consumer-events.js';
import { createConsumerInner, type PushConsumerHost, type PushConsumerRun } from './push-consumer-run.js';
import { releaseAfterFailedStart, shutdownRun } from './push-consumer-shutdown.js';
import type { ListenerRegistration } from './push-consumer-subscriptions.js';
import { PushConsumerTasks } from './push-consumer-tasks.js';
import { createPushConsumerRun, createPushStartup, sendMessageBackOrKeep } from './push-consumer-wiring.js';

export class PushConsumerLifecycle {
  state: PushConsumerState = 'CREATE_JUST';
  /** The started parts; undefined before start() and after a failed start. */
  run: PushConsumerRun | undefined;
  readonly ready = new Deferred<void>();
  readonly #host: PushConsumerHost;
  readonly #routes: ConsumerRoutes;
  readonly #tasks: PushConsumerTasks;
  /** Aborted at shutdown: held pulls end at once. */
  readonly #pullAbort: AbortController;
  readonly #startAbort = new AbortController();
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<PushConsumerShutdownReport> | undefined;
  readonly #onAbort = (): void => void this.shutdown(this.#host.options.shutdownTimeoutMs);
  readonly #onBrokerConnected = (brokerAddr: string): void => void this.#host.events.emit('connected', { brokerAddr });
  readonly #onBrokerDisconnected = (brokerAddr: string, error: unknown): void =>
    void this.#host.events.emit('disconnected', { brokerAddr, error });

  constructor(host: PushConsumerHost, routes: ConsumerRoutes, pullAbort: AbortController) {
    this.#host = host;
    this.#routes = routes;
    this.#pullAbort = pullAbort;
    this.#tasks = new PushConsumerTasks(host, (msg, delayLevel, mq) =>
      sendMessageBackOrKeep(host, msg, delayLevel, mq),
    );
    host.options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  /** Starts once with `listener`; the same promise while starting or running, a rejection after shutdown. */
  start(listener: ListenerRegistration | undefined, subscriptions: Map<string, SubscriptionData>): Promise<void> {
    if (this.#shutdownPromise)
      return Promise.reject(new StateError('the PushConsumer has been shut down, it can not be started again'));
    if (this.#startPromise) return this.#startPromise;
    if (this.state !== 'CREATE_JUST')
      return Promise.reject(new StateError(`the PushConsumer is ${this.state}, it can not be started`));
    this.#startPromise = this.#start(listener, subscriptions);
    return this.#startPromise;
  }

  async #start(
    listener: ListenerRegistration | undefined,
    subscriptions: Map<string, SubscriptionData>,
  ): Promise<void> {
    const o = this.#host.options;
    const logger = this.#host.logger;
    if (!listener) throw new InvalidArgumentError('listener', 'register a message listener before start()');
    if (subscriptions.size === 0)
      throw new InvalidArgumentError('subscription', 'subscribe at least one topic before start()');
    if (o.signal?.aborted) throw new StateError('the PushConsumer signal was aborted before start()');
    this.state = 'STARTING';
    if (o.messageModel === MessageModel.CLUSTERING) {
      // RocketMQ: the retry topic is subscribed with '*' (copySubscription).
      const rt = retryTopic(o.consumerGroup);
      if (!subscriptions.has(rt)) subscriptions.set(rt, buildSubscriptionDataWithType(rt, '*', 'TAG'));
    }
    const instanceName =
      o.messageModel === MessageModel.CLUSTERING ? instanceNameForClient(o.instanceName) : o.instanceName;
    const instance = MQClientInstance.acquire({ ...o, instanceName });
    const routes = this.#routes;
    try {
      this.run = await createPushConsumerRun({ host: this.#host, routes, instance, listener });
      instance.events.on('routeChanged', routes.onRouteChanged);
      instance.events.on('brokerConnected', this.#onBrokerConnected);
      instance.events.on('brokerDisconnected', this.#onBrokerDisconnected);
      instance.registerConsumer(o.consumerGroup, createConsumerInner(this.#host, routes, listener));
      await instance.start();
      // Running only once the brokers know this member: routes fetched, subscriptions checked,
      // heartbeat accepted (or a StartTimeoutError after startTimeoutMs).
      await reachBrokers({
        instance,
        what: 'PushConsumer',
        group: o.consumerGroup,
        subscriptions: () => [...subscriptions.values()],
        startTimeoutMs: o.startTimeoutMs,
        clock: o.clock,
        logger,
        signal: this.#startAbort.signal,
      });
      this.state = 'RUNNING';
      this.run.startup = createPushStartup(this.#host, instance, this.ready);
      this.#tasks.start();
      instance.rebalanceImmediately(true);
    } catch (err) {
      this.state = 'START_FAILED';
      this.ready.reject(err);
      instance.events.off('routeChanged', routes.onRouteChanged);
      instance.events.off('brokerConnected', this.#onBrokerConnected);
      instance.events.off('brokerDisconnected', this.#onBrokerDisconnected);
      this.#tasks.stop();
      this.#host.telemetry.stop();
      await releaseAfterFailedStart(instance, this.run?.pulls, o.consumerGroup, logger);
      this.run = undefined;
      throw err;
    }
  }

  /** Shuts down once; every call returns the same promise (the first call's `timeoutMs` counts). */
  shutdown(timeoutMs: number): Promise<PushConsumerShutdownReport> {
    this.#shutdownPromise ??= this.#shutdown(timeoutMs);
    return this.#shutdownPromise;
  }

  async #shutdown(timeoutMs: number): Promise<PushConsumerShutdownReport> {
    const o = this.#host.options;
    const logger = this.#host.logger;
    o.signal?.removeEventListener('abort', this.#onAbort);
    // A start still waiting for its brokers gives up now.
    this.#startAbort.abort();
    if (this.#startPromise) await this.#startPromise.catch(() => {});
    const notReady = new StateError('the PushConsumer was shut down before it was ready');
    this.ready.reject(notReady);
    this.run?.startup?.end(notReady);
    const run = this.run;
    if (!run || this.state !== 'RUNNING') {
      this.state = 'SHUTDOWN';
      return { unfinishedListeners: 0, droppedConsumeRequests: 0, errors: [] };
    }
    const deadline = o.clock.now() + timeoutMs;
    this.state = 'SHUTTING_DOWN';
    this.#tasks.stop();
    run.instance.events.off('brokerConnected', this.#onBrokerConnected);
    run.instance.events.off('brokerDisconnected', this.#onBrokerDisconnected);
    const report = await shutdownRun(run, {
      deadline,
      consumerGroup: o.consumerGroup,
      logger,
      pullAbort: this.#pullAbort,
      onRouteChanged: this.#routes.onRouteChanged,
    });
    this.state = 'SHUTDOWN';
    this.#host.telemetry.stop();
    if (report.unfinishedListeners > 0 || report.droppedConsumeRequests > 0)
      logger.warn(report, 'PushConsumer shut down with unfinished work (it will be delivered again)');
    return report;
  }
}
