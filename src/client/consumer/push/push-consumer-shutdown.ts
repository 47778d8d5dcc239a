/**
 * Taking a started PushConsumer apart (RocketMQ: DefaultMQPushConsumerImpl.shutdown, with a deadline
 * and a report). In order: stop pulling (held pulls aborted), give running listeners until the
 * deadline, let a rebalance in progress end, drop every queue (late results of concurrent listeners then
 * no longer move offsets), persist the offsets, unlock the orderly queues that were idle before that,
 * unregister and release the client instance. Every step runs even when an earlier one fails; failures
 * are collected in the report.
 */
import { StateError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import { messageQueueKey } from '../../../common/message.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { PullMessageService } from '../pull-message-service.js';
import type { PushConsumerShutdownReport } from './push-consumer-events.js';
import type { PushConsumerRun } from './push-consumer-run.js';

export interface ShutdownRunOptions {
  /** When running listeners stop being waited for (clock ms). */
  deadline: number;
  consumerGroup: string;
  logger: Logger;
  /** Aborts the pulls held by the broker. */
  pullAbort: AbortController;
  /** The consumer's `routeChanged` listener on the instance, removed before unregistering. */
  onRouteChanged: (topic: string) => void;
}

export async function shutdownRun(run: PushConsumerRun, o: ShutdownRunOptions): Promise<PushConsumerShutdownReport> {
  const report: PushConsumerShutdownReport = { unfinishedListeners: 0, droppedConsumeRequests: 0, errors: [] };
  const step = async (name: string, fn: () => Promise<unknown> | void): Promise<void> => {
    try {
      await fn();
    } catch (error) {
      report.errors.push({ step: name, error });
      o.logger.warn({ err: error, step: name }, 'PushConsumer shutdown step failed');
    }
  };
  await step('stop pulling', async () => {
    o.pullAbort.abort(new StateError('the PushConsumer is shutting down'));
    await run.pulls.shutdown();
  });
  await step('wait for listeners', async () => {
    const r = await run.consume.shutdown(o.deadline);
    report.unfinishedListeners = r.unfinished;
    report.droppedConsumeRequests = r.droppedRequests;
  });
  await step('flush message trace', () => run.trace?.dispatcher.close());
  await step('wait for rebalance', () => run.rebalance.idle());
  const entries = [...run.rebalance.processQueueTable.values()];
  const queues = entries.map((e) => e.mq);
  // From here on, late results of concurrent listeners no longer move offsets (an orderly listener's still
  // move its queue's offset in memory, too late to be persisted: see below).
  run.rebalance.dropAll();
  // Orderly: the queues whose work has ended, taken before the offsets are written. A call still running
  // now may end while they are written; its queue's offset is then behind what it consumed, so that queue
  // keeps its lock until the lock expires on the broker, and no other member consumes it alongside the
  // unfinished call or as if it had been handed over.
  const orderly = run.orderly;
  const locker = orderly?.locker;
  const idle = locker ? entries.filter((e) => !orderly.service.isConsuming(e.pq)).map((e) => e.mq) : [];
  // Pulls still on their way carry older offsets to commit: settled before the final offsets are written.
  await step('settle pulls', () => Promise.all(entries.map((e) => e.pq.settlePull())));
  // The queues whose offsets the store did not take; all of them when the step failed as a whole.
  let unstored = new Set(queues.map(messageQueueKey));
  await step('persist offsets', async () => {
    unstored = new Set((await run.offsetStore.flushAll(queues)).map(messageQueueKey));
  });
  // Orderly: release the locks of the queues that were idle, now that their offsets are persisted. A
  // queue whose offset was not written keeps its lock until it expires on the broker.
  const unlock = idle.filter((mq) => !unstored.has(messageQueueKey(mq)));
  if (locker) await step('unlock queues', () => locker.unlockBatch(unlock));
  run.instance.events.off('routeChanged', o.onRouteChanged);
  await step('unregister', () => run.instance.unregisterConsumer(o.consumerGroup));
  await step('release client instance', () => run.instance.release());
  return report;
}

/** After a failed start: stop the pulls begun (if any), unregister and release the instance; never throws. */
export async function releaseAfterFailedStart(
  instance: MQClientInstance,
  pulls: PullMessageService | undefined,
  consumerGroup: string,
  logger: Logger,
): Promise<void> {
  try {
    await pulls?.shutdown();
    await instance.unregisterConsumer(consumerGroup);
  } catch (err) {
    logger.warn({ err }, 'cleanup after a failed start failed');
  }
  await instance.release().catch(() => {});
}
