import {
  ConsumeMessageOrderlyService,
  ConsumeOrderlyStatus,
  type ConsumeOrderlyServiceDeps,
  type MessageListenerOrderly,
  type OrderlySuspendEvent,
} from '../../../../../src/client/consumer/push/consume-message-orderly-service.js';
import { MessageModel } from '../../../../../src/client/consumer/consumer-constants.js';
import { ProcessQueue } from '../../../../../src/client/consumer/process-queue.js';
import { RemoteBrokerOffsetStore } from '../../../../../src/client/consumer/remote-broker-offset-store.js';
import type { Logger } from '../../../../../src/common/logger.js';
import { silentLogger } from '../../../../../src/common/logger.js';
import { ManualClock } from '../../../../support/manual-clock.js';
import { mqOf, msgAt } from '../../helpers.js';

const mq = mqOf(0);
const SUSPEND_MS = 1000;

/** Yields to the event loop until `cond` holds (a worker lets I/O in between batches with setImmediate). */
async function until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 1));
  }
}

/**
 * An orderly service over one locked CLUSTERING queue holding `offsets`, with a listener that answers
 * with `answers` in turn (then nothing). Records every delivery, suspension, dead letter and warning.
 */
function setup(listener: MessageListenerOrderly, over: Partial<ConsumeOrderlyServiceDeps> = {}, offsets = [0, 1]) {
  const clock = new ManualClock();
  const store = new RemoteBrokerOffsetStore(
    { queryConsumerOffset: async () => -1, updateConsumerOffset: async () => {} },
    silentLogger,
  );
  const suspends: OrderlySuspendEvent[] = [];
  const deadLetters: number[] = [];
  const warnings: string[] = [];
  const logger: Logger = { ...silentLogger, warn: (_o, msg) => void warnings.push(msg ?? '') };
  const svc = new ConsumeMessageOrderlyService({
    consumerGroup: 'g',
    messageModel: MessageModel.CLUSTERING,
    consumeThreadMax: 1,
    consumeMessageBatchMaxSize: 2,
    suspendCurrentQueueTimeMillis: SUSPEND_MS,
    maxReconsumeTimes: Number.MAX_SAFE_INTEGER,
    listener,
    keyConcurrency: undefined,
    lockMaxLiveTimeMs: Number.MAX_SAFE_INTEGER,
    offsetStore: store,
    clock,
    logger,
    lockOne: async () => true,
    sendToDeadLetterQueue: async (m) => (deadLetters.push(m.queueOffset), true),
    onSuspend: (e) => void suspends.push(e),
    ...over,
  });
  const pq = new ProcessQueue(clock.now());
  pq.locked = true;
  pq.lastLockTimestamp = clock.now();
  const msgs = offsets.map((o) => msgAt(o));
  pq.putMessage(msgs);
  return { svc, pq, store, clock, suspends, deadLetters, warnings, msgs };
}

/** A listener answering `answers` in turn, then nothing; records each delivery as `offset@reconsumeTimes`. */
function scripted(answers: unknown[], seen: string[]): MessageListenerOrderly {
  let call = 0;
  return (msgs) => {
    for (const m of msgs) seen.push(`${m.queueOffset}@${m.reconsumeTimes}`);
    return answers[call++] as ConsumeOrderlyStatus | undefined;
  };
}

describe('orderly listener results', () => {
  it('null is a failure (SUSPEND_CURRENT_QUEUE_A_MOMENT), logged as a listener bug; the batch comes back after the suspend time', async () => {
    const seen: string[] = [];
    const { svc, pq, store, clock, suspends, warnings, msgs } = setup(scripted([null], seen));
    svc.submitConsumeRequest(msgs, pq, mq);
    await until(() => suspends.length === 1);
    expect(store.readOffsetFromMemory(mq)).toBe(-1);
    expect(warnings).toContain(
      'orderly listener returned a value that is not a status: treated as SUSPEND_CURRENT_QUEUE_A_MOMENT',
    );
    await clock.advanceAsync(SUSPEND_MS);
    await until(() => store.readOffsetFromMemory(mq) === 2);
    expect(seen).toEqual(['0@0', '1@0', '0@1', '1@1']);
    await svc.shutdown(clock.now());
  });

  it('undefined is SUCCESS: the batch is committed', async () => {
    const seen: string[] = [];
    const { svc, pq, store, clock, suspends, warnings, msgs } = setup(scripted([undefined], seen));
    svc.submitConsumeRequest(msgs, pq, mq);
    await until(() => store.readOffsetFromMemory(mq) === 2);
    expect(seen).toEqual(['0@0', '1@0']);
    expect(suspends).toEqual([]);
    expect(warnings).toEqual([]);
    await svc.shutdown(clock.now());
  });
});

describe('where the orderly service differs from RocketMQ on purpose (it keeps messages rather than lose them)', () => {
  it('ROLLBACK with autoCommit is a suspension, not a commit (RocketMQ commits it with a warning)', async () => {
    const seen: string[] = [];
    const { svc, pq, store, clock, suspends, msgs } = setup(scripted([ConsumeOrderlyStatus.ROLLBACK], seen));
    svc.submitConsumeRequest(msgs, pq, mq);
    await until(() => suspends.length === 1);
    expect(store.readOffsetFromMemory(mq)).toBe(-1);
    expect(pq.msgCount).toBe(2);
    await clock.advanceAsync(SUSPEND_MS);
    await until(() => store.readOffsetFromMemory(mq) === 2);
    // The same batch again, in order, one failure more.
    expect(seen).toEqual(['0@0', '1@0', '0@1', '1@1']);
    await svc.shutdown(clock.now());
  });

  it('a batch with a dead-lettered message: that message is committed, the rest is consumed again without it (RocketMQ consumes the whole batch again)', async () => {
    const seen: string[] = [];
    const { svc, pq, store, clock, suspends, deadLetters, msgs } = setup(
      scripted([ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT], seen),
      { maxReconsumeTimes: 1 },
    );
    (msgs[0] as { reconsumeTimes: number }).reconsumeTimes = 1;
    svc.submitConsumeRequest(msgs, pq, mq);
    await until(() => suspends.length === 1);
    expect(deadLetters).toEqual([0]);
    expect(suspends[0]).toMatchObject({ deadLettered: 1, suspendMs: SUSPEND_MS });
    // Offset 0 is stored in the dead-letter queue: done. Offset 1 holds the committed offset.
    expect(store.readOffsetFromMemory(mq)).toBe(1);
    await clock.advanceAsync(SUSPEND_MS);
    await until(() => store.readOffsetFromMemory(mq) === 2);
    expect(seen).toEqual(['0@1', '1@0', '1@1']);
    expect(deadLetters).toEqual([0]);
    await svc.shutdown(clock.now());
  });

  it('a message whose dead-lettering failed stays in the batch and is consumed again', async () => {
    const seen: string[] = [];
    const { svc, pq, store, clock, suspends, msgs } = setup(
      scripted([ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT], seen),
      { maxReconsumeTimes: 0, sendToDeadLetterQueue: async () => false },
    );
    svc.submitConsumeRequest(msgs, pq, mq);
    await until(() => suspends.length === 1);
    expect(suspends[0]).toMatchObject({ deadLettered: 0 });
    expect(store.readOffsetFromMemory(mq)).toBe(-1);
    await clock.advanceAsync(SUSPEND_MS);
    await until(() => seen.length === 4);
    expect(seen).toEqual(['0@0', '1@0', '0@1', '1@1']);
    await svc.shutdown(clock.now());
  });
});
