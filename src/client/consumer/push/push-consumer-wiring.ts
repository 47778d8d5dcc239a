/**
 * The parts one PushConsumer start() puts together (RocketMQ's DefaultMQPushConsumerImpl.start): the
 * PullAPIWrapper, the offset store of the message model (loaded), the consume service of the
 * registered listener (ConsumeMessageOrderlyService with its broker locks, or
 * ConsumeMessageConcurrentlyService), the PullMessageService feeding `pullMessage`, and the
 * RebalancePushImpl; then, once the brokers are reached, the settle and the `ready` signal. Also the
 * two callbacks the parts share: sending a message back, and serving a PullRequest.
 */
import { startMsgTrace } from '../../trace/trace-options.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import { MessageModel } from '../consumer-constants.js';
import { createConsumerStartup, type ConsumerStartup, type Deferred } from '../consumer-startup.js';
import type { ConsumerRoutes } from '../consumer-routes.js';
import { PullAPIWrapper } from '../pull-api-wrapper.js';
import { PullMessageService } from '../pull-message-service.js';
import type { PullRequest } from '../pull-request.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import { ConsumeMessageConcurrentlyService } from './consume-message-concurrently-service.js';
import { ConsumeMessageOrderlyService } from './consume-message-orderly-service.js';
import { createOffsetStore } from '../offset-store-factory.js';
import { type ConsumeMessageService, type PushConsumerHost, type PushConsumerRun } from './push-consumer-run.js';
import type { ListenerRegistration } from './push-consumer-subscriptions.js';
import { pullMessage } from './pull-message.js';
import { QueueLocker } from './queue-locker.js';
import { createRebalancePushImpl } from './rebalance-push-impl.js';
import { sendMessageBack } from './send-message-back.js';

/** RocketMQ: a send-back with delay level -1 goes straight to the dead-letter queue. */
const DEAD_LETTER_DELAY_LEVEL = -1;

export interface PushRunWiring {
  host: PushConsumerHost;
  routes: ConsumerRoutes;
  instance: MQClientInstance;
  listener: ListenerRegistration;
}

/** The parts of a start, up to the rebalance; nothing is registered with the instance yet. */
export async function createPushConsumerRun(w: PushRunWiring): Promise<PushConsumerRun> {
  const { host, instance } = w;
  const o = host.options;
  const logger = host.logger;
  const wrapper = new PullAPIWrapper(instance, o.consumerGroup);
  const trace = startMsgTrace(instance, o, o.consumerGroup, 'CONSUME');
  const offsetStore = createOffsetStore(o, instance, logger, (e) => void host.events.emit('offsetPersisted', e));
  await offsetStore.load();
  await host.telemetry.start(instance.clientId);
  let consume: ConsumeMessageService;
  let orderly: PushConsumerRun['orderly'];
  if (w.listener.orderly) {
    const locker =
      o.messageModel === MessageModel.CLUSTERING ? new QueueLocker(instance, o.consumerGroup, logger) : undefined;
    const service = new ConsumeMessageOrderlyService({
      trace,
      consumerGroup: o.consumerGroup,
      messageModel: o.messageModel,
      consumeThreadMax: o.consumeThreadMax,
      consumeMessageBatchMaxSize: o.consumeMessageBatchMaxSize,
      suspendCurrentQueueTimeMillis: o.suspendCurrentQueueTimeMillis,
      maxReconsumeTimes: o.maxReconsumeTimesOrderly,
      listener: w.listener.fn,
      keyConcurrency: w.listener.keyConcurrency,
      lockMaxLiveTimeMs: o.rebalanceLockMaxLiveTimeMs,
      telemetry: host.telemetry,
      offsetStore,
      clock: o.clock,
      logger,
      lockOne: (mq) => locker?.lock(mq) ?? Promise.resolve(true),
      // RocketMQ (orderly): past maxReconsumeTimes a message goes to the dead-letter queue.
      sendToDeadLetterQueue: (msg, mq) => sendMessageBackOrKeep(host, msg, DEAD_LETTER_DELAY_LEVEL, mq),
      onSuspend: (e) => host.events.emit('suspend', e),
    });
    consume = service;
    orderly = { service, locker };
  } else {
    consume = new ConsumeMessageConcurrentlyService({
      trace,
      consumerGroup: o.consumerGroup,
      messageModel: o.messageModel,
      consumeThreadMax: o.consumeThreadMax,
      consumeMessageBatchMaxSize: o.consumeMessageBatchMaxSize,
      listener: w.listener.fn,
      telemetry: host.telemetry,
      offsetStore,
      clock: o.clock,
      logger,
      sendMessageBack: (msg, delayLevel, mq) => sendMessageBackOrKeep(host, msg, delayLevel, mq),
      onConsumeFailure: (e) => host.events.emit('consumeFailure', e),
    });
  }
  const pulls = new PullMessageService((req) => servePullRequest(host, req), o.clock, logger);
  const rebalance = createRebalancePushImpl(host, w.routes, instance, offsetStore, pulls);
  host.telemetry.observeQueues(() => rebalance.processQueueTable.values());
  return { instance, wrapper, offsetStore, consume, orderly, pulls, rebalance, trace };
}

/** The settle and the `ready` signal of a start that reached its brokers. */
export function createPushStartup(
  host: PushConsumerHost,
  instance: MQClientInstance,
  ready: Deferred<void>,
): ConsumerStartup {
  const o = host.options;
  const logger: Logger = host.logger;
  return createConsumerStartup({
    instance,
    group: o.consumerGroup,
    settle: o.messageModel === MessageModel.CLUSTERING,
    quietMs: o.startSettleMs,
    maxMs: o.startSettleMaxMs,
    clock: o.clock,
    logger,
    ready,
    onReady: (e) => {
      logger.info(e, 'PushConsumer ready');
      host.events.emit('ready', e);
    },
  });
}

/**
 * Sends a message back for a retry (or, with delay level -1, to the dead-letter queue). False when it
 * failed or the consumer is not started: the caller then keeps the message and consumes it again locally.
 */
export async function sendMessageBackOrKeep(
  host: PushConsumerHost,
  msg: MessageExt,
  delayLevel: number,
  mq: MessageQueue,
): Promise<boolean> {
  const run = host.run();
  if (!run) return false;
  try {
    await sendMessageBack(
      run.instance,
      host.options.consumerGroup,
      msg,
      delayLevel,
      mq,
      host.options.maxReconsumeTimes,
      host.logger,
    );
    return true;
  } catch (err) {
    host.logger.warn({ err, msgId: msg.msgId }, 'send back failed; the message is consumed again locally');
    return false;
  }
}

/** RocketMQ: DefaultMQPushConsumerImpl.pullMessage (see pull-message.ts); the ready probe notes each first pull. */
export function servePullRequest(host: PushConsumerHost, req: PullRequest): Promise<void> {
  const run = host.run();
  if (!run) return Promise.resolve();
  if (run.startup?.pending) run.startup.pullStarted(req.processQueue);
  return pullMessage(host, run, req);
}
