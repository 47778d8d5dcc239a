/**
 * OpenTelemetry on the send path: a PRODUCER span per send (`send <topic>`, the messaging semantic
 * conventions' attributes), whose context goes into the message as W3C `traceparent`/`tracestate` user
 * properties, and the send metrics under RocketMQ 5's client names where it has them
 * (`rocketmq_send_cost_time`) and the conventions' names otherwise (`messaging.client.sent.messages`).
 */
import type { Message } from '../../common/message.js';
import { messageProperties2String } from '../../common/codec/index.js';
import {
  ClientTelemetry,
  errorType,
  messageAttributes,
  messageType,
  MESSAGING_SYSTEM,
  type ActiveTelemetry,
} from './client-telemetry.js';
import {
  SPAN_KIND_PRODUCER,
  SPAN_STATUS_ERROR,
  type OtelAttributes,
  type OtelCounter,
  type OtelHistogram,
  type OtelSpan,
} from './otel-api.js';
import { formatTraceparent, isValidSpanContext, TRACEPARENT, TRACESTATE } from './trace-context.js';

/** RocketMQ 5's client buckets of rocketmq_send_cost_time, ms. */
const SEND_COST_BUCKETS_MS = [1, 5, 10, 20, 50, 200, 500];

/** The request of one message, as the producer builds it (header properties re-encoded after injection). */
export interface TracedSendRequest {
  header: { topic: string; properties?: string | undefined };
  props: Map<string, string>;
  uniqId: string;
}

/** What a send resolves with, as far as the span reads it. */
export interface TracedSendResult {
  msgId: string;
  messageQueue: { queueId: number; brokerName: string };
}

interface Instruments {
  sendCost: OtelHistogram;
  sent: OtelCounter;
  retries: OtelCounter;
}

export class ProducerTelemetry extends ClientTelemetry {
  #i: Instruments | undefined;

  constructor(
    logger: ConstructorParameters<typeof ClientTelemetry>[0],
    option: ConstructorParameters<typeof ClientTelemetry>[1],
    private readonly producerGroup: string,
  ) {
    super(logger, option);
  }

