import { ConsumeMessageConcurrentlyService } from '../../../../../src/client/consumer/push/consume-message-concurrently-service.js';
import { ConsumeMessageOrderlyService } from '../../../../../src/client/consumer/push/consume-message-orderly-service.js';
import { PushConsumerTasks } from '../../../../../src/client/consumer/push/push-consumer-tasks.js';
import type { PushConsumerHost } from '../../../../../src/client/consumer/push/push-consumer-run.js';
import { MessageModel } from '../../../../../src/client/consumer/consumer-constants.js';
import { ProcessQueue } from '../../../../../src/client/consumer/process-queue.js';
import { RemoteBrokerOffsetStore } from '../../../../../src/client/consumer/remote-broker-offset-store.js';
import { silentLogger } from '../../../../../src/common/logger.js';
import type { MessageExt } from '../../../../../src/common/message.js';
import { ManualClock } from '../../../../support/manual-clock.js';
import { mqOf, msgAt } from '../../helpers.js';

const CONSUME_TIMEOUT_MINUTES = 1;

/** Yields to the event loop until `cond` holds (a worker lets I/O in between batches with setImmediate). */
async function until(cond: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 1));
  }
}
const CONSUME_TIMEOUT_MS = CONSUME_TIMEOUT_MINUTES * 60_000;

/**
 * A running push consumer's periodic tasks over one queue holding offsets 0 and 1, whose listener holds
 * offset 0 until the test lets it go. Records what was sent back and what the listener saw, in order.
 */
function setup(orderly: boolean) {
  const clock = new ManualClock();
  const mq = mqOf(0);
  const pq = new ProcessQueue(clock.now());
  const store = new RemoteBrokerOffsetStore(
    { queryConsumerOffset: async () => -1, updateConsumerOffset: async () => {} },
    silentLogger,
  );
  const sentBack: { offset: number; delayLevel: number }[] = [];
  const seen: number[] = [];
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const listener = async (msgs: MessageExt[]): Promise<void> => {
    for (const m of msgs) seen.push(m.queueOffset);
    if (msgs.some((m) => m.queueOffset === 0)) await held;
  };
  const sendMessageBack = async (m: MessageExt, delayLevel: number): Promise<boolean> => {
    sentBack.push({ offset: m.queueOffset, delayLevel });
    return true;
  };
  const common = {
    consumerGroup: 'g',
    messageModel: MessageModel.BROADCASTING,
    consumeThreadMax: 1,
    consumeMessageBatchMaxSize: 1,
    offsetStore: store,
    clock,
    logger: silentLogger,
  };
  const service = orderly
    ? new ConsumeMessageOrderlyService({
        ...common,
        suspendCurrentQueueTimeMillis: 1000,
        maxReconsumeTimes: Number.MAX_SAFE_INTEGER,
        listener,
        keyConcurrency: undefined,
        lockMaxLiveTimeMs: 30_000,
        lockOne: async () => true,
        sendToDeadLetterQueue: async () => false,
        onSuspend: () => undefined,
      })
    : new ConsumeMessageConcurrentlyService({
        ...common,
        listener,
        sendMessageBack,
        onConsumeFailure: () => undefined,
      });
  const host = {
    options: {
      clock,
      consumeTimeoutMinutes: CONSUME_TIMEOUT_MINUTES,
      stallTimeoutMs: 0,
      rebalanceLockIntervalMs: 20_000,
    },
    logger: silentLogger,
    run: () => ({ rebalance: { processQueueTable: new Map([['q0', { mq, pq }]]) }, consume: service }),
    isRunning: () => true,
    isPaused: () => false,
    isOrderly: () => orderly,
  } as unknown as PushConsumerHost;
  const tasks = new PushConsumerTasks(host, sendMessageBack);
  const msgs = [msgAt(0), msgAt(1)];
  pq.putMessage(msgs);
  service.submitConsumeRequest(msgs, pq, mq);
  return { clock, pq, mq, store, tasks, sentBack, seen, release, service };
}

describe('the consume-timeout clean-up (RocketMQ: cleanExpireMsg, scheduled by ConsumeMessageConcurrentlyService only)', () => {
  it('RocketMQ: an orderly listener outlasting consumeTimeout is never sent back, and its queue stays in order', async () => {
    const { clock, pq, mq, store, tasks, sentBack, seen, release, service } = setup(true);
    tasks.start();
    expect(seen).toEqual([0]);
    await clock.advanceAsync(3 * CONSUME_TIMEOUT_MS + 1);
    expect(sentBack).toEqual([]);
    expect(pq.containsMessage(msgAt(0))).toBe(true);
    // Offset 1 waits behind offset 0: nothing was taken out from under the running listener.
    expect(seen).toEqual([0]);
    release();
    await until(() => seen.length === 2);
    expect(seen).toEqual([0, 1]);
    expect(store.readOffsetFromMemory(mq)).toBe(2);
    tasks.stop();
    await service.shutdown(clock.now());
    expect(clock.pendingTimers).toBe(0);
  });

  it('RocketMQ: a concurrent listener outlasting consumeTimeout has its message sent back with delay level 3', async () => {
    const { clock, pq, tasks, sentBack, release, service } = setup(false);
    tasks.start();
    await clock.advanceAsync(CONSUME_TIMEOUT_MS + 1);
    await clock.advanceAsync(CONSUME_TIMEOUT_MS);
    expect(sentBack).toEqual([{ offset: 0, delayLevel: 3 }]);
    expect(pq.containsMessage(msgAt(0))).toBe(false);
    release();
    tasks.stop();
    await service.shutdown(clock.now());
  });
});
