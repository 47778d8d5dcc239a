/**
 * QueueLocker ordering: an unlock waits for lock calls already on their way (a lock the broker handled
 * after the unlock would keep the queue from its next owner until it expires), and renewals leave out
 * queues being given up.
 */
import type { MessageQueue } from '../../../../../src/common/message.js';
import { silentLogger } from '../../../../../src/common/logger.js';
import type { MQClientInstance } from '../../../../../src/client/instance/mq-client-instance.js';
import { ProcessQueue } from '../../../../../src/client/consumer/process-queue.js';
import { QueueLocker } from '../../../../../src/client/consumer/push/queue-locker.js';
import { mqOf } from '../../helpers.js';

function fakeInstance() {
  const log: string[] = [];
  let release: (() => void) | undefined;
  const api = {
    lockBatchMQ: async (_addr: string, body: { mqSet: MessageQueue[] }) => {
      log.push(`lock ${body.mqSet.map((q) => q.queueId).join(',')}`);
      await new Promise<void>((r) => (release = r));
      log.push('lock answered');
      return body.mqSet;
    },
    unlockBatchMQ: async (_addr: string, body: { mqSet: MessageQueue[] }) => {
      log.push(`unlock ${body.mqSet.map((q) => q.queueId).join(',')}`);
    },
  };
  const instance = { clientId: 'c1', findBrokerAddressInPublish: () => 'addr', api } as unknown as MQClientInstance;
  return { instance, log, answerLock: () => release?.() };
}

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

test('an unlock is sent only after the lock calls on their way were answered', async () => {
  const f = fakeInstance();
  const locker = new QueueLocker(f.instance, 'G', silentLogger);
  const locking = locker.lockBatch([mqOf(0), mqOf(1)]);
  await tick();
  const unlocking = locker.unlockBatch([mqOf(0)]);
  await tick();
  expect(f.log).toEqual(['lock 0,1']);
  f.answerLock();
  await locking;
  await unlocking;
  expect(f.log).toEqual(['lock 0,1', 'lock answered', 'unlock 0']);
});

test('lockAll renews only the queues still consumed, and marks them locked', async () => {
  const f = fakeInstance();
  const locker = new QueueLocker(f.instance, 'G', silentLogger);
  const kept = new ProcessQueue(0);
  const dropped = new ProcessQueue(0);
  dropped.dropped = true;
  const renewal = locker.lockAll(
    [
      { mq: mqOf(0), pq: kept },
      { mq: mqOf(1), pq: dropped },
    ],
    () => 1234,
  );
  await tick();
  f.answerLock();
  await renewal;
  expect(f.log).toEqual(['lock 0', 'lock answered']);
  expect(kept.locked).toBe(true);
  expect(kept.lastLockTimestamp).toBe(1234);
  expect(dropped.locked).toBe(false);
});
