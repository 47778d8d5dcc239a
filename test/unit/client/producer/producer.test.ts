import { Producer, StateError, InvalidArgumentError, type ProducerOptions } from '../../../../src/index.js';
import { RequestCode } from '../../../../src/protocol/index.js';
import { TransportError } from '../../../../src/common/errors.js';
import { decodeBatchBody, string2messageProperties } from '../../../../src/common/codec/index.js';
import { MQClientInstance } from '../../../../src/client/instance/mq-client-instance.js';
import type { RemotingRequest } from '../../../../src/protocol/command.js';
import { ManualClock } from '../../../support/manual-clock.js';
import { FakeRemotingClient, json, ok, routeOf } from '../core-fakes.js';

let seq = 0;

/**
 * A Producer whose client instance uses a fake transport: the instance is acquired first with the
 * same client id, so the producer's `start()` joins it.
 */
async function setup(
  handler: (addr: string, r: RemotingRequest) => ReturnType<typeof ok> | Promise<ReturnType<typeof ok>>,
  options: Partial<ProducerOptions> = {},
) {
  const fake = new FakeRemotingClient(handler);
  const clock = new ManualClock();
  const p = new Producer({
    endpoints: 'http://ep:1',
    instanceName: `prod-${++seq}`,
    clientIP: '10.1.1.1',
    clock,
    ...options,
  });
  const holder = MQClientInstance.acquire(p.options, fake);
  await p.start();
  return {
    fake,
    p,
    sends: () => fake.callsOf(RequestCode.SEND_MESSAGE),
    batches: () => fake.callsOf(RequestCode.SEND_BATCH_MESSAGE),
    async close() {
      await p.shutdown();
      await holder.release();
    },
  };
}

const sendOk = (r: RemotingRequest) =>
  ok({ msgId: '0A0000010000000000000000000000AA', queueId: (r.header as { queueId: number }).queueId, queueOffset: 7 });

const twoBrokers = routeOf({ 'broker-a': 'http://a:1', 'broker-b': 'http://b:1' }, 2);

test('send: properties (tags, keys, delay, user, WAIT, UNIQ_KEY), header fields, SendResult', async () => {
  const s = await setup((_a, r) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC ? ok({}, json(twoBrokers)) : sendOk(r),
  );
  const res = await s.p.send({
    topic: 'T',
    body: Buffer.from('hi'),
    tags: 'TagA',
    keys: ['k1', 'k2'],
    delayTimeLevel: 3,
    properties: { color: 'red' },
    flag: 9,
  });
  const call = s.sends()[0]!;
  const h = call.request.header as Record<string, unknown>;
  const props = string2messageProperties(h.properties as string);
  expect(props).toMatchObject({ TAGS: 'TagA', KEYS: 'k1 k2', DELAY: '3', color: 'red', WAIT: 'true' });
  expect(props.UNIQ_KEY).toMatch(/^[0-9A-F]{32}$/);
  expect(h).toMatchObject({
    producerGroup: 'DEFAULT_PRODUCER',
    topic: 'T',
    defaultTopic: 'TBW102',
    defaultTopicQueueNums: 4,
    sysFlag: 0,
    flag: 9,
  });
  expect(h.bname).toBe((res.messageQueue as { brokerName: string }).brokerName);
  expect(call.request.body!.toString()).toBe('hi');
  expect(res).toMatchObject({
    sendStatus: 'SEND_OK',
    msgId: props.UNIQ_KEY,
    offsetMsgId: '0A0000010000000000000000000000AA',
    queueOffset: 7,
  });
  await s.close();
});

test('RocketMQ: a body of at least 4 KiB is zlib-compressed and COMPRESSED is set', async () => {
  const s = await setup((_a, r) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC ? ok({}, json(twoBrokers)) : sendOk(r),
  );
  await s.p.send({ topic: 'T', body: Buffer.alloc(4095, 'a') });
  await s.p.send({ topic: 'T', body: Buffer.alloc(4096, 'a') });
  const [small, big] = s.sends();
  expect((small!.request.header as { sysFlag: number }).sysFlag).toBe(0);
  expect((big!.request.header as { sysFlag: number }).sysFlag & 1).toBe(1);
  expect(big!.request.body!.length).toBeLessThan(4096);
  await s.close();
});

