/**
 * What the producer's and the consumers' telemetry share: the OpenTelemetry API loaded at start (or
 * nothing, when the option is off or the package is absent), a tracer and a meter, the attributes of the
 * messaging semantic conventions, and the rule that telemetry never fails the message path: whatever a
 * tracer, a meter or a trace property does wrong is caught, counted, and reported once through the logger.
 */
import type { Logger } from '../../common/logger.js';
import { MessageConst } from '../../common/message.js';
import {
  loadOtelApi,
  otelGlobalsRegistered,
  type OpenTelemetryOption,
  type OtelApi,
  type OtelAttributes,
  type OtelMeter,
  type OtelMeterProvider,
  type OtelSpanContext,
  type OtelTracer,
  type OtelTracerProvider,
} from './otel-api.js';
import { parseTraceparent, TRACEPARENT, TRACESTATE } from './trace-context.js';

/** The instrumentation scope name of every tracer and meter the clients ask for. */
export const INSTRUMENTATION_SCOPE = 'rocketmq-ts';

/** `messaging.system` of RocketMQ in the semantic conventions. */
export const MESSAGING_SYSTEM = 'rocketmq';

/** The tracer, meter and API of a started client with OpenTelemetry on. */
export interface ActiveTelemetry {
  readonly api: OtelApi;
  readonly tracer: OtelTracer;
  readonly meter: OtelMeter;
  readonly clientId: string;
}

export abstract class ClientTelemetry {
  /** Set by `start()` when OpenTelemetry is on; every hook is a no-op while it is undefined. */
  protected active: ActiveTelemetry | undefined;
  /** Telemetry failures so far (a throwing tracer or meter, a bad trace property). */
  errors = 0;
  #warned = false;
  #starting: Promise<void> | undefined;

  constructor(
    protected readonly logger: Logger,
    private readonly option: OpenTelemetryOption,
  ) {}

  /** True once started with OpenTelemetry on. */
  get enabled(): boolean {
    return this.active !== undefined;
  }

  /**
   * Imports `@opentelemetry/api` (once per process) unless the option is `false`, and makes the tracer,
   * the meter and the instruments. Never throws: without the package, or when a provider throws, the
   * client runs without telemetry.
   */
  start(clientId: string): Promise<void> {
    this.#starting ??= this.#start(clientId);
    return this.#starting;
  }

  async #start(clientId: string): Promise<void> {
    if (this.option === false) return;
    if (this.option === true && !otelGlobalsRegistered()) {
      this.logger.debug({}, 'no OpenTelemetry SDK registered: OpenTelemetry is off');
      return;
    }
    const api = await loadOtelApi();
    if (!api) {
      this.logger.debug({}, '@opentelemetry/api is not installed: OpenTelemetry is off');
      return;
    }
    try {
      const given = typeof this.option === 'object' ? this.option : {};
      // A given provider is an OpenTelemetry one (checked for its method only): its tracer and meter are
      // the API's, which the structural types here describe.
      const tracerProvider = (given.tracerProvider as OtelTracerProvider | undefined) ?? api.trace.getTracerProvider();
      const meterProvider = (given.meterProvider as OtelMeterProvider | undefined) ?? api.metrics.getMeterProvider();
      const tracer = tracerProvider.getTracer(INSTRUMENTATION_SCOPE);
      const meter = meterProvider.getMeter(INSTRUMENTATION_SCOPE);
      const active = { api, tracer, meter, clientId };
      this.createInstruments(active);
      this.active = active;
    } catch (err) {
      this.failed(err);
    }
  }

  /** Forgets the tracer and meter (observable gauges stop reporting). */
  stop(): void {
    const active = this.active;
    this.active = undefined;
    if (active) this.guard(() => this.removeInstruments());
  }

  /** Makes the instruments of this client kind. */
  protected abstract createInstruments(active: ActiveTelemetry): void;

  /** Unregisters observable callbacks. */
  protected removeInstruments(): void {}

  /** Counts a telemetry failure and reports the first one. */
  protected failed(err: unknown, what = 'OpenTelemetry failed'): void {
    this.errors++;
    if (this.#warned) return;
    this.#warned = true;
    this.logger.warn(
      { err },
      `${what}: telemetry is skipped where it fails (reported once; the messages are not affected)`,
    );
  }

  /** Runs a telemetry step; a throw is counted, never passed on. */
  protected guard<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      this.failed(err);
      return undefined;
    }
  }

  /**
   * The producer's span context carried by a message's properties, or undefined: none, or a malformed
   * or oversized one (counted and reported once, and the message goes on untraced by it).
   */
  protected creationContext(props: Readonly<Record<string, string>> | null): OtelSpanContext | undefined {
    if (!props) return undefined;
    const parsed = parseTraceparent(props[TRACEPARENT], props[TRACESTATE]);
    if (parsed === undefined) return undefined;
    if (!parsed.ok) {
      this.failed(new Error(parsed.problem), `a message carries a bad trace context (${parsed.problem})`);
      return undefined;
    }
    const active = this.active;
    const sc: OtelSpanContext = {
      traceId: parsed.traceId,
      spanId: parsed.spanId,
      traceFlags: parsed.traceFlags,
      isRemote: true,
    };
    if (parsed.traceState !== undefined && active) {
      const state = this.guard(() => active.api.createTraceState(parsed.traceState));
      if (state) sc.traceState = state;
    }
    return sc;
  }
}

/** RocketMQ's message type in the conventions (`messaging.rocketmq.message.type`). */
export function messageType(props: { get(k: string): string | undefined }): string {
  if (props.get(MessageConst.TRAN_MSG) === 'true') return 'transaction';
  if (props.get(MessageConst.DELAY) !== undefined) return 'delay';
  if (props.get(MessageConst.SHARDING_KEY) !== undefined) return 'fifo';
  return 'normal';
}

/** The conventions' RocketMQ message attributes: tag and keys (a list). */
export function messageAttributes(
  attrs: OtelAttributes,
  props: { get(k: string): string | undefined },
): OtelAttributes {
  const tag = props.get(MessageConst.TAGS);
  if (tag !== undefined) attrs['messaging.rocketmq.message.tag'] = tag;
  const keys = props.get(MessageConst.KEYS);
  if (keys !== undefined) attrs['messaging.rocketmq.message.keys'] = keys.split(' ').filter((k) => k.length > 0);
  return attrs;
}

/** A property lookup over a message's property record. */
export function recordProps(props: Readonly<Record<string, string>> | null): { get(k: string): string | undefined } {
  return { get: (k) => props?.[k] };
}

/** `error.type` of a failure: the error's code or class name. */
export function errorType(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? code : err.name;
  }
  return '_OTHER';
}
