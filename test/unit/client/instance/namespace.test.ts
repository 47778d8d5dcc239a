/**
 * The name mapper against RocketMQ 4.9.8's NamespaceUtil cases: wrap and unwrap of topics, groups,
 * retry and dead-letter topics, system names, names already namespaced, names of another namespace.
 */
import {
  AdminClient,
  InvalidArgumentError,
  LitePullConsumer,
  Producer,
  PullConsumer,
  PushConsumer,
} from '../../../../src/index.js';
import { SimpleConsumer } from '../../../../src/client/consumer/simple/index.js';
import {
  checkNamespace,
  isSystemResource,
  NameMapper,
  unwrapEvents,
  withoutNamespace,
  wrapNamespace,
} from '../../../../src/client/instance/namespace.js';
import { SafeEventEmitter } from '../../../../src/client/instance/safe-emitter.js';
import { AllocateMessageQueueAveragely } from '../../../../src/client/consumer/allocate-message-queue.js';

const ns = new NameMapper('INST_1');

describe('wrap (NamespaceUtil.wrapNamespace)', () => {
  test.each([
    ['Topic', 'INST_1%Topic'],
    ['group', 'INST_1%group'],
    ['%RETRY%group', '%RETRY%INST_1%group'],
    ['%DLQ%group', '%DLQ%INST_1%group'],
    // already in the namespace: unchanged, in every form
    ['INST_1%Topic', 'INST_1%Topic'],
    ['%RETRY%INST_1%group', '%RETRY%INST_1%group'],
    ['%DLQ%INST_1%group', '%DLQ%INST_1%group'],
    // another namespace's name is not "already namespaced" here: it gets this namespace too, as RocketMQ's does
    ['OTHER%Topic', 'INST_1%OTHER%Topic'],
    // system topics and groups stay as they are
    ['TBW102', 'TBW102'],
    ['SCHEDULE_TOPIC_XXXX', 'SCHEDULE_TOPIC_XXXX'],
    ['RMQ_SYS_TRANS_HALF_TOPIC', 'RMQ_SYS_TRANS_HALF_TOPIC'],
    ['RMQ_SYS_TRACE_TOPIC', 'RMQ_SYS_TRACE_TOPIC'],
    ['OFFSET_MOVED_EVENT', 'OFFSET_MOVED_EVENT'],
    ['rmq_sys_anything', 'rmq_sys_anything'],
    ['CID_RMQ_SYS_x', 'CID_RMQ_SYS_x'],
    ['', ''],
  ])('%s -> %s', (plain, wire) => {
    expect(ns.wrap(plain)).toBe(wire);
    expect(wrapNamespace('INST_1', plain)).toBe(wire);
  });

  test('no namespace (undefined or empty) is the identity', () => {
    for (const m of [new NameMapper(undefined), new NameMapper('')]) {
      expect(m.active).toBe(false);
      expect(m.wrap('Topic')).toBe('Topic');
      expect(m.unwrap('INST_1%Topic')).toBe('INST_1%Topic');
      const mq = { topic: 'T', brokerName: 'b', queueId: 0 };
      expect(m.wrapQueue(mq)).toBe(mq);
    }
  });
});

