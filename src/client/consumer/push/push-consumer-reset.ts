/**
 * RESET_CONSUMER_CLIENT_OFFSET for a running PushConsumer (RocketMQ: MQClientInstance.resetOffset): the
 * held queues among the broker's table stop (dropped: what they cached and what their listeners are
 * still running is not committed), their offset is set to the new one and frozen there, and they are
 * given up (the offset written, then forgotten); the rebalance that follows takes them again from the
 * committed offset, which the broker has already moved. RocketMQ waits a fixed 10 s between the drop and
 * the offset update; here the give-up waits for what it needs (an orderly queue's running batch, a pull
 * on its way), so the reset takes effect as soon as the queue is free.
 */
import { messageQueueKey, type MessageQueue } from '../../../common/message.js';
import type { PushConsumerHost } from './push-consumer-run.js';

export async function resetPushOffsets(
  host: PushConsumerHost,
  topic: string,
  offsetTable: ReadonlyArray<readonly [MessageQueue, number]>,
): Promise<void> {
  const run = host.run();
  if (!run || !host.isRunning()) return;
  const wanted = new Map(offsetTable.map(([mq, offset]) => [messageQueueKey(mq), offset]));
  const held: Array<{ mq: MessageQueue; offset: number }> = [];
  for (const [key, e] of run.rebalance.processQueueTable) {
    const offset = wanted.get(key);
    if (e.mq.topic !== topic || offset === undefined) continue;
    e.pq.dropped = true;
    // Frozen: a listener finishing on the dropped queue must not move it back.
    run.offsetStore.updateAndFreezeOffset(e.mq, offset);
    held.push({ mq: e.mq, offset });
  }
  if (held.length === 0) return;
  host.logger.info({ topic, queues: held }, 'offsets reset by the broker: queues dropped and taken again');
  await Promise.all(held.map(({ mq }) => run.rebalance.removeProcessQueue(mq)));
  if (host.isRunning()) run.instance.rebalanceImmediately();
}
