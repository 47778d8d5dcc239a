/**
 * RocketMQ's message trace end to end on the bundled broker (traceTopicEnable): a producer, a push
 * consumer, a lite pull consumer and a simple consumer with enableMsgTrace send their records to
 * RMQ_SYS_TRACE_TOPIC, and AdminClient.queryMsgTraceById and the CLI's queryMsgTraceById show them.
 */
import { jest } from '@jest/globals';
import {
  AdminClient,
  LitePullConsumer,
  Producer,
  PushConsumer,
  SimpleConsumer,
  TransactionProducer,
  type MsgTraceView,
} from '../../../src/index.js';
import { runAdminCommand } from '../../../src/cli-admin.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

jest.setTimeout(90_000);

let f: BrokerFixture;
let admin: AdminClient;

beforeAll(async () => {
  f = await startBroker({ traceTopicEnable: true });
  admin = new AdminClient({ endpoints: f.broker.address });
});
afterAll(async () => {
  await admin.shutdown();
  await f.close();
});

const kinds = (views: readonly MsgTraceView[], group: string): string[] =>
  views.filter((v) => v.groupName === group).map((v) => v.type);

test('the broker starts with the trace topic when traceTopicEnable is set', async () => {
  expect(await admin.topicList()).toContain('RMQ_SYS_TRACE_TOPIC');
});

test('Pub, SubBefore and SubAfter rows of a producer, a push, a lite pull and a simple consumer', async () => {
  const topic = uniqueName('TraceT');
  await admin.createTopic(topic, { queueNums: 2 });
  const pg = uniqueName('trace_p');
  const pushGroup = uniqueName('trace_push');
  const liteGroup = uniqueName('trace_lite');
  const simpleGroup = uniqueName('trace_simple');
  const endpoints = f.broker.address;
  const producer = new Producer({ producerGroup: pg, endpoints, enableMsgTrace: true });
  const push = new PushConsumer({
    consumerGroup: pushGroup,
    endpoints,
    enableMsgTrace: true,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  const lite = new LitePullConsumer({
    consumerGroup: liteGroup,
    endpoints,
    enableMsgTrace: true,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  const simple = new SimpleConsumer({
    consumerGroup: simpleGroup,
    endpoints,
    enableMsgTrace: true,
    awaitDurationMs: 500,
  });
  try {
    await producer.start();
    const sent = await producer.send({ topic, tags: 'TagA', keys: ['order-1', 'order-2'], body: Buffer.from('hello') });

    const pushed: string[] = [];
    push.subscribe(topic, '*');
    push.registerMessageListener(async (msgs) => {
      for (const m of msgs) pushed.push(m.msgId);
    });
    await push.start();
    lite.subscribe(topic, '*');
    await lite.start();
    simple.subscribe(topic);
    await simple.start();

    await waitFor(() => pushed.includes(sent.msgId), 30_000);
    const polled: string[] = [];
    await waitFor(async () => {
      for (const m of await lite.poll({ timeoutMs: 500 })) polled.push(m.msgId);
      return polled.includes(sent.msgId);
    }, 30_000);
    let acked = false;
    await waitFor(async () => {
      for (const m of await simple.receive(8, 30_000)) {
        await simple.ack(m);
        if (m.msgId === sent.msgId) acked = true;
      }
      return acked;
    }, 30_000);

    let views: MsgTraceView[] = [];
    await waitFor(async () => {
      views = await admin.queryMsgTraceById(sent.msgId);
      return (
        kinds(views, pg).includes('Pub') &&
        [pushGroup, liteGroup, simpleGroup].every(
          (g) => kinds(views, g).includes('SubBefore') && kinds(views, g).includes('SubAfter'),
        )
      );
    }, 30_000);
    const pub = views.find((v) => v.type === 'Pub');
    expect(pub).toMatchObject({
      msgId: sent.msgId,
      topic,
      tags: 'TagA',
      keys: 'order-1 order-2',
      offsetMsgId: sent.offsetMsgId,
      status: 'success',
    });
    for (const g of [pushGroup, liteGroup, simpleGroup])
      expect(views.find((v) => v.groupName === g && v.type === 'SubAfter')?.status).toBe('success');
    // The trace messages carry the message keys too (RocketMQ's TraceTransferBean keys).
    const byKey = await admin.queryMsgByKey('RMQ_SYS_TRACE_TOPIC', 'order-1');
    expect(byKey.length).toBeGreaterThan(0);

    // The CLI prints mqadmin's layout: a Pub row, then each consumer group's Sub rows.
    let printed = '';
    const write = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      printed += String(chunk);
      return true;
    });
    try {
      expect(await runAdminCommand('queryMsgTraceById', ['--endpoints', endpoints, '-i', sent.msgId])).toBe(0);
    } finally {
      write.mockRestore();
    }
    expect(printed).toMatch(new RegExp(`^#Type +#ProducerGroup +#ClientHost +#SendTime +#CostTimes +#Status`, 'm'));
    expect(printed).toMatch(
      new RegExp(`^Pub +${pg} +\\S+ +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d +\\d+ms +success`, 'm'),
    );
    for (const g of [pushGroup, liteGroup, simpleGroup]) expect(printed).toMatch(new RegExp(`^Sub +${g} +`, 'm'));

    for (const c of [producer, push, lite, simple]) expect(c.traceStats()).toMatchObject({ dropped: 0 });
  } finally {
    await Promise.allSettled([push.shutdown(), lite.shutdown(), simple.shutdown()]);
    await producer.shutdown();
  }
});

test('a trace topic that does not exist drops and counts records; sends still succeed', async () => {
  const topic = uniqueName('TraceMissing');
  await admin.createTopic(topic, { queueNums: 1 });
  const producer = new Producer({
    producerGroup: uniqueName('trace_missing'),
    endpoints: f.broker.address,
    enableMsgTrace: true,
    traceTopic: 'NO_SUCH_TRACE_TOPIC',
    autoBatch: false,
  });
  await producer.start();
  try {
    for (let i = 0; i < 3; i++) await producer.send({ topic, body: Buffer.from(`m${i}`) });
    await waitFor(() => (producer.traceStats()?.dropped ?? 0) === 3, 20_000);
    expect(producer.traceStats()).toMatchObject({ appended: 3, sent: 0, dropped: 3, pending: 0 });
  } finally {
    await producer.shutdown();
  }
});

test('a transactional send records its half message’s Pub and an EndTransaction', async () => {
  const topic = uniqueName('TraceTx');
  await admin.createTopic(topic, { queueNums: 1 });
  const group = uniqueName('trace_tx');
  const producer = new TransactionProducer({
    producerGroup: group,
    endpoints: f.broker.address,
    enableMsgTrace: true,
    transactionListener: {
      executeLocalTransaction: () => 'COMMIT_MESSAGE',
      checkLocalTransaction: () => 'COMMIT_MESSAGE',
    },
  });
  await producer.start();
  try {
    const r = await producer.sendMessageInTransaction({ topic, tags: 'Tx', keys: 'tx-key', body: Buffer.from('t') });
    let views: MsgTraceView[] = [];
    await waitFor(async () => {
      views = await admin.queryMsgTraceById(r.msgId);
      return views.some((v) => v.type === 'EndTransaction') && views.some((v) => v.type === 'Pub');
    }, 20_000);
    expect(views.find((v) => v.type === 'EndTransaction')).toMatchObject({ groupName: group, topic, keys: 'tx-key' });
  } finally {
    await producer.shutdown();
  }
});