test('queues are chosen round robin over every writable queue', async () => {
  const s = await setup((_a, r) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC ? ok({}, json(twoBrokers)) : sendOk(r),
  );
  for (let i = 0; i < 8; i++) await s.p.send({ topic: 'T', body: Buffer.from('x') });
  const picked = s
    .sends()
    .map(
      (c) => `${(c.request.header as { bname: string }).bname}:${(c.request.header as { queueId: number }).queueId}`,
    );
  expect(new Set(picked.slice(0, 4)).size).toBe(4);
  expect(picked.slice(4)).toEqual(picked.slice(0, 4));
  await s.close();
});

test('RocketMQ: a failed send is retried on a queue of another broker (retryTimesWhenSendFailed)', async () => {
  const s = await setup((addr, r) => {
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) return ok({}, json(twoBrokers));
    if (addr === 'http://a:1') throw new TransportError('connection refused');
    return sendOk(r);
  });
  const events: number[] = [];
  s.p.events.on('sendError', (_e, info) => events.push(info.attempt));
  for (let i = 0; i < 4; i++) {
    const r = await s.p.send({ topic: 'T', body: Buffer.from('x') });
    expect(r.messageQueue.brokerName).toBe('broker-b');
  }
  const sends = s.sends();
  for (let i = 1; i < sends.length; i++) {
    if (sends[i - 1]!.addr === 'http://a:1') expect(sends[i]!.addr).toBe('http://b:1');
  }
  expect(events.length).toBeGreaterThan(0);
  await s.close();
});

test('non-retriable broker answers are not retried; retries stop after 1 + retryTimesWhenSendFailed attempts', async () => {
  const s = await setup((_a, r) => {
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC) return ok({}, json(twoBrokers));
    const topic = (r.header as { topic: string }).topic;
    return topic === 'Bad'
      ? { code: 13, header: {}, remark: 'illegal' }
      : { code: 14, header: {}, remark: 'unavailable' };
  });
  await expect(s.p.send({ topic: 'Bad', body: Buffer.from('x') })).rejects.toMatchObject({
    code: 'ERR_MESSAGE_ILLEGAL',
  });
  expect(s.sends()).toHaveLength(1);
  await expect(s.p.send({ topic: 'T', body: Buffer.from('x') })).rejects.toMatchObject({
    code: 'ERR_SERVICE_NOT_AVAILABLE',
  });
  expect(s.sends()).toHaveLength(4);
  await s.close();
});

test('RocketMQ: an unknown topic is sent through the TBW102 route with defaultTopicQueueNums queues per broker', async () => {
  const tbw = routeOf({ 'broker-a': 'http://a:1' }, 8);
  const s = await setup((_a, r) => {
    if (r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC)
      return (r.header as { topic: string }).topic === 'TBW102'
        ? ok({}, json(tbw))
        : { code: 17, header: {}, remark: 'no route' };
    return sendOk(r);
  });
  for (let i = 0; i < 6; i++) await s.p.send({ topic: 'NewTopic', body: Buffer.from('x') });
  for (const c of s.sends()) {
    expect((c.request.header as { topic: string }).topic).toBe('NewTopic');
    expect((c.request.header as { queueId: number }).queueId).toBeLessThan(4);
  }
  await s.close();
});

test('validation: topic, body, size, system topics, state', async () => {
  const s = await setup((_a, r) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC ? ok({}, json(twoBrokers)) : sendOk(r),
  );
  const field = async (p: Promise<unknown>) => ((await p.catch((e: unknown) => e)) as InvalidArgumentError).field;
  expect(await field(s.p.send({ topic: 'a/b', body: Buffer.from('x') }))).toBe('message.topic');
  expect(await field(s.p.send({ topic: 'TBW102', body: Buffer.from('x') }))).toBe('message.topic');
  expect(await field(s.p.send({ topic: 'T', body: Buffer.alloc(0) }))).toBe('message.body');
  expect(await field(s.p.send({ topic: 'T', body: 'str' as never }))).toBe('message.body');
  expect(await field(s.p.send({ topic: 'T', body: Buffer.alloc(4 * 1024 * 1024 + 1) }))).toBe('message.body');
  expect(await field(s.p.send({ topic: 'T', body: Buffer.from('x'), delayTimeLevel: -1 }))).toBe(
    'message.delayTimeLevel',
  );
  expect(await field(s.p.send({ topic: 'T', body: Buffer.from('x'), properties: { a: 1 as never } }))).toBe(
    'message.properties.a',
  );
  expect(s.sends()).toHaveLength(0);
  await s.close();
  await expect(s.p.send({ topic: 'T', body: Buffer.from('x') })).rejects.toBeInstanceOf(StateError);
  await expect(s.p.start()).rejects.toBeInstanceOf(StateError);
});

