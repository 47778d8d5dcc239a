/**
 * SimpleConsumer options (RocketMQ 5's SimpleConsumerBuilder: consumer group, subscription expressions,
 * await duration), plus the usual client options: the type, frozen defaults and the resolve function.
 */
import { z } from 'zod';
import { InvalidArgumentError } from '../../../common/errors.js';
import { groupNameProblem } from '../../../common/names.js';
import {
  clientOptionsShape,
  finishClientOptions,
  instanceNameForClient,
  ms,
  parseOptions,
  type ClientOptions,
  type ResolvedClientOptions,
} from '../../instance/client-options.js';
import { traceOptionsShape, type ResolvedTraceOptions, type TraceOptions } from '../../trace/trace-options.js';
import { MessageSelector } from '../message-selector.js';

export interface SimpleConsumerOptions extends ClientOptions, TraceOptions {
  /** The consumer group. Required. */
  consumerGroup: string;
  /** Topic → selector (a MessageSelector, or a string taken as a tag expression) subscribed at start. */
  subscriptions?: Record<string, MessageSelector | string> | ReadonlyMap<string, MessageSelector | string>;
  /** How long the broker holds a `receive` that finds nothing, ms (RocketMQ 5's awaitDuration). Default 30000. */
  awaitDurationMs?: number;
  /** The invisible duration of the messages `for await` receives, ms. Default 30000. */
  invisibleDurationMs?: number;
  /** How many messages `for await` receives at once (1..32). Default 16. */
  batchSize?: number;
  /**
   * How many redeliveries a message gets: one received with more reconsumeTimes is moved to the group's
   * %DLQ% topic and acknowledged instead of returned. Brokers that move such messages themselves (the
   * bundled one, by the group's retryMaxTimes) never hand them out; RocketMQ 5's brokers leave it to the
   * consumer (their proxy does it for RocketMQ 5's own SimpleConsumer). Default 16, RocketMQ's retryMaxTimes.
   */
  maxReconsumeTimes?: number;
}

/** RocketMQ's broker refuses to pop more than this many messages at once. */
export const MAX_RECEIVE_MESSAGE_NUM = 32;
/** The longest invisible duration a broker accepts (RocketMQ proxy's maxInvisibleTimeMills: 12 hours). */
export const MAX_INVISIBLE_DURATION_MS = 12 * 3600 * 1000;

export const DEFAULT_SIMPLE_CONSUMER_OPTIONS = Object.freeze({
  awaitDurationMs: 30_000,
  invisibleDurationMs: 30_000,
  batchSize: 16,
  maxReconsumeTimes: 16,
});

const schema = z.object({
  ...clientOptionsShape,
  ...traceOptionsShape,
  consumerGroup: z.string().superRefine((v, ctx) => {
    const p = groupNameProblem(v);
    if (p) ctx.addIssue({ code: 'custom', message: p });
  }),
  subscriptions: z.unknown().optional(),
  awaitDurationMs: ms(0, 120_000).default(DEFAULT_SIMPLE_CONSUMER_OPTIONS.awaitDurationMs),
  invisibleDurationMs: ms(1, MAX_INVISIBLE_DURATION_MS).default(DEFAULT_SIMPLE_CONSUMER_OPTIONS.invisibleDurationMs),
  batchSize: z.int().min(1).max(MAX_RECEIVE_MESSAGE_NUM).default(DEFAULT_SIMPLE_CONSUMER_OPTIONS.batchSize),
  maxReconsumeTimes: z.int().min(0).default(DEFAULT_SIMPLE_CONSUMER_OPTIONS.maxReconsumeTimes),
});

export type ResolvedSimpleConsumerOptions = ResolvedClientOptions &
  ResolvedTraceOptions & {
    consumerGroup: string;
    subscriptions: ReadonlyMap<string, MessageSelector>;
    awaitDurationMs: number;
    invisibleDurationMs: number;
    batchSize: number;
    maxReconsumeTimes: number;
  };

function subscriptionsOf(v: unknown): Map<string, MessageSelector> {
  const out = new Map<string, MessageSelector>();
  if (v === undefined || v === null) return out;
  if (typeof v !== 'object') throw new InvalidArgumentError('subscriptions', 'must be an object or a Map');
  const entries = v instanceof Map ? [...(v as Map<unknown, unknown>)] : Object.entries(v);
  for (const [topic, selector] of entries) {
    if (typeof topic !== 'string' || topic === '')
      throw new InvalidArgumentError('subscriptions', 'a topic name is empty');
    try {
      out.set(topic, MessageSelector.from(selector as MessageSelector | string));
    } catch (e) {
      throw new InvalidArgumentError(`subscriptions.${topic}`, e instanceof Error ? e.message : String(e));
    }
  }
  return out;
}

/** Validates and completes SimpleConsumer options; a bad option throws InvalidArgumentError naming it. */
export function resolveSimpleConsumerOptions(options: SimpleConsumerOptions): ResolvedSimpleConsumerOptions {
  if (options === undefined || options === null)
    throw new InvalidArgumentError(
      'options',
      'SimpleConsumer options are required (at least consumerGroup and endpoints)',
    );
  const o = finishClientOptions(parseOptions(schema, options, 'SimpleConsumer'));
  return Object.freeze({
    ...o,
    instanceName: instanceNameForClient(o.instanceName),
    subscriptions: subscriptionsOf(options.subscriptions),
  });
}