describe('unwrap (NamespaceUtil.withoutNamespace(resource, namespace))', () => {
  test.each([
    ['INST_1%Topic', 'Topic'],
    ['%RETRY%INST_1%group', '%RETRY%group'],
    ['%DLQ%INST_1%group', '%DLQ%group'],
    // not ours: kept whole (RocketMQ's case (4))
    ['OTHER%Topic', 'OTHER%Topic'],
    ['%RETRY%OTHER%group', '%RETRY%OTHER%group'],
    ['%DLQ%OTHER%group', '%DLQ%OTHER%group'],
    // a prefix of the namespace is not the namespace
    ['INST%Topic', 'INST%Topic'],
    ['INST_10%Topic', 'INST_10%Topic'],
    ['Topic', 'Topic'],
    ['%RETRY%group', '%RETRY%group'],
    ['TBW102', 'TBW102'],
    ['RMQ_SYS_TRANS_HALF_TOPIC', 'RMQ_SYS_TRANS_HALF_TOPIC'],
    ['', ''],
  ])('%s -> %s', (wire, plain) => {
    expect(ns.unwrap(wire)).toBe(plain);
    expect(withoutNamespace('INST_1', wire)).toBe(plain);
  });

  test('unwrap undoes wrap for every plain name', () => {
    for (const name of ['T', 'a-b_c', '%RETRY%g', '%DLQ%g', 'TBW102', 'rmq_sys_x'])
      expect(ns.unwrap(ns.wrap(name))).toBe(name);
  });

  test('owns: this namespace and system names, not plain names nor another namespace', () => {
    expect(ns.owns('INST_1%T')).toBe(true);
    expect(ns.owns('%RETRY%INST_1%g')).toBe(true);
    expect(ns.owns('TBW102')).toBe(true);
    expect(ns.owns('T')).toBe(false);
    expect(ns.owns('OTHER%T')).toBe(false);
    expect(ns.owns('%DLQ%OTHER%g')).toBe(false);
  });
});

test('system resources are TopicValidator.isSystemTopic and MixAll.isSysConsumerGroup', () => {
  expect(isSystemResource('BenchmarkTest')).toBe(true);
  expect(isSystemResource('SELF_TEST_TOPIC')).toBe(true);
  expect(isSystemResource('TRANS_CHECK_MAX_TIME_TOPIC')).toBe(true);
  expect(isSystemResource('RMQ_SYS_TRANS_OP_HALF_TOPIC')).toBe(true);
  expect(isSystemResource('Topic')).toBe(false);
});

describe('queues, messages, payloads', () => {
  test('queues map both ways; a non-queue is left for the caller to refuse', () => {
    const wire = ns.wrapQueue({ topic: 'T', brokerName: 'b', queueId: 3 });
    expect(wire).toEqual({ topic: 'INST_1%T', brokerName: 'b', queueId: 3 });
    expect(ns.unwrapQueue(wire)).toEqual({ topic: 'T', brokerName: 'b', queueId: 3 });
    expect(ns.wrapQueue(null as never)).toBeNull();
    expect(ns.wrapQueues([{ topic: 'T', brokerName: 'b', queueId: 0 }])).toEqual([
      { topic: 'INST_1%T', brokerName: 'b', queueId: 0 },
    ]);
  });

  test('a message is copied with the plain topic; the original keeps the wire name', () => {
    const msg = { topic: 'INST_1%T', body: Buffer.from('x'), properties: { RETRY_TOPIC: 'INST_1%T' } };
    const plain = ns.unwrapMessage(msg);
    expect(plain.topic).toBe('T');
    expect(msg.topic).toBe('INST_1%T');
    expect(plain.body).toBe(msg.body);
  });

  test('payloads: topic and group fields at any depth, errors rewritten', () => {
    const err = new Error('send to INST_1%T failed; retry topic %RETRY%INST_1%g');
    const payload = ns.unwrapPayload({
      consumerGroup: 'INST_1%g',
      queues: [{ mq: { topic: 'INST_1%T', brokerName: 'b', queueId: 0 }, lag: 1 }],
      error: err,
      when: new Date(0),
    });
    expect(payload.consumerGroup).toBe('g');
    expect(payload.queues[0]!.mq.topic).toBe('T');
    expect(payload.error.message).toBe('send to T failed; retry topic %RETRY%g');
    expect(payload.when).toBeInstanceOf(Date);
  });

  test('an emitter hands its listeners plain names', () => {
    const events = unwrapEvents(new SafeEventEmitter<{ e: [{ topic: string }] }>(), ns);
    const seen: string[] = [];
    events.on('e', (p) => seen.push(p.topic));
    events.emit('e', { topic: 'INST_1%T' });
    expect(seen).toEqual(['T']);
  });

  test('a listener context shows the plain queue and writes through', () => {
    const ctx = { messageQueue: { topic: 'INST_1%T', brokerName: 'b', queueId: 0 }, ackIndex: 5 };
    const seen = ns.unwrapContext(ctx);
    expect(seen.messageQueue.topic).toBe('T');
    seen.ackIndex = 1;
    expect(ctx.ackIndex).toBe(1);
  });

  test('an allocation strategy sees plain names and its picks come back as wire queues', () => {
    const calls: string[] = [];
    const inner = new AllocateMessageQueueAveragely();
    const strategy = ns.plainStrategy({
      getName: () => inner.getName(),
      allocate: (group, cid, mqAll, cidAll) => {
        calls.push(group, ...(mqAll ?? []).map((q) => q.topic));
        return inner.allocate(group, cid, mqAll, cidAll);
      },
    });
    const mqAll = [0, 1, 2, 3].map((queueId) => ({ topic: 'INST_1%T', brokerName: 'b', queueId }));
    const picked = strategy.allocate('INST_1%g', 'c1', mqAll, ['c1', 'c2']);
    expect(calls).toEqual(['g', 'T', 'T', 'T', 'T']);
    expect(picked).toEqual([mqAll[0], mqAll[1]]);
    expect(picked[0]).toBe(mqAll[0]);
  });

  test('a mapped iterator maps values and passes return through', async () => {
    let returned = false;
    async function* gen(): AsyncGenerator<{ topic: string }> {
      try {
        yield { topic: 'INST_1%A' };
        yield { topic: 'INST_1%B' };
      } finally {
        returned = true;
      }
    }
    const it = ns.mapIterator(gen(), (m) => ns.unwrapMessage(m));
    const got: string[] = [];
    for await (const m of it) {
      got.push(m.topic);
      break;
    }
    expect(got).toEqual(['A']);
    expect(returned).toBe(true);
  });
});

