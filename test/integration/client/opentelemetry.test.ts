/**
 * OpenTelemetry in the clients, over HTTP and TCP on the in-process broker, with the SDK's in-memory
 * exporter and a manually collected meter: the producer's span reaches the consumer's through the
 * message (child and link), the conventions' attributes, the metrics match what was sent and consumed,
 * a throwing tracer or meter and a bad trace property never fail a send or a consume, and a client
 * without a registered SDK works as before.
 */
import { context, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import type { ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Producer } from '../../../src/client/producer/producer.js';
import { LitePullConsumer, PushConsumer, SimpleConsumer } from '../../../src/index.js';
import type { Broker } from '../../../src/broker/index.js';
import type { MessageExt } from '../../../src/common/message.js';
import type { Logger } from '../../../src/common/logger.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { otelCapture, sumOf, type OtelCapture } from '../../support/otel-capture.js';
import { uniq } from './push-consumer-support.js';

type Transport = 'http' | 'tcp';
const addressing = (t: Transport, b: Broker): { endpoints: string } | { namesrvAddr: string } =>
  t === 'http' ? { endpoints: b.address } : { namesrvAddr: b.remotingAddress ?? '' };

const PRODUCER = 3;
const CONSUMER = 4;

/** A logger that records its warnings. */
function recordingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  const noop = (): void => undefined;
  const warn = (_o: unknown, msg?: string): void => void warnings.push(msg ?? '');
  return { debug: noop, info: noop, error: noop, warn, warnings };
}

const contextManager = new AsyncLocalStorageContextManager();
beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});

