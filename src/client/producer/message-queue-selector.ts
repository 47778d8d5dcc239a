/**
 * Choosing the queue of an ordered send (RocketMQ's MessageQueueSelector): every message sent with the
 * same key goes to the same queue, so a consumer sees them in send order.
 * @pure
 */
import { tagsHashCode } from '../../common/codec/java-string.js';
import type { Message, MessageQueue } from '../../common/message.js';

/** Picks one of `mqs` (the topic's writable queues, in route order) for `message`, given `arg`. */
export type MessageQueueSelector =
  | ((mqs: readonly MessageQueue[], message: Message, arg: unknown) => MessageQueue)
  | { select(mqs: readonly MessageQueue[], message: Message, arg: unknown): MessageQueue };

/**
 * RocketMQ's SelectMessageQueueByHash: `abs(arg.hashCode() % queueCount)`, with Java's String.hashCode
 * for a string argument (numbers are hashed as their decimal string).
 */
export const SelectMessageQueueByHash = Object.freeze({
  select(mqs: readonly MessageQueue[], _message: Message, arg: unknown): MessageQueue {
    const value = tagsHashCode(String(arg)) % mqs.length;
    return mqs[Math.abs(value)]!;
  },
});

/** RocketMQ's SelectMessageQueueByRandom. */
export const SelectMessageQueueByRandom = Object.freeze({
  select(mqs: readonly MessageQueue[]): MessageQueue {
    return mqs[Math.floor(Math.random() * mqs.length)]!;
  },
});

/** Runs a selector of either shape. */
export function runSelector(
  selector: MessageQueueSelector,
  mqs: readonly MessageQueue[],
  message: Message,
  arg: unknown,
): MessageQueue {
  return typeof selector === 'function' ? selector(mqs, message, arg) : selector.select(mqs, message, arg);
}