describe('the namespace is checked', () => {
  test.each(['a%b', 'a b', 'a|b', 'ns.1', 'x'.repeat(65), 'ümlaut'])('%s is refused', (bad) => {
    expect(() => checkNamespace(bad)).toThrow(InvalidArgumentError);
    expect(() => new NameMapper(bad)).toThrow(/namespace/);
  });

  test.each(['MQ_INST_123', 'tenant-a', 'a'])('%s is accepted', (good) => {
    expect(checkNamespace(good)).toBe(good);
  });

  const E = 'http://127.0.0.1:8081';
  test.each([
    ['Producer', () => new Producer({ producerGroup: 'g', endpoints: E, namespace: 'a%b' })],
    ['PushConsumer', () => new PushConsumer({ consumerGroup: 'g', endpoints: E, namespace: 'a%b' })],
    ['LitePullConsumer', () => new LitePullConsumer({ consumerGroup: 'g', endpoints: E, namespace: 'a%b' })],
    ['PullConsumer', () => new PullConsumer({ consumerGroup: 'g', endpoints: E, namespace: 'a%b' })],
    ['SimpleConsumer', () => new SimpleConsumer({ consumerGroup: 'g', endpoints: E, namespace: 'a%b' })],
    ['AdminClient', () => new AdminClient({ endpoints: E, namespace: 'a%b' })],
  ])('%s refuses a bad namespace with an InvalidArgumentError naming the option', (_name, make) => {
    let err: unknown;
    try {
      make();
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InvalidArgumentError);
    expect((err as InvalidArgumentError).field).toBe('namespace');
  });

  test('the client id does not carry the namespace (RocketMQ 4.9.8 buildMQClientId)', () => {
    const p = new Producer({ producerGroup: 'g', endpoints: E, namespace: 'ns1', instanceName: 'inst' });
    expect(p.clientId.endsWith('@inst')).toBe(true);
    expect(p.options.namespace).toBe('ns1');
    expect(p.options.producerGroup).toBe('g');
  });
});
