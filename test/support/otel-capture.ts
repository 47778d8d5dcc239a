/**
 * OpenTelemetry's SDK wired for tests: an in-memory span exporter behind a tracer provider, and a meter
 * provider whose metrics a test collects when it wants them (no timer).
 */
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, MetricReader, type DataPoint, type Histogram } from '@opentelemetry/sdk-metrics';

class ManualReader extends MetricReader {
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
}

export interface OtelCapture {
  tracerProvider: BasicTracerProvider;
  meterProvider: MeterProvider;
  spans(): ReadableSpan[];
  /** The data points of metric `name` now. */
  points(name: string): Promise<Array<DataPoint<number | Histogram>>>;
  close(): Promise<void>;
}

export function otelCapture(): OtelCapture {
  const exporter = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const reader = new ManualReader();
  const meterProvider = new MeterProvider({ readers: [reader] });
  return {
    tracerProvider,
    meterProvider,
    spans: () => exporter.getFinishedSpans(),
    async points(name) {
      const { resourceMetrics } = await reader.collect();
      return resourceMetrics.scopeMetrics
        .flatMap((s) => s.metrics)
        .filter((m) => m.descriptor.name === name)
        .flatMap((m) => m.dataPoints as Array<DataPoint<number | Histogram>>);
    },
    async close() {
      await tracerProvider.shutdown();
      await meterProvider.shutdown();
    },
  };
}

/** The sum of a counter's points whose attributes include `attrs`. */
export function sumOf(points: Array<DataPoint<number | Histogram>>, attrs: Record<string, unknown> = {}): number {
  let sum = 0;
  for (const p of points) {
    if (!Object.entries(attrs).every(([k, v]) => p.attributes[k] === v)) continue;
    sum += typeof p.value === 'number' ? p.value : p.value.count;
  }
  return sum;
}
