/**
 * The inside of a started LitePullConsumer, shared by the files that make it up (assignment, fetching,
 * offsets): the parts one start() creates, the view of the consumer they read, the argument checks
 * they share, and the two adapters start() builds — the run itself and the MQConsumerInner the client
 * instance drives (RocketMQ: DefaultLitePullConsumerImpl as an MQConsumerInner).
 */
import { InvalidArgumentError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageQueue } from '../../../common/message.js';
import type { ConsumerStartup } from '../consumer-startup.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { MQConsumerInner } from '../../instance/mq-consumer-inner.js';
import type { OffsetStore } from '../offset-store.js';
import { PullAPIWrapper } from '../pull-api-wrapper.js';
import type { PullMessageService } from '../pull-message-service.js';
import type { RebalanceImpl } from '../rebalance-impl.js';
import type { SafeEventEmitter } from '../../instance/safe-emitter.js';
import type { LiteAssignment } from './lite-pull-assignment.js';
import type { ResolvedLitePullConsumerOptions } from './lite-pull-consumer-options.js';
import type { LitePullConsumerEvents, LitePullConsumerState } from './lite-pull-consumer.js';
import type { LiteFetcher } from './lite-pull-fetch.js';
import type { LiteOffsets } from './lite-pull-offsets.js';

/** What one start() creates. */
export interface LiteRun {
  instance: MQClientInstance;
  wrapper: PullAPIWrapper;
  offsetStore: OffsetStore;
  pulls: PullMessageService;
  rebalance: RebalanceImpl;
  /** The settle and the `ready` signal, once the brokers know this member. */
  startup: ConsumerStartup | undefined;
}

/** The consumer as its parts see it. */
export interface LiteCore {
  readonly options: ResolvedLitePullConsumerOptions;
  readonly logger: Logger;
  readonly events: SafeEventEmitter<LitePullConsumerEvents>;
  state(): LitePullConsumerState;
  isRunning(): boolean;
  run(): LiteRun | undefined;
  /** The run of a RUNNING consumer; else a StateError saying `what()` needs one. */
  running(what: string): LiteRun;
}

/** The three parts of a LitePullConsumer. */
export interface LiteParts {
  assignment: LiteAssignment;
  fetcher: LiteFetcher;
  offsets: LiteOffsets;
}

export function checkOffset(offset: number, field = 'offset'): void {
  if (!Number.isSafeInteger(offset) || offset < 0)
    throw new InvalidArgumentError(field, `must be an integer >= 0, got ${String(offset)}`);
}

export function checkQueue(mq: MessageQueue, field = 'mq'): void {
  if (mq === null || typeof mq !== 'object') throw new InvalidArgumentError(field, 'must be a MessageQueue');
  if (typeof mq.topic !== 'string' || mq.topic === '')
    throw new InvalidArgumentError(`${field}.topic`, 'must be a topic name');
  if (typeof mq.brokerName !== 'string' || mq.brokerName === '')
    throw new InvalidArgumentError(`${field}.brokerName`, 'must be a broker name');
  if (!Number.isInteger(mq.queueId) || mq.queueId < 0)
    throw new InvalidArgumentError(`${field}.queueId`, 'must be an integer >= 0');
}

export const queueName = (mq: MessageQueue): string => `${mq.topic}/${mq.brokerName}/${mq.queueId}`;

/** The parts of one start() around its offset store: the pull service and the rebalance. */
export function createLiteRun(
  core: LiteCore,
  instance: MQClientInstance,
  offsetStore: OffsetStore,
  parts: LiteParts,
): LiteRun {
  const wrapper = new PullAPIWrapper(instance, core.options.consumerGroup);
  const pulls = parts.fetcher.createPullService(wrapper);
  const rebalance = parts.assignment.createRebalance(instance, offsetStore, (mq) =>
    parts.offsets.computePullFromWhere(mq),
  );
  return { instance, wrapper, offsetStore, pulls, rebalance, startup: undefined };
}

/** What the client instance drives: heartbeat data, rebalance passes, offset persistence, routes. */
export function liteConsumerInner(core: LiteCore, { assignment, fetcher, offsets }: LiteParts): MQConsumerInner {
  const o = core.options;
  return {
    groupName: () => o.consumerGroup,
    messageModel: () => o.messageModel,
    consumeType: () => 'CONSUME_ACTIVELY',
    connectionError: (e) => void core.events.emit('connectionError', e),
    consumeFromWhere: () => o.consumeFromWhere,
    subscriptions: () => assignment.heartbeatSubscriptions(),
    doRebalance: async () => {
      const run = core.run();
      if (!run || !core.isRunning() || assignment.mode !== 'subscribe') return true;
      fetcher.keepPausedQueuesAlive();
      // Members starting together divide the queues only once the membership is quiet.
      const startup = run.startup;
      if (!startup) return true; // start() has not sent its heartbeat yet: it rebalances right after
      await startup.settled;
      if (!core.isRunning()) return true;
      const balanced = await run.rebalance.doRebalance();
      startup.afterPass(balanced, run.rebalance.processQueueTable.values());
      return balanced;
    },
    persistConsumerOffset: async () => {
      const run = core.run();
      if (!run || !core.isRunning()) return;
      if (o.autoCommit) offsets.maybeAutoCommit();
      await run.offsetStore.persistAll(assignment.assignedQueues());
    },
    updateTopicSubscribeInfo: (topic, mqs) => assignment.routes.updateTopicSubscribeInfo(topic, mqs),
    isSubscribeTopicNeedUpdate: (topic) => assignment.wantsRoute(topic),
  };
}
