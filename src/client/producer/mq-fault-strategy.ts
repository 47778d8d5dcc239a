/**
 * Which queue a send attempt goes to. A plain send goes round robin over the topic's writable queues,
 * avoiding the broker of the previous failed attempt and, with `sendLatencyFaultEnable`, brokers that
 * failed or answered slowly lately (RocketMQ's MQFaultStrategy over LatencyFaultTolerance). An ordered
 * send (`shardingKey`, or `selector` with `arg`) goes to the queue its selector picks, every attempt.
 */
import { InvalidArgumentError } from '../../common/errors.js';
import type { Message, MessageQueue } from '../../common/message.js';
import type { TopicPublishInfo } from '../instance/mq-client-instance.js';
import { LatencyFaultTolerance } from './latency-fault-tolerance.js';
import { runSelector, SelectMessageQueueByHash } from './message-queue-selector.js';
import type { SendOptions } from './producer-types.js';

/** RocketMQ's MQFaultStrategy: round-robin queue selection that steers around unhealthy brokers. */
export class MQFaultStrategy {
  readonly #faults: LatencyFaultTolerance;
  /** The round-robin position per topic (RocketMQ keeps it on TopicPublishInfo as sendWhichQueue). */
  readonly #sendWhichQueue = new Map<string, number>();
  readonly #sendLatencyFaultEnable: boolean;

  constructor(now: () => number, sendLatencyFaultEnable: boolean) {
    this.#faults = new LatencyFaultTolerance(now);
    this.#sendLatencyFaultEnable = sendLatencyFaultEnable;
  }

  /**
   * Round robin, avoiding `lastBrokerName` when another broker has a queue (RocketMQ's
   * selectOneMessageQueue); with `sendLatencyFaultEnable`, also avoiding brokers that failed or were
   * slow lately.
   */
  selectOneMessageQueue(info: TopicPublishInfo, lastBrokerName: string | undefined): MessageQueue {
    const mqs = info.messageQueues;
    let index = this.#sendWhichQueue.get(info.topic) ?? Math.floor(Math.random() * 1024);
    if (this.#sendLatencyFaultEnable) {
      const picked = this.#faults.select(mqs, index, lastBrokerName);
      this.#sendWhichQueue.set(info.topic, picked.index);
      return picked.mq;
    }
    const next = (): MessageQueue => {
      index = (index + 1) & 0x7fffffff;
      return mqs[index % mqs.length]!;
    };
    let mq = next();
    if (lastBrokerName !== undefined) {
      for (let i = 0; i < mqs.length && mq.brokerName === lastBrokerName; i++) mq = next();
    }
    this.#sendWhichQueue.set(info.topic, index);
    return mq;
  }

  /** Records how an attempt on `brokerName` went (RocketMQ's updateFaultItem; `isolation` when it failed). */
  updateFaultItem(brokerName: string, latencyMs: number, isolation: boolean): void {
    this.#faults.update(brokerName, latencyMs, isolation);
  }
}

/** The queue choice of an ordered send (`shardingKey`, or `selector` with `arg`), or undefined. */
export function orderedChoice(
  message: Message,
  opts: SendOptions,
): ((mqs: readonly MessageQueue[]) => MessageQueue) | undefined {
  const { shardingKey, selector } = opts;
  if (shardingKey !== undefined) {
    if (selector !== undefined)
      throw new InvalidArgumentError('selector', 'give either shardingKey or selector, not both');
    if (typeof shardingKey !== 'string' || shardingKey.length === 0)
      throw new InvalidArgumentError('shardingKey', 'must be a non-empty string');
    if (shardingKey.includes('\u0001') || shardingKey.includes('\u0002'))
      throw new InvalidArgumentError('shardingKey', 'must not contain the characters \\u0001 or \\u0002');
    return (mqs) => SelectMessageQueueByHash.select(mqs, message, shardingKey);
  }
  if (selector === undefined) return undefined;
  if (typeof selector !== 'function' && (typeof selector !== 'object' || typeof selector.select !== 'function'))
    throw new InvalidArgumentError('selector', 'must be a function or an object with select()');
  return (mqs) => runSelector(selector, mqs, message, opts.arg);
}

/** Runs an ordered send's choice and checks that it picked one of the topic's queues. */
export function chosenQueue(
  choose: (mqs: readonly MessageQueue[]) => MessageQueue,
  mqs: readonly MessageQueue[],
): MessageQueue {
  const picked = choose(mqs);
  const mq = mqs.find(
    (q) => q.queueId === picked?.queueId && q.brokerName === picked.brokerName && q.topic === picked.topic,
  );
  if (!mq) throw new InvalidArgumentError('selector', 'the selector must return one of the queues it was given');
  return mq;
}
