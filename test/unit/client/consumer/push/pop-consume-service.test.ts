import type { PoppedMessage } from '../../../../../src/client/consumer/pop-api-wrapper.js';
import {
  PopConsumeService,
  type PopConsumeServiceDeps,
  type PopProcessQueue,
} from '../../../../../src/client/consumer/push/pop-consume-service.js';
import { ConsumeConcurrentlyStatus } from '../../../../../src/client/consumer/consumer-constants.js';
import type { ConsumeFailureEvent } from '../../../../../src/client/consumer/push/consume-message-concurrently-service.js';
import { silentLogger } from '../../../../../src/common/logger.js';
import type { MessageExt } from '../../../../../src/common/message.js';
import { ManualClock } from '../../../../support/manual-clock.js';
import { mqOf, msgAt } from '../../helpers.js';

async function until(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 1));
  }
}

function popped(clock: ManualClock, offset: number, reconsumeTimes = 0, invisibleTime = 10_000): PoppedMessage {
  const message = msgAt(offset, 4, { reconsumeTimes });
  const handle = {
    ckOffset: 0,
    popTime: clock.now(),
    invisibleTime,
    reviveQid: 0,
    retry: '0' as const,
    brokerName: 'b',
    queueId: 0,
    queueOffset: offset,
  };
  return { message, handle, receiptHandle: `0 ${handle.popTime} ${invisibleTime} 0 0 b 0 ${offset}` };
}

function setup(listener: PopConsumeServiceDeps['listener'], over: Partial<PopConsumeServiceDeps> = {}) {
  const clock = new ManualClock();
  const acks: number[][] = [];
  const changed: Array<{ offset: number; ms: number }> = [];
  const dlq: number[] = [];
  const failures: ConsumeFailureEvent[] = [];
  const deps: PopConsumeServiceDeps = {
    consumerGroup: 'g',
    consumeThreadMax: 4,
    consumeMessageBatchMaxSize: 1,
    maxReconsumeTimes: 2,
    retryDelaysMs: [100, 200, 300],
    listener,
    clock,
    logger: silentLogger,
    ack: async (ps) => void acks.push(ps.map((p) => p.message.queueOffset)),
    changeInvisibleTime: async (p, ms) => void changed.push({ offset: p.message.queueOffset, ms }),
    sendToDeadLetterQueue: async (m) => void dlq.push(m.queueOffset),
    onConsumeFailure: (e) => failures.push(e),
    ...over,
  };
  const pq: PopProcessQueue = { mq: mqOf(-1), dropped: false, waitAckCount: 0, lastPopTimestamp: 0 };
  return { clock, service: new PopConsumeService(deps), pq, acks, changed, dlq, failures };
}

describe('PopConsumeService', () => {
  it('acknowledges the successes of one moment together and counts them off the assignment', async () => {
    const { clock, service, pq, acks } = setup(() => undefined);
    const batch = [0, 1, 2, 3, 4].map((o) => popped(clock, o));
    pq.waitAckCount = batch.length;
    service.submit(batch, pq);
    await until(() => acks.flat().length === 5);
    expect(acks).toEqual([[0, 1, 2, 3, 4]]);
    expect(pq.waitAckCount).toBe(0);
  });

  it('hands a failure back with the retry delay of its level, and past maxReconsumeTimes sends it to the DLQ', async () => {
    const listener = (msgs: MessageExt[]) =>
      msgs[0]!.queueOffset === 9
        ? ConsumeConcurrentlyStatus.CONSUME_SUCCESS
        : ConsumeConcurrentlyStatus.RECONSUME_LATER;
    const { clock, service, pq, acks, changed, dlq, failures } = setup(listener);
    service.submit([popped(clock, 0, 0), popped(clock, 1, 1), popped(clock, 2, 2), popped(clock, 9)], pq);
    await until(() => changed.length === 2 && dlq.length === 1 && acks.flat().length === 2);
    expect(changed.sort((a, b) => a.offset - b.offset)).toEqual([
      { offset: 0, ms: 100 },
      { offset: 1, ms: 200 },
    ]);
    // The dead-lettered message is acknowledged, so the broker does not deliver it again.
    expect(dlq).toEqual([2]);
    expect(acks.flat().sort()).toEqual([2, 9]);
    expect(failures.map((f) => f.messages[0]!.queueOffset).sort()).toEqual([0, 1, 2]);
  });

  it('leaves a batch whose invisible time ran out during the listener to the broker', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const { clock, service, pq, acks, changed } = setup(() => gate);
    pq.waitAckCount = 1;
    service.submit([popped(clock, 0, 0, 1000)], pq);
    await until(() => service.running === 1);
    clock.advance(1000);
    release();
    await until(() => pq.waitAckCount === 0);
    await new Promise((r) => setImmediate(r));
    expect(acks).toEqual([]);
    expect(changed).toEqual([]);
  });

  it('shutdown waits for the running listener and its acknowledgement, and drops what was queued', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let acked = false;
    const { clock, service, pq } = setup(() => gate, {
      consumeThreadMax: 1,
      ack: async () => {
        await new Promise((r) => setTimeout(r, 5));
        acked = true;
      },
    });
    service.submit([popped(clock, 0), popped(clock, 1), popped(clock, 2)], pq);
    await until(() => service.running === 1);
    const done = service.shutdown(clock.now() + 60_000);
    release();
    // The deadline is on the manual clock, so only the listener and the ack can end the wait.
    const result = await done;
    expect(result).toEqual({ unfinished: 0, droppedRequests: 2, unsettledAcks: 0 });
    expect(acked).toBe(true);
  });
});
