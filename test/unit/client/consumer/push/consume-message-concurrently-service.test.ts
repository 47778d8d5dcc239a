import {
  ACK_INDEX_ALL,
  ConsumeMessageConcurrentlyService,
  LOCAL_RECONSUME_DELAY_MS,
  type ConsumeConcurrentlyContext,
  type ConsumeFailureEvent,
  type ConsumeServiceDeps,
  type MessageListenerConcurrently,
} from '../../../../../src/client/consumer/push/consume-message-concurrently-service.js';
import { ConsumeConcurrentlyStatus, MessageModel } from '../../../../../src/client/consumer/consumer-constants.js';
import { ProcessQueue } from '../../../../../src/client/consumer/process-queue.js';
import { RemoteBrokerOffsetStore } from '../../../../../src/client/consumer/remote-broker-offset-store.js';
import { silentLogger } from '../../../../../src/common/logger.js';
import type { MessageExt } from '../../../../../src/common/message.js';
import { ManualClock } from '../../../../support/manual-clock.js';
import { mqOf, msgAt } from '../../helpers.js';

const mq = mqOf(0);

/** Yields to the event loop until `cond` holds (real timers: the listeners here await real time). */
async function until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 1));
  }
}

function setup(over: Partial<ConsumeServiceDeps> = {}, sendBackOk: (m: MessageExt) => boolean = () => true) {
  const clock = new ManualClock();
  const store = new RemoteBrokerOffsetStore(
    { queryConsumerOffset: async () => -1, updateConsumerOffset: async () => {} },
    silentLogger,
  );
  const sentBack: { offset: number; delayLevel: number }[] = [];
  const failures: ConsumeFailureEvent[] = [];
  const deps: ConsumeServiceDeps = {
    consumerGroup: 'g',
    messageModel: MessageModel.CLUSTERING,
    consumeThreadMax: 4,
    consumeMessageBatchMaxSize: 1,
    listener: () => ConsumeConcurrentlyStatus.CONSUME_SUCCESS,
    offsetStore: store,
    clock,
    logger: silentLogger,
    sendMessageBack: async (m, delayLevel) => {
      sentBack.push({ offset: m.queueOffset, delayLevel });
      return sendBackOk(m);
    },
    onConsumeFailure: (e) => failures.push(e),
    ...over,
  };
  const svc = new ConsumeMessageConcurrentlyService(deps);
  const pq = new ProcessQueue(clock.now());
  return { svc, pq, store, sentBack, failures, clock };
}

const ctx = (ackIndex = ACK_INDEX_ALL, delayLevelWhenNextConsume = 0): ConsumeConcurrentlyContext => ({
  messageQueue: mq,
  ackIndex,
  delayLevelWhenNextConsume,
});