test('send before start is a StateError; shutdown is idempotent', async () => {
  const p = new Producer({ endpoints: 'http://127.0.0.1:1' });
  await expect(p.send({ topic: 'T', body: Buffer.from('x') })).rejects.toBeInstanceOf(StateError);
  const a = p.shutdown();
  expect(p.shutdown()).toBe(a);
  await a;
});

// ---------------------------------------------------------------- autoBatch

/** Answers a single send as sendOk does, and a batch as a broker does: first queue offset, every offset id. */
const sendOrBatchOk = (r: RemotingRequest) => {
  if (r.code !== RequestCode.SEND_BATCH_MESSAGE) return sendOk(r);
  const n = decodeBatchBody(r.body!).length;
  const ids = Array.from({ length: n }, (_, i) => `0A00000100000000000000000000${String(i).padStart(4, '0')}`);
  return ok({ msgId: ids.join(','), queueId: (r.header as { queueId: number }).queueId, queueOffset: 40 });
};
const route =
  (answer: (addr: string, r: RemotingRequest) => ReturnType<typeof ok>) => (a: string, r: RemotingRequest) =>
    r.code === RequestCode.GET_ROUTEINFO_BY_TOPIC ? ok({}, json(twoBrokers)) : answer(a, r);
const body = (i: number) => Buffer.from(`m${i}`);

test('autoBatch: plain sends made in one turn travel as one batch; each resolves with its own result', async () => {
  const s = await setup(route((_a, r) => sendOrBatchOk(r)));
  const results = await Promise.all(
    Array.from({ length: 5 }, (_, i) => s.p.send({ topic: 'T', body: body(i), tags: `t${i}`, flag: i })),
  );
  expect(s.sends()).toHaveLength(0);
  expect(s.batches()).toHaveLength(1);
  const batch = s.batches()[0]!;
  const h = batch.request.header as Record<string, unknown>;
  expect(h).toMatchObject({ topic: 'T', batch: true, sysFlag: 0 });
  expect(string2messageProperties(h.properties as string)).toEqual({ WAIT: 'true' });
  const elements = decodeBatchBody(batch.request.body!);
  expect(elements.map((e) => e.body.toString())).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
  expect(elements.map((e) => e.flag)).toEqual([0, 1, 2, 3, 4]);
  expect(elements.map((e) => e.properties.TAGS)).toEqual(['t0', 't1', 't2', 't3', 't4']);
  results.forEach((r, i) => {
    expect(r.msgId).toBe(elements[i]!.properties.UNIQ_KEY);
    expect(r.offsetMsgId).toBe(`0A00000100000000000000000000${String(i).padStart(4, '0')}`);
    expect(r.queueOffset).toBe(40 + i);
    expect(r.messageQueue).toEqual({ topic: 'T', brokerName: h.bname, queueId: h.queueId });
    expect(r.sendStatus).toBe('SEND_OK');
  });
  expect(new Set(results.map((r) => r.msgId)).size).toBe(5);
  // Awaited one by one, sends go alone, as without autoBatch.
  for (let i = 0; i < 3; i++) await s.p.send({ topic: 'T', body: body(i) });
  expect(s.sends()).toHaveLength(3);
  expect(s.batches()).toHaveLength(1);
  await s.close();
});

test('autoBatch: sends of different topics form different batches; maxMessages splits a burst', async () => {
  const s = await setup(
    route((_a, r) => sendOrBatchOk(r)),
    { autoBatch: { maxMessages: 4 } },
  );
  await Promise.all([
    ...Array.from({ length: 10 }, (_, i) => s.p.send({ topic: 'T', body: body(i) })),
    ...Array.from({ length: 2 }, (_, i) => s.p.send({ topic: 'U', body: body(i) })),
  ]);
  const sizes = (topic: string) => [
    ...s
      .batches()
      .filter((c) => (c.request.header as { topic: string }).topic === topic)
      .map((c) => decodeBatchBody(c.request.body!).length),
    ...s
      .sends()
      .filter((c) => (c.request.header as { topic: string }).topic === topic)
      .map(() => 1),
  ];
  expect(sizes('T')).toEqual([4, 4, 2]);
  expect(sizes('U')).toEqual([2]);
  await s.close();
});

