/**
 * The trace dispatcher: appends never block and never throw, a full queue or a failing, slow or hung
 * sender drops records and counts them (one warning), and batches leave by count, size and age.
 */
import { AsyncTraceDispatcher, type TraceSend } from '../../../../src/client/trace/async-trace-dispatcher.js';
import { traceBean, type TraceContext } from '../../../../src/client/trace/trace-codec.js';
import { ManualClock } from '../../../support/manual-clock.js';

function logger() {
  const warns: string[] = [];
  const noop = (): void => undefined;
  return {
    warns,
    log: { debug: noop, info: noop, error: noop, warn: (_o: unknown, msg?: string) => void warns.push(String(msg)) },
  };
}

function pub(i: number, keys: string | null = null): TraceContext {
  return {
    traceType: 'Pub',
    timeStamp: 1000 + i,
    regionId: 'DefaultRegion',
    groupName: 'PG',
    costTime: 1,
    success: true,
    requestId: '',
    contextCode: 0,
    traceBeans: [traceBean({ topic: 'T', msgId: `M${i}`, keys })],
  };
}

interface Sent {
  topic: string;
  body: string;
  keys: readonly string[];
}

function recorder(): { send: TraceSend; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    sent,
    send: (topic, body, keys) => {
      sent.push({ topic, body: body.toString('utf8'), keys });
      return Promise.resolve();
    },
  };
}

test('records leave in one trace message after the wait threshold, with every record’s keys', async () => {
  const clock = new ManualClock();
  const { send, sent } = recorder();
  const d = new AsyncTraceDispatcher({ traceTopic: 'RMQ_SYS_TRACE_TOPIC', send, logger: logger().log, clock });
  expect(d.append(pub(1, 'k1 k2'))).toBe(true);
  expect(d.append(pub(2))).toBe(true);
  await clock.advanceAsync(100);
  expect(sent).toHaveLength(0); // younger than the 500 ms threshold
  await clock.advanceAsync(500);
  expect(sent).toHaveLength(1);
  expect(sent[0]?.topic).toBe('RMQ_SYS_TRACE_TOPIC');
  expect(sent[0]?.body.split('\u0002').filter(Boolean)).toHaveLength(2);
  expect([...(sent[0]?.keys ?? [])].sort()).toEqual(['M1', 'M2', 'k1', 'k2']);
  expect(d.stats()).toEqual({ appended: 2, sent: 2, dropped: 0, pending: 0 });
  await d.close();
});

test('a batch leaves when it holds batchSize records or nears maxMsgSize, without waiting', async () => {
  const clock = new ManualClock();
  const { send, sent } = recorder();
  const d = new AsyncTraceDispatcher({ traceTopic: 'T', send, logger: logger().log, clock, batchSize: 3 });
  for (let i = 0; i < 7; i++) d.append(pub(i));
  await clock.advanceAsync(100);
  expect(sent.map((s) => s.body.split('\u0002').filter(Boolean).length)).toEqual([3, 3]);
  const big = new AsyncTraceDispatcher({ traceTopic: 'T', send, logger: logger().log, clock, maxMsgSize: 10_200 });
  sent.length = 0;
  for (let i = 0; i < 4; i++) big.append(pub(i, 'k'.repeat(100)));
  await clock.advanceAsync(100);
  expect(sent.length).toBeGreaterThanOrEqual(1);
  await d.close();
  await big.close();
});

test('a full queue drops and counts, never throws, and warns once', async () => {
  const clock = new ManualClock();
  const { send } = recorder();
  const l = logger();
  const d = new AsyncTraceDispatcher({ traceTopic: 'T', send, logger: l.log, clock, queueSize: 5 });
  const accepted = Array.from({ length: 12 }, (_, i) => d.append(pub(i)));
  expect(accepted.filter(Boolean)).toHaveLength(5);
  expect(d.stats()).toMatchObject({ appended: 5, dropped: 7 });
  expect(l.warns).toHaveLength(1);
  await clock.advanceAsync(1000);
  expect(d.stats()).toEqual({ appended: 5, sent: 5, dropped: 7, pending: 0 });
  await d.close();
});

test('a throwing sender (sync or async) drops the batch and counts it; appends go on', async () => {
  const clock = new ManualClock();
  const l = logger();
  let calls = 0;
  const send: TraceSend = () => {
    calls++;
    if (calls === 1) throw new Error('no route for the trace topic');
    return Promise.reject(new Error('NO_PERMISSION'));
  };
  const d = new AsyncTraceDispatcher({ traceTopic: 'T', send, logger: l.log, clock });
  d.append(pub(1));
  await clock.advanceAsync(600);
  d.append(pub(2));
  d.append(pub(3));
  await clock.advanceAsync(600);
  expect(calls).toBe(2);
  expect(d.stats()).toEqual({ appended: 3, sent: 0, dropped: 3, pending: 0 });
  expect(l.warns).toHaveLength(1);
  await d.close();
});

test('a hung sender never blocks appends: its batches time out and later ones wait, then drop when too many', async () => {
  const clock = new ManualClock();
  const send: TraceSend = () => new Promise<void>(() => undefined); // never settles
  const d = new AsyncTraceDispatcher({
    traceTopic: 'T',
    send,
    logger: logger().log,
    clock,
    batchSize: 1,
    maxInFlight: 2,
    maxWaitingBatches: 3,
    sendTimeoutMs: 1000,
  });
  for (let i = 0; i < 10; i++) expect(d.append(pub(i))).toBe(true);
  await clock.advanceAsync(100);
  // 2 in flight, 3 waiting, 5 dropped at once
  expect(d.stats()).toMatchObject({ appended: 10, sent: 0, dropped: 5, pending: 5 });
  // each send is abandoned at its deadline, and the waiting batches take the freed slots
  await clock.advanceAsync(2000);
  expect(d.stats()).toMatchObject({ dropped: 7, pending: 3 });
  await clock.advanceAsync(2000);
  expect(d.stats()).toMatchObject({ dropped: 9, pending: 1 });
  await clock.advanceAsync(2000);
  expect(d.stats()).toEqual({ appended: 10, sent: 0, dropped: 10, pending: 0 });
  await d.close();
});

test('close sends what is queued at once and waits at most its bound; later appends are dropped', async () => {
  const clock = new ManualClock();
  const { send, sent } = recorder();
  const d = new AsyncTraceDispatcher({ traceTopic: 'T', send, logger: logger().log, clock });
  d.append(pub(1));
  await d.close();
  expect(sent).toHaveLength(1);
  expect(d.append(pub(2))).toBe(false);
  expect(d.stats()).toEqual({ appended: 1, sent: 1, dropped: 1, pending: 0 });

  const hung = new AsyncTraceDispatcher({
    traceTopic: 'T',
    send: () => new Promise<void>(() => undefined),
    logger: logger().log,
    clock,
  });
  hung.append(pub(3));
  const closing = hung.close(50);
  await clock.advanceAsync(60);
  await closing;
  expect(hung.stats()).toEqual({ appended: 1, sent: 0, dropped: 1, pending: 0 });
  await clock.advanceAsync(10_000); // the abandoned send's deadline fires without changing the counts
  expect(hung.stats()).toEqual({ appended: 1, sent: 0, dropped: 1, pending: 0 });
});