describe.each<Transport>(['http', 'tcp'])('OpenTelemetry over %s', (t) => {
  let fx: BrokerFixture;
  let otel: OtelCapture;
  const closers: Array<() => Promise<unknown>> = [];
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0, popReviveIntervalMs: 50 });
  });
  beforeEach(() => {
    otel = otelCapture();
  });
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
    await otel.close();
  });
  afterAll(async () => {
    await fx.close();
  });

  const providers = (): {
    tracerProvider: OtelCapture['tracerProvider'];
    meterProvider: OtelCapture['meterProvider'];
  } => ({
    tracerProvider: otel.tracerProvider,
    meterProvider: otel.meterProvider,
  });

  async function producer(openTelemetry: ConstructorParameters<typeof Producer>[0]['openTelemetry'] = providers()) {
    const p = new Producer({ ...addressing(t, fx.broker), producerGroup: uniq('otelp'), openTelemetry });
    await p.start();
    closers.push(() => p.shutdown());
    return p;
  }

  const byKind = (kind: number): ReadableSpan[] => otel.spans().filter((s) => s.kind === kind);

  it('links the PushConsumer process span to the send span, with the conventions and the metrics', async () => {
    const topic = uniq('OtelPush');
    const group = uniq('otelg');
    const p = await producer();
    const activeInListener: Array<Span | undefined> = [];
    const got: MessageExt[] = [];
    const c = new PushConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: group,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      openTelemetry: providers(),
    });
    c.subscribe(topic, '*');
    c.registerMessageListener((msgs: MessageExt[]) => {
      activeInListener.push(trace.getActiveSpan());
      got.push(...msgs);
    });
    closers.push(() => c.shutdown());
    const sent = [];
    for (let i = 0; i < 3; i++)
      sent.push(await p.send({ topic, body: Buffer.from(`m${i}`), tags: 'TagA', keys: ['k1', `k${i + 2}`] }));
    await c.start();
    await waitFor(() => got.length >= 3 && byKind(CONSUMER).length >= 3, 20_000);

    const sends = byKind(PRODUCER);
    expect(sends).toHaveLength(3);
    for (const [i, s] of sends.entries()) {
      expect(s.name).toBe(`send ${topic}`);
      expect(s.attributes).toMatchObject({
        'messaging.system': 'rocketmq',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'send',
        'messaging.destination.name': topic,
        'messaging.message.id': sent[i]?.msgId,
        'messaging.rocketmq.client_group': p.options.producerGroup,
        'messaging.rocketmq.message.tag': 'TagA',
        'messaging.rocketmq.message.keys': ['k1', `k${i + 2}`],
        'messaging.rocketmq.message.type': 'normal',
      });
    }
    for (const m of got) expect(m.properties?.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const processes = byKind(CONSUMER);
    for (const s of processes) {
      const msgId = s.attributes['messaging.message.id'];
      const send = sends.find((x) => x.attributes['messaging.message.id'] === msgId);
      expect(send).toBeDefined();
      expect(s.name).toBe(`process ${topic}`);
      expect(s.spanContext().traceId).toBe(send?.spanContext().traceId);
      expect(s.parentSpanContext?.spanId).toBe(send?.spanContext().spanId);
      expect(s.links.map((l) => l.context.spanId)).toEqual([send?.spanContext().spanId]);
      expect(s.attributes).toMatchObject({
        'messaging.system': 'rocketmq',
        'messaging.operation.type': 'process',
        'messaging.destination.name': topic,
        'messaging.consumer.group.name': group,
        'messaging.rocketmq.message.tag': 'TagA',
      });
    }
    // The listener ran inside its message's span.
    expect(activeInListener.map((s) => s?.spanContext().spanId).sort()).toEqual(
      processes.map((s) => s.spanContext().spanId).sort(),
    );

    expect(sumOf(await otel.points('messaging.client.sent.messages'), { 'messaging.destination.name': topic })).toBe(3);
    expect(sumOf(await otel.points('rocketmq_send_cost_time'), { topic, invocation_status: 'success' })).toBe(3);
    expect(
      sumOf(await otel.points('messaging.client.consumed.messages'), { 'messaging.destination.name': topic }),
    ).toBe(3);
    expect(sumOf(await otel.points('rocketmq_process_time'), { topic, invocation_status: 'success' })).toBe(3);
    expect(sumOf(await otel.points('rocketmq_consumer_inflight_messages'), { topic })).toBe(0);
    const lag = await otel.points('rocketmq_consumer_lag_messages');
    expect(lag.filter((q) => q.attributes.topic === topic).length).toBeGreaterThan(0);
    expect(sumOf(lag, { topic })).toBe(0);
    expect(await otel.points('rocketmq_consumer_cached_messages')).toEqual(
      expect.arrayContaining([expect.objectContaining({ attributes: expect.objectContaining({ topic }), value: 0 })]),
    );
  }, 60_000);

  it('an orderly listener and a failing one: spans per message, failures in the metrics', async () => {
    const topic = uniq('OtelOrderly');
    const p = await producer();
    let calls = 0;
    const c = new PushConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: uniq('otelo'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      suspendCurrentQueueTimeMillis: 10,
      openTelemetry: providers(),
    });
    c.subscribe(topic, '*');
    c.registerMessageListenerOrderly(() => {
      calls++;
      if (calls === 1) throw new Error('first try fails');
      return 'SUCCESS';
    });
    closers.push(() => c.shutdown());
    const sent = await p.send({ topic, body: Buffer.from('o') });
    await c.start();
    await waitFor(() => byKind(CONSUMER).length >= 2, 20_000);
    const [failed, ok] = byKind(CONSUMER);
    const send = byKind(PRODUCER)[0];
    for (const s of [failed, ok]) {
      expect(s?.attributes['messaging.message.id']).toBe(sent.msgId);
      expect(s?.parentSpanContext?.spanId).toBe(send?.spanContext().spanId);
    }
    expect(failed?.status.code).toBe(2);
    expect(failed?.attributes['error.type']).toBe('Error');
    expect(ok?.status.code).not.toBe(2);
    expect(sumOf(await otel.points('rocketmq_process_time'), { topic, invocation_status: 'failure' })).toBe(1);
    expect(sumOf(await otel.points('messaging.client.consumed.messages'), { 'error.type': 'Error' })).toBe(1);
  }, 60_000);

  it('LitePullConsumer and SimpleConsumer: a receive span per message, a child of the send', async () => {
    const topic = uniq('OtelPull');
    const p = await producer();
    const sent = await p.send({ topic, body: Buffer.from('x'), tags: 'T' });
    const lite = new LitePullConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: uniq('otell'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      openTelemetry: providers(),
    });
    lite.subscribe(topic, '*');
    closers.push(() => lite.shutdown());
    await lite.start();
    const polled: MessageExt[] = [];
    await waitFor(async () => (polled.push(...(await lite.poll({ timeoutMs: 200 }))), polled.length > 0), 20_000);
    const simple = new SimpleConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: uniq('otels'),
      awaitDurationMs: 500,
      openTelemetry: providers(),
    });
    simple.subscribe(topic, '*');
    closers.push(() => simple.shutdown());
    await simple.start();
    const received = [];
    await waitFor(async () => (received.push(...(await simple.receive(16, 10_000))), received.length > 0), 20_000);
    const send = byKind(PRODUCER)[0];
    const receives = byKind(CONSUMER);
    expect(receives).toHaveLength(2);
    for (const s of receives) {
      expect(s.name).toBe(`receive ${topic}`);
      expect(s.attributes['messaging.operation.type']).toBe('receive');
      expect(s.attributes['messaging.message.id']).toBe(sent.msgId);
      expect(s.parentSpanContext?.spanId).toBe(send?.spanContext().spanId);
    }
    expect(
      sumOf(await otel.points('messaging.client.consumed.messages'), { 'messaging.destination.name': topic }),
    ).toBe(2);
  }, 60_000);

  it('a throwing tracer and meter, and bad trace properties, never fail a send or a consume', async () => {
    const topic = uniq('OtelThrow');
    const boom = (): never => {
      throw new Error('telemetry backend down');
    };
    const logger = recordingLogger();
    const throwing = {
      tracerProvider: { getTracer: () => ({ startSpan: boom }) },
      meterProvider: {
        getMeter: () => ({
          createCounter: () => ({ add: boom }),
          createUpDownCounter: () => ({ add: boom }),
          createHistogram: () => ({ record: boom }),
          createObservableGauge: () => ({ addCallback: () => undefined, removeCallback: () => undefined }),
        }),
      },
    };
    const p = new Producer({
      ...addressing(t, fx.broker),
      producerGroup: uniq('otelp'),
      openTelemetry: throwing,
      logger,
    });
    await p.start();
    closers.push(() => p.shutdown());
    // A plain producer (no telemetry) carries the bad properties as they are.
    const plain = await producer(false);
    await p.send({ topic, body: Buffer.from('a') });
    await plain.send({ topic, body: Buffer.from('b'), properties: { traceparent: 'garbage' } });
    await plain.send({ topic, body: Buffer.from('c'), properties: { traceparent: `00-${'a'.repeat(5000)}` } });
    const consumerLogger = recordingLogger();
    const got: string[] = [];
    const c = new PushConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: uniq('otelt'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      openTelemetry: providers(),
      logger: consumerLogger,
    });
    c.subscribe(topic, '*');
    c.registerMessageListener((msgs: MessageExt[]) => void got.push(...msgs.map((m) => m.body?.toString() ?? '')));
    closers.push(() => c.shutdown());
    await c.start();
    await waitFor(() => got.length >= 3, 20_000);
    expect(got.sort()).toEqual(['a', 'b', 'c']);
    expect(logger.warnings.filter((w) => w.includes('telemetry'))).toHaveLength(1);
    expect(consumerLogger.warnings.filter((w) => w.includes('bad trace context'))).toHaveLength(1);
    // The messages with bad properties were still traced, as roots of their own traces.
    await waitFor(() => byKind(CONSUMER).length >= 3, 10_000);
    const roots = byKind(CONSUMER).filter((s) => s.parentSpanContext === undefined);
    expect(roots.length).toBeGreaterThanOrEqual(2);
  }, 60_000);

  it('without an SDK registered, or with openTelemetry false, the clients work and record nothing', async () => {
    const topic = uniq('OtelOff');
    const p = await producer(true);
    const off = await producer(false);
    await p.send({ topic, body: Buffer.from('1') });
    await off.send({ topic, body: Buffer.from('2') });
    const got: MessageExt[] = [];
    const c = new PushConsumer({
      ...addressing(t, fx.broker),
      consumerGroup: uniq('oteln'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    c.subscribe(topic, '*');
    c.registerMessageListener((msgs: MessageExt[]) => void got.push(...msgs));
    closers.push(() => c.shutdown());
    await c.start();
    await waitFor(() => got.length >= 2, 20_000);
    expect(got.every((m) => m.properties?.traceparent === undefined)).toBe(true);
    expect(otel.spans()).toEqual([]);
  }, 60_000);
});
