export { ProducerTelemetry, type TracedSendRequest, type TracedSendResult } from './producer-telemetry.js';
export { ConsumerTelemetry, type ObservedQueue, type ProcessScope } from './consumer-telemetry.js';
export type { OpenTelemetryOption, OtelMeterProvider, OtelTracerProvider } from './otel-api.js';
