/**
 * The two adapters a LitePullConsumer's start() builds from its parts: the run (pull service and
 * rebalance around the offset store) and the MQConsumerInner the client instance drives (RocketMQ:
 * DefaultLitePullConsumerImpl as an MQConsumerInner).
 */
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import { startMsgTrace } from '../../trace/trace-options.js';
import type { MQConsumerInner } from '../../instance/mq-consumer-inner.js';
import type { OffsetStore } from '../offset-store.js';
import { PullAPIWrapper } from '../pull-api-wrapper.js';
import type { LiteAssignment } from './lite-pull-assignment.js';
import type { LiteCore, LiteRun } from './lite-pull-core.js';
import type { LiteFetcher } from './lite-pull-fetch.js';
import type { LiteOffsets } from './lite-pull-offsets.js';

/** The three parts of a LitePullConsumer. */
export interface LiteParts {
  assignment: LiteAssignment;
  fetcher: LiteFetcher;
  offsets: LiteOffsets;
}

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
  const trace = startMsgTrace(instance, core.options, core.options.consumerGroup, 'CONSUME');
  return { instance, wrapper, offsetStore, pulls, rebalance, startup: undefined, trace };
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
    resetOffset: async (topic, offsetTable) => {
      // In assign mode the caller steers the offsets (seek); its next pull's answer tells it of the reset.
      if (core.isRunning() && assignment.mode === 'subscribe') offsets.resetOffset(topic, offsetTable);
    },
  };
}
