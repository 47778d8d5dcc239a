/**
 * What a PushConsumer consumes and with which listener (RocketMQ's RebalanceImpl.subscriptionInner and
 * DefaultMQPushConsumer.registerMessageListener): the subscription table, the change of a subscription
 * on a running consumer (told to the brokers at once by a heartbeat, its topic's held pulls sent again
 * with the new selector), and the checks a listener passes when it is registered.
 */
import { InvalidArgumentError, StateError } from '../../../common/errors.js';
import type { Clock } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import { topicNameProblem } from '../../../common/names.js';
import { buildSubscriptionDataWithType, type SubscriptionData } from '../../../filter/index.js';
import { AddressedFailure } from '../../instance/mq-client-instance.js';
import type { ConsumerRoutes } from '../consumer-routes.js';
import { MessageSelector } from '../message-selector.js';
import type { MessageListenerConcurrently } from './consume-message-concurrently-service.js';
import type { MessageListenerOrderly, OrderlyListenerOptions } from './consume-message-orderly-service.js';
import type { PushConsumerListener } from './push-consumer-events.js';
import type { PushConsumerRun } from './push-consumer-run.js';

/** The listener a PushConsumer was given, checked. */
export type ListenerRegistration =
  | { orderly: false; fn: MessageListenerConcurrently }
  | { orderly: true; fn: MessageListenerOrderly; keyConcurrency: number | undefined };

/** `registerMessageListener`'s argument as a function; throws when it is neither shape. */
export function concurrentlyListener(listener: PushConsumerListener): ListenerRegistration {
  if (typeof listener === 'function') return { orderly: false, fn: listener };
  if (listener && typeof listener.consumeMessage === 'function')
    return { orderly: false, fn: (msgs, ctx) => listener.consumeMessage(msgs, ctx) };
  throw new InvalidArgumentError('listener', 'must be a function or an object with consumeMessage()');
}

/** `registerMessageListenerOrderly`'s arguments, checked. */
export function orderlyListener(
  listener: MessageListenerOrderly | { consumeMessage: MessageListenerOrderly },
  options: OrderlyListenerOptions,
): ListenerRegistration {
  let fn: MessageListenerOrderly;
  if (typeof listener === 'function') fn = listener;
  else if (listener && typeof listener.consumeMessage === 'function')
    fn = (msgs, ctx) => listener.consumeMessage(msgs, ctx);
  else throw new InvalidArgumentError('listener', 'must be a function or an object with consumeMessage()');
  const k = options.keyConcurrency;
  if (k !== undefined && (!Number.isInteger(k) || k < 1 || k > 10_000))
    throw new InvalidArgumentError('keyConcurrency', 'must be an integer from 1 to 10000');
  return { orderly: true, fn, keyConcurrency: k };
}

/** The subscription table of one PushConsumer and the pull signals of its topics. */
export class PushConsumerSubscriptions {
  /** Topic → subscription (the retry topic included once started in CLUSTERING). */
  readonly table = new Map<string, SubscriptionData>();
  readonly #pullSignal: AbortSignal;
  /** Per topic: aborts that topic's pulls (subscription change); all of them abort at shutdown. */
  readonly #topicAborts = new Map<string, AbortController>();
  /** The subscription changes made while running, each done once every broker accepted the heartbeat. */
  #sync: Promise<void> = Promise.resolve();

  /** `pullSignal` aborts every topic's pulls (shutdown). */
  constructor(pullSignal: AbortSignal) {
    this.#pullSignal = pullSignal;
    pullSignal.addEventListener(
      'abort',
      () => {
        for (const c of this.#topicAborts.values()) c.abort(pullSignal.reason);
      },
      { once: true },
    );
  }

  /** Sets the subscription of `topic`, replacing an earlier one. */
  subscribe(topic: string, selector: MessageSelector | string, clock: Clock): void {
    const problem = topicNameProblem(topic);
    if (problem) throw new InvalidArgumentError('topic', problem);
    const sel = MessageSelector.from(selector);
    const sd = buildSubscriptionDataWithType(topic, sel.expression, sel.expressionType);
    // A newer version than the one it replaces, even within the same millisecond: the broker keeps the newest.
    sd.subVersion = Math.max(clock.now(), (this.table.get(topic)?.subVersion ?? 0) + 1);
    this.table.set(topic, sd);
  }

  /** Resolves once every change made on the running consumer has been accepted by the brokers. */
  applied(): Promise<void> {
    return this.#sync;
  }

  /** The signal of the pulls of `topic`: aborted at shutdown and when the topic's subscription changes. */
  topicPullSignal(topic: string): AbortSignal {
    let c = this.#topicAborts.get(topic);
    if (!c) {
      c = new AbortController();
      if (this.#pullSignal.aborted) c.abort(this.#pullSignal.reason);
      this.#topicAborts.set(topic, c);
    }
    return c.signal;
  }

  /** The topic's held pulls come back now (and go out again with the current subscription). */
  #restartTopicPulls(topic: string): void {
    const c = this.#topicAborts.get(topic);
    this.#topicAborts.delete(topic);
    c?.abort(new StateError(`the subscription of ${topic} changed`));
  }

  /**
   * Tells the brokers about a change of `topic`'s subscription (RocketMQ sends a heartbeat at once),
   * after the changes before it; a failure is logged (the regular heartbeat tells them later) and
   * rejects `applied()`.
   */
  applyChange(run: PushConsumerRun, routes: ConsumerRoutes, topic: string, added: boolean, logger: Logger): void {
    const previous = this.#sync.catch(() => undefined);
    this.#sync = (async () => {
      await previous;
      if (added) await routes.refreshRoute(topic);
      try {
        await run.instance.heartbeatOrThrow(run.instance.masterBrokerAddrs());
      } catch (err) {
        throw err instanceof AddressedFailure ? err.error : err;
      } finally {
        // Held pulls filtered with the old subscription come back now and go out with the new one.
        this.#restartTopicPulls(topic);
        run.instance.rebalanceImmediately();
      }
    })();
    this.#sync.catch((err: unknown) =>
      logger.warn({ err, topic }, 'telling the brokers about a subscription change failed'),
    );
  }
}