describe('processConsumeResult (RocketMQ: ConsumeMessageConcurrentlyService)', () => {
  it.each([
    // [status, ackIndex, sent back offsets, committed offset]
    [ConsumeConcurrentlyStatus.CONSUME_SUCCESS, ACK_INDEX_ALL, [], 13],
    [ConsumeConcurrentlyStatus.CONSUME_SUCCESS, 1, [12], 13],
    [ConsumeConcurrentlyStatus.CONSUME_SUCCESS, 0, [11, 12], 13],
    [ConsumeConcurrentlyStatus.CONSUME_SUCCESS, -1, [10, 11, 12], 13],
    [ConsumeConcurrentlyStatus.RECONSUME_LATER, ACK_INDEX_ALL, [10, 11, 12], 13],
    [ConsumeConcurrentlyStatus.RECONSUME_LATER, 1, [10, 11, 12], 13],
  ] as const)('CLUSTERING %s with ackIndex %i sends back %j and commits %i', async (status, ack, back, committed) => {
    const { svc, pq, store, sentBack } = setup();
    const msgs = [10, 11, 12].map((o) => msgAt(o));
    pq.putMessage(msgs);
    await svc.processConsumeResult(status, ctx(ack), msgs, pq, mq);
    expect(sentBack.map((s) => s.offset)).toEqual(back);
    expect(store.readOffsetFromMemory(mq)).toBe(committed);
  });

  it('passes delayLevelWhenNextConsume to the send-back', async () => {
    const { svc, pq, sentBack } = setup();
    const msgs = [msgAt(0)];
    pq.putMessage(msgs);
    await svc.processConsumeResult(ConsumeConcurrentlyStatus.RECONSUME_LATER, ctx(ACK_INDEX_ALL, -1), msgs, pq, mq);
    expect(sentBack).toEqual([{ offset: 0, delayLevel: -1 }]);
  });

  it('a failed send-back keeps the message in the queue, holding the offset, and re-consumes it after 5 s with reconsumeTimes+1', async () => {
    const seen: { offset: number; reconsumeTimes: number }[] = [];
    const { svc, pq, store, clock, failures } = setup(
      {
        listener: (ms) => {
          for (const m of ms) seen.push({ offset: m.queueOffset, reconsumeTimes: m.reconsumeTimes });
          return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        },
      },
      (m) => m.queueOffset !== 11,
    );
    const msgs = [10, 11, 12].map((o) => msgAt(o));
    pq.putMessage(msgs);
    await svc.processConsumeResult(ConsumeConcurrentlyStatus.RECONSUME_LATER, ctx(), msgs, pq, mq);
    expect(store.readOffsetFromMemory(mq)).toBe(11);
    expect(pq.msgCount).toBe(1);
    expect(failures[0]).toMatchObject({ sentBack: 2, retriedLocally: 1 });
    clock.advance(LOCAL_RECONSUME_DELAY_MS - 1);
    expect(seen).toEqual([]);
    clock.advance(1);
    await until(() => seen.length > 0 && store.readOffsetFromMemory(mq) === 13);
    expect(seen).toEqual([{ offset: 11, reconsumeTimes: 1 }]);
    expect(store.readOffsetFromMemory(mq)).toBe(13);
  });

  it('BROADCASTING drops failures without sending them back', async () => {
    const { svc, pq, store, sentBack, failures } = setup({ messageModel: MessageModel.BROADCASTING });
    const msgs = [msgAt(0), msgAt(1)];
    pq.putMessage(msgs);
    await svc.processConsumeResult(ConsumeConcurrentlyStatus.RECONSUME_LATER, ctx(), msgs, pq, mq);
    expect(sentBack).toEqual([]);
    expect(failures[0]).toMatchObject({ dropped: 2 });
    expect(store.readOffsetFromMemory(mq)).toBe(2);
  });

  it('skips the send-back of a message no longer held (expired and cleaned)', async () => {
    const { svc, pq, sentBack } = setup();
    const msgs = [msgAt(0), msgAt(1)];
    pq.putMessage(msgs);
    pq.removeMessage([msgs[0] as MessageExt], 0);
    await svc.processConsumeResult(ConsumeConcurrentlyStatus.RECONSUME_LATER, ctx(), msgs, pq, mq);
    expect(sentBack.map((s) => s.offset)).toEqual([1]);
  });

  it('offsets only move forward, and a dropped queue updates nothing', async () => {
    const { svc, pq, store } = setup();
    store.updateOffset(mq, 100, false);
    pq.putMessage([msgAt(5)]);
    await svc.processConsumeResult(ConsumeConcurrentlyStatus.CONSUME_SUCCESS, ctx(), [msgAt(5)], pq, mq);
    expect(store.readOffsetFromMemory(mq)).toBe(100);
    const b = setup();
    b.pq.putMessage([msgAt(5)]);
    b.pq.dropped = true;
    await b.svc.processConsumeResult(ConsumeConcurrentlyStatus.CONSUME_SUCCESS, ctx(), [msgAt(5)], b.pq, mq);
    expect(b.store.readOffsetFromMemory(mq)).toBe(-1);
  });
});

