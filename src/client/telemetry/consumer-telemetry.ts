/**
 * OpenTelemetry on the consume side: a CONSUMER span per message processed (`process <topic>` around a
 * PushConsumer's listener call, `receive <topic>` for a message LitePullConsumer or SimpleConsumer hands
 * out), a child of the producer's span carried in the message and linked to it, as the messaging
 * semantic conventions allow for single-message processing; and the consume metrics under RocketMQ 5's
 * client names (`rocketmq_process_time`, `rocketmq_consumer_cached_messages`, ...) or the conventions'
 * (`messaging.client.consumed.messages`).
 */
import type { MessageExt, MessageQueue } from '../../common/message.js';
import {
  ClientTelemetry,
  errorType,
  messageAttributes,
  MESSAGING_SYSTEM,
  recordProps,
  type ActiveTelemetry,
} from './client-telemetry.js';
import {
  SPAN_KIND_CONSUMER,
  SPAN_STATUS_ERROR,
  type OtelAttributes,
  type OtelCounter,
  type OtelHistogram,
  type OtelObservableGauge,
  type OtelObservableResult,
  type OtelSpan,
} from './otel-api.js';

/** RocketMQ 5's client buckets of rocketmq_process_time, ms. */
const PROCESS_TIME_BUCKETS_MS = [1, 5, 10, 100, 10_000, 60_000];

/** A queue the consumer holds, as the gauges read it (a ProcessQueue's counters). */
export interface ObservedQueue {
  mq: MessageQueue;
  pq: {
    /** Messages cached locally, not consumed yet. */
    msgCount: number;
    /** Their body bytes. */
    msgSize: number;
    /**
     * RocketMQ's msgAccCnt: the queue's max offset (the next offset to be written) minus the offset of
     * the last message pulled, as the last pull that returned messages saw it; 1 when that pull was
     * caught up, 0 before any.
     */
    msgAccCnt: number;
  };
}

interface Instruments {
  processTime: OtelHistogram;
  consumed: OtelCounter;
  redelivered: OtelCounter;
  inflight: OtelCounter;
  cached: OtelObservableGauge;
  cachedBytes: OtelObservableGauge;
  lag: OtelObservableGauge;
}

/** One listener call being traced; ends its spans and records the metrics when the listener has answered. */
export interface ProcessScope {
  /** Calls `fn` with the span as the active context (a single message) or as it is. */
  run<A extends unknown[], R>(fn: (...args: A) => R, ...args: A): R;
  /** `then`, ending the spans first: success unless the status is `failure`. */
  wrap<S, R>(then: (status: S, error: unknown) => R, failure: S): (status: S, error: unknown) => R;
}

export class ConsumerTelemetry extends ClientTelemetry {
  #i: Instruments | undefined;
  #queues: (() => Iterable<ObservedQueue>) | undefined;
  readonly #observeCached = (r: OtelObservableResult): void => this.#observe(r, 'cached');
  readonly #observeCachedBytes = (r: OtelObservableResult): void => this.#observe(r, 'bytes');
  readonly #observeLag = (r: OtelObservableResult): void => this.#observe(r, 'lag');

  constructor(
    logger: ConstructorParameters<typeof ClientTelemetry>[0],
    option: ConstructorParameters<typeof ClientTelemetry>[1],
    private readonly consumerGroup: string,
  ) {
    super(logger, option);
  }

