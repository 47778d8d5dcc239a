/**
 * Producer options (RocketMQ's DefaultMQProducer fields, units in the names): the type, frozen
 * defaults, and the one resolve function.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../common/errors.js';
import { groupNameProblem, topicNameProblem } from '../../common/names.js';
import { AUTO_CREATE_TOPIC_KEY_TOPIC } from '../../protocol/commands/route.js';
import {
  clientOptionsShape,
  finishClientOptions,
  instanceNameForClient,
  ms,
  parseOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from '../instance/client-options.js';
import { traceOptionsShape, type ResolvedTraceOptions, type TraceOptions } from '../trace/trace-options.js';

export interface ProducerOptions extends ClientOptions, TraceOptions {
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
  /**
   * Avoid brokers that failed or answered slowly for a while when choosing a queue (RocketMQ's
   * sendLatencyFaultEnable): a failed send keeps its broker out of the rotation for up to 10 minutes
   * while another broker is available. Default true (RocketMQ's default is false).
   */
  sendLatencyFaultEnable?: boolean;
  /**
   * Auto-batching: plain sends of one topic made in the same turn of the event loop (a loop that does
   * not await each send, `Promise.all(messages.map((m) => producer.send(m)))`, many requests of an app
   * handled in one turn) travel together as one SEND_BATCH_MESSAGE: stored in order on one queue, each
   * send still resolving with its own SendResult (its msgId, offsetMsgId and queue offset). Under load
   * this cuts the requests, and the CPU per message, of the producer and the broker; a send that is
   * awaited before the next one is made goes alone, as without it. Nothing waits for a later turn.
   *
   * Sent alone, always: a send with `shardingKey`, `selector`, `signal` or `timeoutMs`, a delayed
   * message, a retry topic's message, a body compressed by `compressMsgBodyOverBytes`, a message with
   * `WAIT` set to anything but `true`. A batch's attempt fails or succeeds for all of its sends, and a
   * retry moves all of them to another queue.
   *
   * The trade-off: a burst of sends lands on fewer queues (a batch is one queue's), so with a slow
   * listener fewer consumers of a group share it. `false` sends every message in a request of its own,
   * round robin over the queues message by message. Default `{ maxMessages: 32, maxBytes: 32768 }`
   * (`maxBytes` counts the batch body: each message's body and properties plus 22 bytes).
   */
  autoBatch?: boolean | { maxMessages?: number; maxBytes?: number };
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
  sendLatencyFaultEnable: true,
  autoBatch: Object.freeze({ maxMessages: 32, maxBytes: 32 * 1024 }),
});

const name = (problem: (v: unknown) => string | null) =>
  z.string().superRefine((v, ctx) => {
    const p = problem(v);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  });

const producerSchema = z.object({
  ...clientOptionsShape,
  ...traceOptionsShape,
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
  sendLatencyFaultEnable: z.boolean().default(DEFAULT_PRODUCER_OPTIONS.sendLatencyFaultEnable),
  autoBatch: z
    .union([
      z.boolean(),
      z
        .object({
          maxMessages: z.int().min(1).max(1024).optional(),
          maxBytes: z.int().min(1).optional(),
        })
        .strict(),
    ])
    .default(true),
});

export type ResolvedProducerOptions = ResolvedClientOptions &
  ResolvedTraceOptions & {
    producerGroup: string;
    sendMsgTimeoutMs: number;
    retryTimesWhenSendFailed: number;
    compressMsgBodyOverBytes: number;
    maxMessageSizeBytes: number;
    defaultTopicQueueNums: number;
    createTopicKey: string;
    maxDelayLevel: number;
    sendLatencyFaultEnable: boolean;
    /** The auto-batching limits, or false when every send goes alone. */
    autoBatch: { readonly maxMessages: number; readonly maxBytes: number } | false;
  };

/** Validates and completes producer options; a bad option throws InvalidArgumentError naming it. */
export function resolveProducerOptions(options: ProducerOptions): ResolvedProducerOptions {
  if (options === undefined)
    throw new InvalidArgumentError('options', 'Producer options are required (at least endpoints or namesrvAddr)');
  const { autoBatch, ...o } = finishClientOptions(parseOptions(producerSchema, options, 'Producer'));
  return Object.freeze({
    ...o,
    instanceName: instanceNameForClient(o.instanceName),
    autoBatch: autoBatchLimits(autoBatch, o.maxMessageSizeBytes),
  });
}

function autoBatchLimits(
  value: boolean | { maxMessages?: number | undefined; maxBytes?: number | undefined },
  maxMessageSizeBytes: number,
): ResolvedProducerOptions['autoBatch'] {
  if (value === false) return false;
  const given = value === true ? {} : value;
  const defaults = DEFAULT_PRODUCER_OPTIONS.autoBatch;
  const maxBytes = given.maxBytes ?? Math.min(defaults.maxBytes, maxMessageSizeBytes);
  // The broker refuses a batch body over its message size limit, as the producer's own sendBatch does.
  if (maxBytes > maxMessageSizeBytes)
    throw new InvalidArgumentError(
      'autoBatch.maxBytes',
      `${maxBytes} is over maxMessageSizeBytes (${maxMessageSizeBytes}) (Producer option)`,
    );
  return Object.freeze({ maxMessages: given.maxMessages ?? defaults.maxMessages, maxBytes });
}