  protected createInstruments(a: ActiveTelemetry): void {
    this.#i = {
      sendCost: a.meter.createHistogram('rocketmq_send_cost_time', {
        description: 'Time a send took until the broker answered (every attempt included)',
        unit: 'ms',
        advice: { explicitBucketBoundaries: SEND_COST_BUCKETS_MS },
      }),
      sent: a.meter.createCounter('messaging.client.sent.messages', {
        description: 'Messages a producer sent (error.type set on the sends that failed)',
        unit: '{message}',
      }),
      retries: a.meter.createCounter('rocketmq_send_retries', {
        description: 'Send attempts that failed with a retriable error and were tried again',
        unit: '{attempt}',
      }),
    };
  }

  /** Traces one message's send: `run` sends `req`, which carries the span's context when one is recorded. */
  send<R extends TracedSendResult>(req: TracedSendRequest, run: () => Promise<R>): Promise<R> {
    const a = this.active;
    if (!a) return run();
    const topic = req.header.topic;
    const span = this.guard(() => this.#startSpan(a, topic, req.props, 1, req.uniqId));
    if (span) this.guard(() => this.#inject(span, req));
    return this.#settle(a, span, topic, 1, run);
  }

  /**
   * Traces a batch send: one span for the batch, whose context each message carries (`run` gets the
   * messages to encode, copies with the trace properties when a span is recorded).
   */
  sendBatch<R extends TracedSendResult>(
    messages: readonly Message[],
    run: (messages: readonly Message[]) => Promise<R>,
  ): Promise<R> {
    const a = this.active;
    const first = messages[0];
    if (!a || !first) return run(messages);
    const topic = first.topic;
    const span = this.guard(() => this.#startSpan(a, topic, new Map(), messages.length, undefined));
    const carried = span ? (this.guard(() => withTraceProperties(messages, span)) ?? messages) : messages;
    return this.#settle(a, span, topic, messages.length, () => run(carried));
  }

  /** A send attempt failed with a retriable error and the send goes on (ProducerSender's retry loop). */
  retried(topic: string): void {
    const i = this.#i;
    if (!this.active || !i) return;
    this.guard(() => i.retries.add(1, { 'messaging.system': MESSAGING_SYSTEM, 'messaging.destination.name': topic }));
  }

  #startSpan(
    a: ActiveTelemetry,
    topic: string,
    props: Map<string, string>,
    count: number,
    msgId: string | undefined,
  ): OtelSpan {
    const attributes: OtelAttributes = {
      'messaging.system': MESSAGING_SYSTEM,
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': topic,
      'messaging.rocketmq.client_group': this.producerGroup,
      'messaging.client.id': a.clientId,
      'messaging.rocketmq.message.type': messageType(props),
    };
    if (msgId !== undefined) attributes['messaging.message.id'] = msgId;
    if (count > 1) attributes['messaging.batch.message_count'] = count;
    messageAttributes(attributes, props);
    const delay = props.get('DELAY');
    if (delay !== undefined) attributes['messaging.rocketmq.message.delay_time_level'] = Number(delay);
    return a.tracer.startSpan(`send ${topic}`, { kind: SPAN_KIND_PRODUCER, attributes }, a.api.context.active());
  }

  #inject(span: OtelSpan, req: TracedSendRequest): void {
    const sc = span.spanContext();
    if (!isValidSpanContext(sc)) return;
    req.props.set(TRACEPARENT, formatTraceparent(sc));
    const state = sc.traceState?.serialize();
    if (state) req.props.set(TRACESTATE, state);
    else req.props.delete(TRACESTATE);
    req.header.properties = messageProperties2String(req.props);
  }

  async #settle<R extends TracedSendResult>(
    a: ActiveTelemetry,
    span: OtelSpan | undefined,
    topic: string,
    count: number,
    run: () => Promise<R>,
  ): Promise<R> {
    const startedAt = performance.now();
    let result: R;
    try {
      result = await run();
    } catch (err) {
      this.guard(() => this.#record(a, span, topic, count, startedAt, undefined, err));
      throw err;
    }
    this.guard(() => this.#record(a, span, topic, count, startedAt, result, undefined));
    return result;
  }

  #record(
    a: ActiveTelemetry,
    span: OtelSpan | undefined,
    topic: string,
    count: number,
    startedAt: number,
    result: TracedSendResult | undefined,
    err: unknown,
  ): void {
    const i = this.#i;
    const failed = result === undefined;
    if (i) {
      i.sendCost.record(performance.now() - startedAt, {
        topic,
        client_id: a.clientId,
        invocation_status: failed ? 'failure' : 'success',
      });
      const attrs: OtelAttributes = {
        'messaging.system': MESSAGING_SYSTEM,
        'messaging.operation.name': 'send',
        'messaging.destination.name': topic,
      };
      if (failed) attrs['error.type'] = errorType(err);
      i.sent.add(count, attrs);
    }
    if (!span) return;
    if (result) {
      if (count === 1) span.setAttribute('messaging.message.id', result.msgId);
      span.setAttribute('messaging.destination.partition.id', String(result.messageQueue.queueId));
    } else {
      span.setAttribute('error.type', errorType(err));
      span.recordException(err instanceof Error ? err : String(err));
      span.setStatus({ code: SPAN_STATUS_ERROR, message: err instanceof Error ? err.message : String(err) });
    }
    span.end();
  }
}

/** Copies of `messages` carrying the span's context as user properties. */
function withTraceProperties(messages: readonly Message[], span: OtelSpan): readonly Message[] {
  const sc = span.spanContext();
  if (!isValidSpanContext(sc)) return messages;
  const added: Record<string, string> = { [TRACEPARENT]: formatTraceparent(sc) };
  const state = sc.traceState?.serialize();
  if (state) added[TRACESTATE] = state;
  return messages.map((m) => ({ ...m, properties: { ...m.properties, ...added } }));
}
