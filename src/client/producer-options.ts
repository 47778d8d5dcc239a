/**
 * Producer options (RocketMQ's DefaultMQProducer fields, units in the names): the type, frozen
 * defaults, and the one resolve function.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../common/errors.js';
import { groupNameProblem, topicNameProblem } from '../common/names.js';
import { AUTO_CREATE_TOPIC_KEY_TOPIC } from '../protocol/commands/route.js';
import {
  clientOptionsShape,
  finishClientOptions,
  instanceNameForClient,
  ms,
  parseOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from './client-options.js';

export interface ProducerOptions extends ClientOptions {
  /** The producer group (heartbeat, unregister). Default `DEFAULT_PRODUCER`. */
  producerGroup?: string;
  /** Deadline of one `send`, retries included, ms (sendMsgTimeout). Default 3000. */
  sendMsgTimeoutMs?: number;
  /** Extra attempts on another queue (preferably another broker) after a failed send. Default 2. */
  retryTimesWhenSendFailed?: number;
  /** Bodies of at least this many bytes are zlib-compressed (compressMsgBodyOverHowmuch). Default 4096. */
  compressMsgBodyOverBytes?: number;
  /** Largest body accepted, bytes (maxMessageSize). Default 4 MiB. */
  maxMessageSizeBytes?: number;
  /** Queues a topic auto-created on first send gets (defaultTopicQueueNums). Default 4. */
  defaultTopicQueueNums?: number;
  /** The template topic for auto-creation (createTopicKey). Default `TBW102`. */
  createTopicKey?: string;
  /**
   * The highest `delayTimeLevel` a send accepts: the number of levels of the broker's
   * `messageDelayLevel`. Default 18 (RocketMQ's `1s 5s 10s 30s 1m ... 2h`); a send above it is refused
   * instead of being delivered at the broker's last level.
   */
  maxDelayLevel?: number;
}

export const DEFAULT_PRODUCER_OPTIONS = Object.freeze({
  producerGroup: 'DEFAULT_PRODUCER',
  sendMsgTimeoutMs: 3000,
  retryTimesWhenSendFailed: 2,
  compressMsgBodyOverBytes: 4 * 1024,
  maxMessageSizeBytes: 4 * 1024 * 1024,
  defaultTopicQueueNums: 4,
  createTopicKey: AUTO_CREATE_TOPIC_KEY_TOPIC,
  maxDelayLevel: 18,
});

const name = (problem: (v: unknown) => string | null) =>
  z.string().superRefine((v, ctx) => {
    const p = problem(v);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });

const producerSchema = z.object({
  ...clientOptionsShape,
  producerGroup: name(groupNameProblem).default(DEFAULT_PRODUCER_OPTIONS.producerGroup),
  sendMsgTimeoutMs: ms(1).default(DEFAULT_PRODUCER_OPTIONS.sendMsgTimeoutMs),
  retryTimesWhenSendFailed: z.int().min(0).max(100).default(DEFAULT_PRODUCER_OPTIONS.retryTimesWhenSendFailed),
  compressMsgBodyOverBytes: z.int().min(0).default(DEFAULT_PRODUCER_OPTIONS.compressMsgBodyOverBytes),
  maxMessageSizeBytes: z
    .int()
    .min(1)
    .max(64 * 1024 * 1024)
    .default(DEFAULT_PRODUCER_OPTIONS.maxMessageSizeBytes),
  defaultTopicQueueNums: z.int().min(1).max(1024).default(DEFAULT_PRODUCER_OPTIONS.defaultTopicQueueNums),
  createTopicKey: name(topicNameProblem).default(DEFAULT_PRODUCER_OPTIONS.createTopicKey),
  maxDelayLevel: z.int().min(1).max(1000).default(DEFAULT_PRODUCER_OPTIONS.maxDelayLevel),
});

export type ResolvedProducerOptions = ResolvedClientOptions & {
  producerGroup: string;
  sendMsgTimeoutMs: number;
  retryTimesWhenSendFailed: number;
  compressMsgBodyOverBytes: number;
  maxMessageSizeBytes: number;
  defaultTopicQueueNums: number;
  createTopicKey: string;
  maxDelayLevel: number;
};

/** Validates and completes producer options; a bad option throws InvalidArgumentError naming it. */
export function resolveProducerOptions(options: ProducerOptions): ResolvedProducerOptions {
  if (options === undefined)
    throw new InvalidArgumentError('options', 'Producer options are required (at least endpoints)');
  const o = finishClientOptions(parseOptions(producerSchema, options, 'Producer'));
  return Object.freeze({ ...o, instanceName: instanceNameForClient(o.instanceName) });
}
