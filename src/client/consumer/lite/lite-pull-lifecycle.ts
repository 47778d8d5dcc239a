/**
 * Starting and stopping a LitePullConsumer (RocketMQ: DefaultLitePullConsumerImpl.start / shutdown).
 * Start: the run's parts, registration with the client instance, the brokers reached as a
 * PushConsumer reaches them (an unreachable one tried again until `startTimeoutMs`, then a
 * StartTimeoutError), then the queues — `subscribe` mode lets the rebalance (after the start-up
 * settle) divide them, `assign` mode checks and takes the queues asked for. A failed start gives
 * everything back. Shutdown, every step run even when an earlier one fails: stop pulling (held pulls
 * aborted), let a rebalance in progress end, commit (under auto-commit), drop every queue, persist the
 * offsets, unregister and release the instance.
 */
import { StateError } from '../../../common/errors.js';
import { MessageModel } from '../consumer-constants.js';
import { createConsumerStartup, type ConsumerStartup, type Deferred } from '../consumer-startup.js';
import { reachBrokers } from '../../instance/client-start.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { OffsetStore } from '../offset-store.js';
import type { ConsumeRequestCache } from './lite-pull-cache.js';
import type { LiteCore, LitePullConsumerState, LiteRun } from './lite-pull-core.js';
import { createLiteRun, liteConsumerInner, type LiteParts } from './lite-pull-run.js';

/** What start() and shutdown() change on the consumer. */
export interface LiteLifecycleHost {
  readonly core: LiteCore;
  readonly parts: LiteParts;
  readonly cache: ConsumeRequestCache;
  readonly ready: Deferred<void>;
  /** Aborted by shutdown(): a start still waiting for its brokers gives up. */
  readonly startSignal: AbortSignal;
  setState(state: LitePullConsumerState): void;
  setRun(run: LiteRun | undefined): void;
}

/** The start after the offset store is loaded; on failure the caller calls `releaseAfterFailedStart`. */
export async function startRun(
  h: LiteLifecycleHost,
  instance: MQClientInstance,
  offsetStore: OffsetStore,
): Promise<void> {
  const { core, parts } = h;
  const o = core.options;
  const { assignment } = parts;
  const run = createLiteRun(core, instance, offsetStore, parts);
  h.setRun(run);
  instance.events.on('routeChanged', assignment.routes.onRouteChanged);
  instance.registerConsumer(o.consumerGroup, liteConsumerInner(core, parts));
  await instance.start();
  // Running only once the brokers know this member: the routes of its topics fetched, subscriptions
  // that are not tag expressions accepted, heartbeat accepted (or a StartTimeoutError after
  // startTimeoutMs, the broker tried again meanwhile).
  await reachBrokers({
    instance,
    what: 'LitePullConsumer',
    group: o.consumerGroup,
    subscriptions: () => assignment.heartbeatSubscriptions(),
    startTimeoutMs: o.startTimeoutMs,
    clock: o.clock,
    logger: core.logger,
    signal: h.startSignal,
  });
  h.setState('RUNNING');
  if (assignment.mode === 'subscribe') {
    // The brokers count this member now: it settles before its first division of the queues.
    run.startup = createStartup(h, instance, o.messageModel === MessageModel.CLUSTERING);
    instance.rebalanceImmediately(true);
  } else {
    run.startup = createStartup(h, instance, false);
    if (assignment.mode === 'assign') await assignment.applyAssigned();
    run.startup.afterPass(true, assignment.queues.values());
  }
}

/** The settle (`settle`: CLUSTERING, subscribe mode) and the `ready` signal of this start. */
function createStartup(h: LiteLifecycleHost, instance: MQClientInstance, settle: boolean): ConsumerStartup {
  const o = h.core.options;
  return createConsumerStartup({
    instance,
    group: o.consumerGroup,
    settle,
    quietMs: o.startSettleMs,
    maxMs: o.startSettleMaxMs,
    clock: o.clock,
    logger: h.core.logger,
    ready: h.ready,
    onReady: (e) => void h.core.events.emit('ready', e),
  });
}

/** A start failed with `err`: `ready` rejects, the pulls stop, the queues are dropped, the instance released. */
export async function releaseAfterFailedStart(
  h: LiteLifecycleHost,
  instance: MQClientInstance,
  err: unknown,
): Promise<void> {
  h.setState('START_FAILED');
  h.ready.reject(err);
  const run = h.core.run();
  run?.startup?.end(err);
  instance.events.off('routeChanged', h.parts.assignment.routes.onRouteChanged);
  await run?.pulls.shutdown();
  h.parts.assignment.dropAll(true);
  h.cache.clear();
  h.setRun(undefined);
  await instance.unregisterConsumer(h.core.options.consumerGroup).catch(() => {});
  await instance.release().catch(() => {});
}

/** Takes a running consumer apart; see the file comment. */
export async function shutdownRun(h: LiteLifecycleHost, run: LiteRun): Promise<void> {
  const { core, parts, cache } = h;
  h.setState('SHUTTING_DOWN');
  cache.wakeAll();
  const step = async (name: string, fn: () => Promise<unknown> | void): Promise<void> => {
    try {
      await fn();
    } catch (err) {
      core.logger.warn({ err, step: name }, 'LitePullConsumer shutdown step failed');
    }
  };
  await step('stop pulling', () =>
    parts.fetcher.stop(new StateError('the LitePullConsumer is shutting down'), run.pulls),
  );
  await step('wait for rebalance', () => run.rebalance.idle());
  if (core.options.autoCommit) parts.offsets.commitAll();
  const queues = parts.assignment.assignedQueues();
  parts.assignment.dropAll(false);
  cache.clear();
  await step('persist offsets', () => parts.offsets.persistNow(run, queues));
  await step('flush message trace', () => run.trace?.dispatcher.close());
  run.instance.events.off('routeChanged', parts.assignment.routes.onRouteChanged);
  await step('unregister', () => run.instance.unregisterConsumer(core.options.consumerGroup));
  await step('release client instance', () => run.instance.release());
  h.setState('SHUTDOWN');
}
