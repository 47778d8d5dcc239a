/**
 * RocketMQ's message trace on the bundled broker (traceTopicEnable) with RocketMQ 4.9.8's Java client
 * next to ours: Java's producer with trace on (`new DefaultMQProducer(group, true)`) and our producer
 * each send a message, our push consumer with enableMsgTrace consumes both, and the kit's
 * `mqadmin queryMsgTraceById` (run in the driver's JVM) and our AdminClient show the Pub rows of both
 * producers and our consumer's Sub rows. And OpenTelemetry's context across the Java client: a Java
 * producer's message carrying the user properties `traceparent` and `tracestate`, as OpenTelemetry's
 * instrumentation of RocketMQ's Java client (rocketmq-client-4.8) writes them, is consumed by our push
 * consumer in a span that is a child of that context and links to it. Skipped with one line without the
 * kit or a JDK.
 */
import { AdminClient, Producer, PushConsumer, type MsgTraceView } from '../../../src/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { otelCapture } from '../../support/otel-capture.js';
import { waitFor } from '../../support/broker-fixture.js';
import { JavaDriver, describeWithJava, waitUntil } from '../../support/java-client.js';
import { useJavaOnBroker } from '../../support/java-on-broker.js';

describeWithJava('message trace of our clients and of RocketMQ’s Java client on the bundled broker', () => {
  const env = useJavaOnBroker({ storePrefix: 'rmq-trace-', broker: { traceTopicEnable: true } });
  const { admin } = env;
  let java: JavaDriver;
  let ns: string;
  beforeAll(() => ({ java, ns } = env));

  test('mqadmin queryMsgTraceById and AdminClient show Java’s and our rows', async () => {
    const topic = uniqueName('TrT');
    const javaGroup = uniqueName('TrJavaP');
    const ourGroup = uniqueName('TrOurP');
    const consumerGroup = uniqueName('TrOurC');
    await admin('updateTopic', '-c', 'DefaultCluster', '-t', topic, '-r', '2', '-w', '2');
    await java.command('producer', javaGroup, ns, 'trace');
    const javaSent = await java.command('send', javaGroup, topic, 'TagJ', 'jk1', 'from-java');
    const javaId = String(javaSent.msgId);

    const producer = new Producer({ producerGroup: ourGroup, namesrvAddr: ns, enableMsgTrace: true });
    const consumer = new PushConsumer({
      consumerGroup,
      namesrvAddr: ns,
      enableMsgTrace: true,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    const consumed = new Set<string>();
    try {
      await producer.start();
      const ours = await producer.send({ topic, tags: 'TagO', keys: 'ok1', body: Buffer.from('from-ts') });
      consumer.subscribe(topic, '*');
      consumer.registerMessageListener(async (msgs) => {
        for (const m of msgs) consumed.add(m.msgId);
      });
      await consumer.start();
      await waitUntil(
        () => consumed.has(javaId) && consumed.has(ours.msgId),
        30_000,
        () => '',
      );

      const client = new AdminClient({ namesrvAddr: [ns] });
      try {
        const types = (views: MsgTraceView[], group: string): string[] =>
          views.filter((v) => v.groupName === group).map((v) => v.type);
        for (const [id, group] of [
          [javaId, javaGroup],
          [ours.msgId, ourGroup],
        ] as const) {
          let views: MsgTraceView[] = [];
          await waitFor(async () => {
            views = await client.queryMsgTraceById(id);
            return types(views, group).includes('Pub') && types(views, consumerGroup).includes('SubAfter');
          }, 30_000);
          expect(types(views, consumerGroup)).toContain('SubBefore');
          const out = await admin('queryMsgTraceById', '-i', id);
          expect(out).toMatch(
            new RegExp(`^Pub +${group} +\\S+ +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +\\d+ms +success`, 'm'),
          );
          expect(out).toMatch(new RegExp(`^Sub +${consumerGroup} +\\S+ +\\S+ \\S+ +\\d+ms +success`, 'm'));
        }
      } finally {
        await client.shutdown();
      }
    } finally {
      await consumer.shutdown();
      await producer.shutdown();
      await java.command('stop', javaGroup);
    }
  }, 120_000);

  test('a Java producer’s traceparent and tracestate user properties are the parent of our consumer’s span', async () => {
    const topic = uniqueName('TrOtel');
    const javaGroup = uniqueName('TrOtelP');
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const spanId = '00f067aa0ba902b7';
    await admin('updateTopic', '-c', 'DefaultCluster', '-t', topic, '-r', '1', '-w', '1');
    await java.command('producer', javaGroup, ns);
    const sent = await java.command(
      'send',
      javaGroup,
      topic,
      'TagT',
      '',
      'traced-by-java',
      `traceparent=00-${traceId}-${spanId}-01`,
      'tracestate=rojo=00f067aa0ba902b7',
    );
    const otel = otelCapture();
    const consumer = new PushConsumer({
      consumerGroup: uniqueName('TrOtelC'),
      namesrvAddr: ns,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      openTelemetry: { tracerProvider: otel.tracerProvider, meterProvider: otel.meterProvider },
    });
    try {
      consumer.subscribe(topic, '*');
      consumer.registerMessageListener(async () => undefined);
      await consumer.start();
      const processed = (): ReturnType<typeof otel.spans> =>
        otel.spans().filter((s) => s.attributes['messaging.message.id'] === String(sent.msgId));
      await waitUntil(
        () => processed().length > 0,
        30_000,
        () => JSON.stringify(otel.spans().map((s) => s.name)),
      );
      const [span] = processed();
      expect(span?.name).toBe(`process ${topic}`);
      expect(span?.spanContext().traceId).toBe(traceId);
      expect(span?.parentSpanContext?.spanId).toBe(spanId);
      expect(span?.parentSpanContext?.isRemote).toBe(true);
      expect(span?.parentSpanContext?.traceState?.get('rojo')).toBe('00f067aa0ba902b7');
      expect(span?.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([[traceId, spanId]]);
    } finally {
      await consumer.shutdown();
      await otel.close();
      await java.command('stop', javaGroup);
    }
  }, 120_000);
});
