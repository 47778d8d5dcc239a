// Drain throughput of a PushConsumer with OpenTelemetry off and on, and with RocketMQ's message trace on,
// in one run, on one backlog: three consumer groups read the same topic from the first offset, one after
// the other, against an in-process broker (which creates the trace topic). "on" means the SDK's BasicTracerProvider (every span recorded and handed to an exporter that
// drops it) and a MeterProvider with a reader, so the figure is the clients' full cost. The backlog is
// sent by a producer with OpenTelemetry on, so every message carries a traceparent. Also the send rate
// of single sends, off and on. Imports the compiled package (npm run build). One line per figure.
//
// Scale with env vars (defaults in brackets): OBS_MESSAGES [50000]  OBS_BODY_BYTES [256]  OBS_SENDS [5000]
import { Buffer } from 'node:buffer';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { Producer, PushConsumer } from '../dist/index.js';
import { Broker } from '../dist/broker/index.js';
import { drainRate, sendBacklog } from './bench-broker.mjs';

const env = (name, dflt) => (process.env[name] === undefined ? dflt : Number(process.env[name]));
const N = env('OBS_MESSAGES', 50_000);
const BODY = env('OBS_BODY_BYTES', 256);
const SENDS = env('OBS_SENDS', 5_000);
const report = (name, value, unit) => console.log(`${name} ${Number(Number(value).toFixed(1))} ${unit}`);

class DroppingExporter {
  export(_spans, done) {
    done({ code: 0 });
  }
  shutdown() {
    return Promise.resolve();
  }
}
class ManualReader extends MetricReader {
  onForceFlush() {
    return Promise.resolve();
  }
  onShutdown() {
    return Promise.resolve();
  }
}
const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(new DroppingExporter())] });
const meterProvider = new MeterProvider({ readers: [new ManualReader()] });
const otelOn = { tracerProvider, meterProvider };

const storePath = mkdtempSync(path.join(os.tmpdir(), 'bench-obs-'));
const broker = await Broker.start({ port: 0, storePath, traceTopicEnable: true });
try {
  const topic = 'BenchObservability';
  const producer = new Producer({
    endpoints: broker.address,
    producerGroup: 'BenchObsProducer',
    openTelemetry: otelOn,
  });
  await producer.start();
  await sendBacklog(producer, topic, N, BODY);
  await producer.shutdown();

  for (const [label, extra] of [
    ['otel_off', { openTelemetry: false }],
    ['otel_on', { openTelemetry: otelOn }],
    ['msgtrace_on', { openTelemetry: false, enableMsgTrace: true }],
    // Later rounds run warmer (JIT, page cache): a last round with everything off brackets the others.
    ['off_again', { openTelemetry: false }],
  ]) {
    const rate = await drainRate(
      (group) =>
        new PushConsumer({
          endpoints: broker.address,
          consumerGroup: group,
          consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
          pullBatchSize: 32,
          ...extra,
        }),
      `BenchObsGroup_${label}`,
      topic,
      N,
    );
    report(`drain_${label}`, rate, 'msg/s');
  }

  for (const [label, extra] of [
    ['otel_off', { openTelemetry: false }],
    ['otel_on', { openTelemetry: otelOn }],
    ['msgtrace_on', { openTelemetry: false, enableMsgTrace: true }],
  ]) {
    const p = new Producer({ endpoints: broker.address, producerGroup: `BenchObsSend_${label}`, ...extra });
    await p.start();
    const body = Buffer.alloc(BODY, 0x61);
    const t0 = performance.now();
    let sent = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (sent < SENDS) {
          sent++;
          await p.send({ topic: 'BenchObservabilitySend', body });
        }
      }),
    );
    report(`send_${label}`, SENDS / ((performance.now() - t0) / 1000), 'msg/s');
    await p.shutdown();
  }
} finally {
  await broker.shutdown();
  await tracerProvider.shutdown();
  await meterProvider.shutdown();
  rmSync(storePath, { recursive: true, force: true });
}