describe('ConsumeRequest (RocketMQ: ConsumeRequest.run)', () => {
  async function runOne(listener: MessageListenerConcurrently, msg = msgAt(0)) {
    const s = setup({ listener });
    s.pq.putMessage([msg]);
    s.svc.submitConsumeRequest([msg], s.pq, mq);
    await s.svc.shutdown(s.clock.now() + 1000);
    return s;
  }

  const throwing: MessageListenerConcurrently = () => {
    throw new Error('boom');
  };
  const rejecting: MessageListenerConcurrently = () => Promise.reject(new Error('boom'));
  const bogus: MessageListenerConcurrently = () => 'OK' as unknown as ConsumeConcurrentlyStatus;
  const nullish: MessageListenerConcurrently = () => null as unknown as ConsumeConcurrentlyStatus;
  const later: MessageListenerConcurrently = async () => ConsumeConcurrentlyStatus.RECONSUME_LATER;
  const cases: [string, MessageListenerConcurrently][] = [
    ['a throw', throwing],
    ['a rejection', rejecting],
    ['a bogus value', bogus],
    ['null', nullish],
    ['an explicit RECONSUME_LATER', later],
  ];
  it.each(cases)('%s counts as RECONSUME_LATER', async (_n, listener) => {
    const s = await runOne(listener);
    expect(s.sentBack.map((x) => x.offset)).toEqual([0]);
    expect(s.failures[0]?.status).toBe(ConsumeConcurrentlyStatus.RECONSUME_LATER);
  });

  const successes: [string, MessageListenerConcurrently][] = [
    ['a sync listener returning nothing', () => undefined],
    ['an async listener resolving with nothing', async () => {}],
    ['an explicit CONSUME_SUCCESS', async () => ConsumeConcurrentlyStatus.CONSUME_SUCCESS],
  ];
  it.each(successes)('%s counts as CONSUME_SUCCESS and commits', async (_n, listener) => {
    const s = await runOne(listener);
    expect(s.sentBack).toEqual([]);
    expect(s.failures).toEqual([]);
    expect(s.store.readOffsetFromMemory(mq)).toBe(1);
  });

  it('restores the real topic of a retry message and sets CONSUME_START_TIME', async () => {
    let got: MessageExt | undefined;
    const msg = msgAt(0, 1, { topic: '%RETRY%g', properties: { RETRY_TOPIC: 'Real' } });
    const s = await runOne((ms) => {
      got = ms[0];
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    }, msg);
    expect(got?.topic).toBe('Real');
    expect(got?.properties?.CONSUME_START_TIME).toBe(String(s.clock.now()));
  });

  it('stamps each batch with the time its consumption started, also when batches follow in the same ms', async () => {
    const starts: string[] = [];
    const s = setup({
      listener: (ms) => {
        starts.push(ms[0]?.properties?.CONSUME_START_TIME ?? '');
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      },
    });
    const t0 = s.clock.now();
    const msgs = [msgAt(0), msgAt(1), msgAt(2)];
    s.pq.putMessage(msgs);
    s.svc.submitConsumeRequest(msgs.slice(0, 2), s.pq, mq);
    await until(() => starts.length === 2);
    s.clock.advance(7);
    s.svc.submitConsumeRequest(msgs.slice(2), s.pq, mq);
    await until(() => starts.length === 3);
    expect(starts).toEqual([String(t0), String(t0), String(t0 + 7)]);
  });

  it('gives the listener the context RocketMQ gives', async () => {
    let c: ConsumeConcurrentlyContext | undefined;
    await runOne((_ms, ctx2) => {
      c = { ...ctx2 };
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
    });
    expect(c).toEqual({ messageQueue: mq, delayLevelWhenNextConsume: 0, ackIndex: 2147483647 });
  });

  it('cuts a pull into batches of consumeMessageBatchMaxSize', async () => {
    const sizes: number[] = [];
    const s = setup({
      consumeMessageBatchMaxSize: 3,
      listener: (ms) => {
        sizes.push(ms.length);
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      },
    });
    const msgs = Array.from({ length: 8 }, (_, i) => msgAt(i));
    s.pq.putMessage(msgs);
    s.svc.submitConsumeRequest(msgs, s.pq, mq);
    await s.svc.shutdown(s.clock.now() + 1000);
    expect(sizes).toEqual([3, 3, 2]);
    expect(s.store.readOffsetFromMemory(mq)).toBe(8);
  });

  it('cuts batches when they are taken: in submit order, never across two pulls, queued counted in batches', async () => {
    const batches: number[][] = [];
    let release: (() => void) | undefined;
    const s = setup({
      consumeThreadMax: 1,
      consumeMessageBatchMaxSize: 3,
      listener: (ms) => {
        batches.push(ms.map((m) => m.queueOffset));
        if (batches.length > 1) return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        return new Promise((r) => (release = () => r(ConsumeConcurrentlyStatus.CONSUME_SUCCESS)));
      },
    });
    const first = Array.from({ length: 4 }, (_, i) => msgAt(i));
    const second = Array.from({ length: 5 }, (_, i) => msgAt(4 + i));
    s.pq.putMessage([...first, ...second]);
    s.svc.submitConsumeRequest(first, s.pq, mq);
    s.svc.submitConsumeRequest(second, s.pq, mq);
    await until(() => release !== undefined);
    expect(s.svc.queued).toBe(3); // [3], then [4..6] and [7, 8] of the second pull
    release?.();
    await until(() => s.store.readOffsetFromMemory(mq) === 9);
    expect(batches).toEqual([[0, 1, 2], [3], [4, 5, 6], [7, 8]]);
    expect(s.svc.queued).toBe(0);
  });

  it('runs at most consumeThreadMax listeners at once', async () => {
    let active = 0;
    let peak = 0;
    const s = setup({
      consumeThreadMax: 3,
      listener: async () => {
        active++;
        peak = Math.max(peak, active);
        await new Promise((r) => setTimeout(r, 2));
        active--;
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      },
    });
    const msgs = Array.from({ length: 12 }, (_, i) => msgAt(i));
    s.pq.putMessage(msgs);
    s.svc.submitConsumeRequest(msgs, s.pq, mq);
    await until(() => s.store.readOffsetFromMemory(mq) === 12);
    expect(peak).toBe(3);
    expect(s.store.readOffsetFromMemory(mq)).toBe(12);
  });

  it('a sync listener takes the requests back to back, and lets I/O in after a 5 ms slice', async () => {
    const s: ReturnType<typeof setup> = setup({
      listener: () => {
        s.clock.advance(2); // each call "takes" 2 ms
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      },
    });
    const msgs = Array.from({ length: 20 }, (_, i) => msgAt(i));
    s.pq.putMessage(msgs);
    s.svc.submitConsumeRequest(msgs, s.pq, mq);
    // Three calls (6 ms) ran before submit returned; then the worker yielded to the event loop.
    expect(s.store.readOffsetFromMemory(mq)).toBe(3);
    const seen: number[] = [];
    for (let i = 0; i < 20 && s.store.readOffsetFromMemory(mq) < 20; i++) {
      seen.push(await new Promise<number>((r) => setImmediate(() => r(s.store.readOffsetFromMemory(mq)))));
    }
    // The event loop got a turn after every three calls (one 6 ms slice), until all 20 were done.
    expect(seen).toEqual([6, 9, 12, 15, 18, 20]);
  });

  it('an async listener parks its worker and another worker takes the next request', async () => {
    const started: number[] = [];
    const release: (() => void)[] = [];
    const s = setup({
      consumeThreadMax: 2,
      listener: (ms) => {
        started.push(ms[0]!.queueOffset);
        // Offset 0 answers later; the others at once.
        if (ms[0]!.queueOffset !== 0) return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
        return new Promise((r) => release.push(() => r(ConsumeConcurrentlyStatus.CONSUME_SUCCESS)));
      },
    });
    const msgs = Array.from({ length: 5 }, (_, i) => msgAt(i));
    s.pq.putMessage(msgs);
    s.svc.submitConsumeRequest(msgs, s.pq, mq);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2, 3, 4]);
    // Offset 0 is still in flight: the committed offset stays at it.
    expect(s.store.readOffsetFromMemory(mq)).toBe(0);
    release[0]!();
    await s.svc.shutdown(s.clock.now() + 1000);
    expect(s.store.readOffsetFromMemory(mq)).toBe(5);
  });

  it('skips a dropped queue and discards the result of a queue dropped while consuming', async () => {
    let calls = 0;
    const s: ReturnType<typeof setup> = setup({
      listener: () => {
        calls++;
        s.pq.dropped = true;
        return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
      },
    });
    s.pq.putMessage([msgAt(0), msgAt(1)]);
    s.svc.submitConsumeRequest([msgAt(0), msgAt(1)], s.pq, mq);
    await s.svc.shutdown(s.clock.now() + 1000);
    expect(calls).toBe(1);
    expect(s.store.readOffsetFromMemory(mq)).toBe(-1);
  });

  it('shutdown waits for running listeners until the deadline and reports what did not finish', async () => {
    let release: (() => void) | undefined;
    const s = setup({
      consumeThreadMax: 1,
      listener: () =>
        new Promise((r) => {
          release = () => r(ConsumeConcurrentlyStatus.CONSUME_SUCCESS);
        }),
    });
    const msgs = [msgAt(0), msgAt(1), msgAt(2)];
    s.pq.putMessage(msgs);
    s.svc.submitConsumeRequest(msgs, s.pq, mq);
    await until(() => release !== undefined);
    const done = s.svc.shutdown(s.clock.now() + 50);
    s.clock.advance(50);
    await expect(done).resolves.toEqual({ unfinished: 1, droppedRequests: 2 });
    release?.();
  });
});