  protected createInstruments(a: ActiveTelemetry): void {
    const m = a.meter;
    const i: Instruments = {
      processTime: m.createHistogram('rocketmq_process_time', {
        description: 'Time the listener took on a delivery',
        unit: 'ms',
        advice: { explicitBucketBoundaries: PROCESS_TIME_BUCKETS_MS },
      }),
      consumed: m.createCounter('messaging.client.consumed.messages', {
        description: 'Messages delivered to the application (error.type set on those it failed)',
        unit: '{message}',
      }),
      redelivered: m.createCounter('rocketmq_consume_retries', {
        description: 'Messages delivered again after a failed consumption (reconsumeTimes > 0)',
        unit: '{message}',
      }),
      inflight: m.createUpDownCounter('rocketmq_consumer_inflight_messages', {
        description: 'Messages handed to the listener that it has not answered for yet',
        unit: '{message}',
      }),
      cached: m.createObservableGauge('rocketmq_consumer_cached_messages', {
        description: 'Messages pulled and cached locally, not consumed yet',
        unit: '{message}',
      }),
      cachedBytes: m.createObservableGauge('rocketmq_consumer_cached_bytes', {
        description: 'Body bytes of the messages cached locally',
        unit: 'By',
      }),
      lag: m.createObservableGauge('rocketmq_consumer_lag_messages', {
        description: "Messages of a queue not consumed yet, from the consumer's view of the broker's max offset",
        unit: '{message}',
      }),
    };
    i.cached.addCallback(this.#observeCached);
    i.cachedBytes.addCallback(this.#observeCachedBytes);
    i.lag.addCallback(this.#observeLag);
    this.#i = i;
  }

  protected override removeInstruments(): void {
    const i = this.#i;
    this.#i = undefined;
    if (!i) return;
    i.cached.removeCallback(this.#observeCached);
    i.cachedBytes.removeCallback(this.#observeCachedBytes);
    i.lag.removeCallback(this.#observeLag);
  }

  /** The queues the gauges report (cached messages and bytes per topic, lag per queue). */
  observeQueues(queues: () => Iterable<ObservedQueue>): void {
    this.#queues = queues;
  }

  /** Starts tracing one listener call on `msgs` of `mq`; undefined when telemetry is off or fails. */
  process(msgs: readonly MessageExt[], mq: MessageQueue): ProcessScope | undefined {
    const a = this.active;
    if (!a || msgs.length === 0) return undefined;
    return this.guard(() => this.#process(a, msgs, mq));
  }

  /**
   * Messages a pull consumer hands to the application (LitePullConsumer's poll, SimpleConsumer's
   * receive): a `receive` span each, ended at once (what the application then does is its own span).
   */
  received(msgs: readonly MessageExt[]): void {
    const a = this.active;
    if (!a || msgs.length === 0) return;
    this.guard(() => {
      for (const msg of msgs) this.#startSpan(a, msg, 'receive', 'receive').end();
      this.#count(a, msgs, undefined, 'receive');
    });
  }

  #process(a: ActiveTelemetry, msgs: readonly MessageExt[], mq: MessageQueue): ProcessScope {
    const spans = msgs.map((msg) => this.#startSpan(a, msg, 'process', 'process'));
    const i = this.#i;
    i?.inflight.add(msgs.length, this.#groupAttrs(a, mq.topic));
    const startedAt = performance.now();
    const only = spans.length === 1 ? spans[0] : undefined;
    const end = (ok: boolean, error: unknown): void => {
      i?.inflight.add(-msgs.length, this.#groupAttrs(a, mq.topic));
      i?.processTime.record(performance.now() - startedAt, {
        topic: mq.topic,
        consumer_group: this.consumerGroup,
        client_id: a.clientId,
        invocation_status: ok ? 'success' : 'failure',
      });
      this.#count(a, msgs, ok ? undefined : (error ?? new Error('consume failed')), 'process');
      for (const span of spans) {
        if (!ok) {
          const type = error === undefined ? 'consume_failed' : errorType(error);
          span.setAttribute('error.type', type);
          if (error !== undefined) span.recordException(error instanceof Error ? error : String(error));
          span.setStatus({ code: SPAN_STATUS_ERROR, message: type });
        }
        span.end();
      }
    };
    return {
      run: (fn, ...args) => {
        if (!only) return fn(...args);
        const ctx = this.guard(() => a.api.trace.setSpan(a.api.context.active(), only));
        return ctx === undefined ? fn(...args) : a.api.context.with(ctx, fn, undefined, ...args);
      },
      wrap: (then, failure) => (status, error) => {
        this.guard(() => end(status !== failure, error));
        return then(status, error);
      },
    };
  }

  #startSpan(a: ActiveTelemetry, msg: MessageExt, opType: string, opName: string): OtelSpan {
    const props = msg.properties;
    const attributes: OtelAttributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.type': opType,
      'messaging.operation.name': opName,
      'messaging.destination.name': msg.topic,
      'messaging.destination.partition.id': String(msg.queueId),
      'messaging.consumer.group.name': this.consumerGroup,
      'messaging.rocketmq.client_group': this.consumerGroup,
      'messaging.client.id': a.clientId,
      'messaging.message.id': msg.msgId,
      'messaging.message.body.size': msg.body?.length ?? 0,
    };
    if (msg.reconsumeTimes > 0) attributes['messaging.rocketmq.message.reconsume_times'] = msg.reconsumeTimes;
    messageAttributes(attributes, recordProps(props));
    const creation = this.creationContext(props);
    const links = creation ? [{ context: creation }] : undefined;
    // The producer's context is the parent (one message per span) and a link, as the conventions ask.
    const parent = creation ? a.api.trace.setSpanContext(a.api.ROOT_CONTEXT, creation) : a.api.context.active();
    return a.tracer.startSpan(`${opName} ${msg.topic}`, { kind: SPAN_KIND_CONSUMER, attributes, links }, parent);
  }

  #count(a: ActiveTelemetry, msgs: readonly MessageExt[], error: unknown, opName: string): void {
    const i = this.#i;
    if (!i) return;
    const topic = msgs[0]?.topic ?? '';
    const attrs: OtelAttributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.name': opName,
      'messaging.destination.name': topic,
      'messaging.consumer.group.name': this.consumerGroup,
    };
    if (error !== undefined) attrs['error.type'] = errorType(error);
    i.consumed.add(msgs.length, attrs);
    let again = 0;
    for (const m of msgs) if (m.reconsumeTimes > 0) again++;
    if (again > 0) i.redelivered.add(again, this.#groupAttrs(a, topic));
  }

  #groupAttrs(a: ActiveTelemetry, topic: string): OtelAttributes {
    return { topic, consumer_group: this.consumerGroup, client_id: a.clientId };
  }

  #observe(r: OtelObservableResult, what: 'cached' | 'bytes' | 'lag'): void {
    const a = this.active;
    const queues = this.#queues;
    if (!a || !queues) return;
    this.guard(() => {
      if (what === 'lag') {
        for (const { mq, pq } of queues())
          r.observe(Math.max(0, pq.msgAccCnt - 1) + pq.msgCount, {
            ...this.#groupAttrs(a, mq.topic),
            broker_name: mq.brokerName,
            queue_id: mq.queueId,
          });
        return;
      }
      const perTopic = new Map<string, number>();
      for (const { mq, pq } of queues())
        perTopic.set(mq.topic, (perTopic.get(mq.topic) ?? 0) + (what === 'cached' ? pq.msgCount : pq.msgSize));
      for (const [topic, v] of perTopic) r.observe(v, this.#groupAttrs(a, topic));
    });
  }
}