test('autoBatch: ordered, delayed, compressed, timed, abortable and no-WAIT sends go alone', async () => {
  const s = await setup(route((_a, r) => sendOrBatchOk(r)));
  const signal = new AbortController().signal;
  await Promise.all([
    s.p.send({ topic: 'T', body: body(0) }, { shardingKey: 'k' }),
    s.p.send({ topic: 'T', body: body(1) }, { selector: (mqs) => mqs[0]! }),
    s.p.send({ topic: 'T', body: body(2), delayTimeLevel: 2 }),
    s.p.send({ topic: 'T', body: Buffer.alloc(5000, 1) }),
    s.p.send({ topic: 'T', body: body(4) }, { timeoutMs: 1000 }),
    s.p.send({ topic: 'T', body: body(5) }, { signal }),
    s.p.send({ topic: 'T', body: body(6), properties: { WAIT: 'false' } }),
    s.p.send({ topic: 'T', body: body(7), properties: { DELAY: '3' } }),
  ]);
  expect(s.batches()).toHaveLength(0);
  expect(s.sends()).toHaveLength(8);
  await s.close();
});

test('autoBatch: a failed batch is retried whole on another broker; a refused one fails every send', async () => {
  let refuse = false;
  const s = await setup(
    route((addr, r) => {
      if (refuse) return { code: 13, header: {}, remark: 'illegal' } as ReturnType<typeof ok>;
      if (addr === 'http://a:1') throw new TransportError('connection refused');
      return sendOrBatchOk(r);
    }),
  );
  const ok3 = await Promise.all([0, 1, 2].map((i) => s.p.send({ topic: 'T', body: body(i) })));
  expect(ok3.map((r) => r.messageQueue.brokerName)).toEqual(['broker-b', 'broker-b', 'broker-b']);
  expect(ok3.map((r) => r.queueOffset)).toEqual([40, 41, 42]);
  for (const c of s.batches()) expect(decodeBatchBody(c.request.body!)).toHaveLength(3);
  refuse = true;
  const settled = await Promise.allSettled([0, 1].map((i) => s.p.send({ topic: 'T', body: body(i) })));
  for (const r of settled) expect(r).toMatchObject({ status: 'rejected', reason: { code: 'ERR_MESSAGE_ILLEGAL' } });
  await s.close();
});

test('autoBatch: false sends every message alone, round robin; shutdown sends what is waiting first', async () => {
  const s = await setup(
    route((_a, r) => sendOrBatchOk(r)),
    { autoBatch: false },
  );
  await Promise.all(Array.from({ length: 4 }, (_, i) => s.p.send({ topic: 'T', body: body(i) })));
  expect(s.batches()).toHaveLength(0);
  const queues = s
    .sends()
    .map(
      (c) => `${(c.request.header as { bname: string }).bname}:${(c.request.header as { queueId: number }).queueId}`,
    );
  expect(new Set(queues).size).toBe(4);
  await s.close();

  const t = await setup(route((_a, r) => sendOrBatchOk(r)));
  const pending = Array.from({ length: 3 }, (_, i) => t.p.send({ topic: 'T', body: body(i) }));
  const closing = t.p.shutdown();
  expect((await Promise.all(pending)).map((r) => r.queueOffset)).toEqual([40, 41, 42]);
  await closing;
  await t.close();
});

test('autoBatch options: limits checked and named', () => {
  const field = (o: Partial<ProducerOptions>) => {
    try {
      new Producer({ endpoints: 'http://ep:1', ...o });
      return undefined;
    } catch (e) {
      return (e as InvalidArgumentError).field;
    }
  };
  expect(field({ autoBatch: { maxMessages: 0 } })).toBe('autoBatch.maxMessages');
  expect(field({ autoBatch: { maxBytes: 2048 }, maxMessageSizeBytes: 1024 })).toBe('autoBatch.maxBytes');
  expect(field({ autoBatch: { max: 1 } as never })).toBe('max');
  expect(field({ autoBatch: 'yes' as never })).toBe('autoBatch');
  expect(new Producer({ endpoints: 'http://ep:1' }).options.autoBatch).toEqual({ maxMessages: 32, maxBytes: 32768 });
  expect(new Producer({ endpoints: 'http://ep:1', maxMessageSizeBytes: 1000 }).options.autoBatch).toEqual({
    maxMessages: 32,
    maxBytes: 1000,
  });
  expect(new Producer({ endpoints: 'http://ep:1', autoBatch: false }).options.autoBatch).toBe(false);
});
