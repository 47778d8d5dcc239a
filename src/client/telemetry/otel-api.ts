/**
 * The part of `@opentelemetry/api` the clients use, written out as structural types so that neither the
 * package nor its types are needed to build or run without OpenTelemetry (it is an optional peer
 * dependency), and the loader that imports it once per process, on the first client start that wants it.
 */

/** Attribute values as OpenTelemetry takes them. */
export type OtelAttributes = Record<string, string | number | boolean | string[] | undefined>;

export interface OtelSpanContext {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote?: boolean;
  traceState?: { serialize(): string };
}

export interface OtelSpan {
  spanContext(): OtelSpanContext;
  setAttribute(key: string, value: string | number | boolean | string[]): unknown;
  setStatus(status: { code: number; message?: string }): unknown;
  recordException(exception: Error | string): void;
  isRecording(): boolean;
  end(): void;
}

export interface OtelLink {
  context: OtelSpanContext;
  attributes?: OtelAttributes;
}

export interface OtelTracer {
  startSpan(
    name: string,
    options?: { kind?: number; attributes?: OtelAttributes; links?: OtelLink[] },
    context?: unknown,
  ): OtelSpan;
}

export interface OtelTracerProvider {
  getTracer(name: string, version?: string): OtelTracer;
}

export interface OtelCounter {
  add(value: number, attributes?: OtelAttributes): void;
}

export interface OtelHistogram {
  record(value: number, attributes?: OtelAttributes): void;
}

export interface OtelObservableResult {
  observe(value: number, attributes?: OtelAttributes): void;
}

export interface OtelObservableGauge {
  addCallback(callback: (result: OtelObservableResult) => void): void;
  removeCallback(callback: (result: OtelObservableResult) => void): void;
}

export interface OtelInstrumentOptions {
  description?: string;
  unit?: string;
  advice?: { explicitBucketBoundaries?: number[] };
}

export interface OtelMeter {
  createCounter(name: string, options?: OtelInstrumentOptions): OtelCounter;
  createUpDownCounter(name: string, options?: OtelInstrumentOptions): OtelCounter;
  createHistogram(name: string, options?: OtelInstrumentOptions): OtelHistogram;
  createObservableGauge(name: string, options?: OtelInstrumentOptions): OtelObservableGauge;
}

export interface OtelMeterProvider {
  getMeter(name: string, version?: string): OtelMeter;
}

/** The module `@opentelemetry/api`, as far as the clients read it. */
export interface OtelApi {
  trace: {
    getTracerProvider(): OtelTracerProvider;
    setSpanContext(context: unknown, spanContext: OtelSpanContext): unknown;
    setSpan(context: unknown, span: OtelSpan): unknown;
  };
  metrics: { getMeterProvider(): OtelMeterProvider };
  context: {
    active(): unknown;
    with<A extends unknown[], R>(context: unknown, fn: (...args: A) => R, thisArg?: unknown, ...args: A): R;
  };
  ROOT_CONTEXT: unknown;
  createTraceState(raw?: string): { serialize(): string };
}

/** OpenTelemetry's SpanKind and SpanStatusCode values (stable parts of the API). */
export const SPAN_KIND_PRODUCER = 3;
export const SPAN_KIND_CONSUMER = 4;
export const SPAN_STATUS_ERROR = 2;

/**
 * The `openTelemetry` client option: `true` (the default) uses the globally registered providers when
 * an OpenTelemetry SDK has registered them before the client starts (and `@opentelemetry/api` can be
 * imported), `false` never imports it, and an object names the providers to use instead of the global
 * ones (the API is still imported, for contexts).
 */
export type OpenTelemetryOption =
  | boolean
  | {
      /** An OpenTelemetry TracerProvider (e.g. the SDK's); typed loosely so no OpenTelemetry type is needed. */
      tracerProvider?: { getTracer(name: string, version?: string): unknown } | undefined;
      /** An OpenTelemetry MeterProvider. */
      meterProvider?: { getMeter(name: string, version?: string): unknown } | undefined;
    };

/**
 * True once an OpenTelemetry SDK (or anything else) has registered a global of `@opentelemetry/api` 1.x:
 * the API keeps its globals under this symbol. Without them every global provider is a no-op, so a
 * client with the default option skips importing the API (tens of milliseconds of a cold start).
 */
export function otelGlobalsRegistered(): boolean {
  return (globalThis as Record<symbol, unknown>)[Symbol.for('opentelemetry.js.api.1')] !== undefined;
}

let loading: Promise<OtelApi | undefined> | undefined;

/**
 * `@opentelemetry/api`, or undefined when it is not installed. Imported at most once per process; a
 * failed import is not retried (installing a package does not happen while a process runs).
 */
export function loadOtelApi(): Promise<OtelApi | undefined> {
  loading ??= import('@opentelemetry/api').then(
    (m) => m as unknown as OtelApi,
    () => undefined,
  );
  return loading;
}
