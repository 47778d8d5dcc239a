/**
 * The pop loop of one POP assignment (RocketMQ: DefaultMQPushConsumerImpl.popMessage and its
 * PopCallback): while the assignment is held, long-poll POP_MESSAGE for it, re-check tags on the client,
 * and hand what was found to the POP consume service; pause while the consumer is paused or while too
 * many of the assignment's messages wait for their acknowledgement (flow control), and wait a moment
 * after a failed pop.
 */
import { delay } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import { MessageConst } from '../../../common/message.js';
import type { SubscriptionData } from '../../../filter/index.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { SafeEventEmitter } from '../../instance/safe-emitter.js';
import { ConsumeFromWhere } from '../consumer-constants.js';
import type { PopAPIWrapper, PoppedMessage } from '../pop-api-wrapper.js';
import type { PopConsumeService, PopProcessQueue } from './pop-consume-service.js';
import type { PushConsumerEvents } from './push-consumer-events.js';
import type { ResolvedPushConsumerOptions } from './push-consumer-options.js';

/** RocketMQ: PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL. */
const FLOW_CONTROL_DELAY_MS = 50;
/** RocketMQ: PULL_TIME_DELAY_MILLS_WHEN_SUSPEND (a paused consumer looks again after this long). */
const PAUSED_DELAY_MS = 1000;
/** RocketMQ's ConsumeInitMode: where a group with no POP offset starts. */
const INIT_MODE_MIN = 0;
const INIT_MODE_MAX = 1;

export interface PopLoopContext {
  options: ResolvedPushConsumerOptions;
  logger: Logger;
  events: SafeEventEmitter<PushConsumerEvents>;
  instance: MQClientInstance;
  pop: PopAPIWrapper;
  consume: PopConsumeService;
  subscriptions: ReadonlyMap<string, SubscriptionData>;
  isPaused(): boolean;
  /** Counts cache flow-control hits (reported one in 1000, as RocketMQ logs them). */
  flowControlHit(pq: PopProcessQueue): void;
}

/** RocketMQ: RebalanceImpl.getConsumeInitMode — only CONSUME_FROM_FIRST_OFFSET starts at the queues' start. */
export function consumeInitMode(o: ResolvedPushConsumerOptions): number {
  return o.consumeFromWhere === ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET ? INIT_MODE_MIN : INIT_MODE_MAX;
}

/** RocketMQ: processPopResult — a tag subscription keeps only the messages whose tag it names. */
function matchesTags(p: PoppedMessage, sub: SubscriptionData): boolean {
  if (sub.tagsSet.length === 0 || sub.classFilterMode) return true;
  const tags = p.message.properties?.[MessageConst.TAGS];
  return tags !== undefined && sub.tagsSet.includes(tags);
}

/** Runs until `pq` is dropped or `signal` aborts; never throws. */
export async function runPopLoop(c: PopLoopContext, pq: PopProcessQueue, signal: AbortSignal): Promise<void> {
  const o = c.options;
  const mq = pq.mq;
  const wait = (ms: number): Promise<void> => delay(ms, signal, o.clock).catch(() => undefined);
  while (!pq.dropped && !signal.aborted) {
    pq.lastPopTimestamp = o.clock.now();
    if (c.isPaused()) {
      await wait(PAUSED_DELAY_MS);
      continue;
    }
    if (pq.waitAckCount >= o.popThresholdForQueue) {
      c.flowControlHit(pq);
      await wait(FLOW_CONTROL_DELAY_MS);
      continue;
    }
    const sub = c.subscriptions.get(mq.topic);
    if (!sub) {
      await wait(o.pullTimeDelayMsWhenException);
      continue;
    }
    let found: PoppedMessage[];
    let addr: string;
    try {
      addr = (await c.instance.findBrokerAddressForQueue({ ...mq, queueId: Math.max(0, mq.queueId) })).brokerAddr;
      const res = await c.pop.pop(
        addr,
        mq.brokerName,
        {
          consumerGroup: o.consumerGroup,
          topic: mq.topic,
          queueId: mq.queueId,
          maxMsgNums: o.popBatchNums,
          invisibleTimeMs: o.popInvisibleTimeMs,
          pollTimeMs: o.brokerSuspendMaxTimeMs,
          expressionType: sub.expressionType,
          expression: sub.subString,
          initMode: consumeInitMode(o),
        },
        { timeoutMs: o.consumerTimeoutMsWhenSuspend, signal },
      );
      found = res.found;
    } catch (error) {
      if (pq.dropped || signal.aborted) return;
      c.logger.warn({ err: error, mq }, 'POP_MESSAGE failed; popped again later');
      c.events.emit('pullError', { messageQueue: mq, error, retryInMs: o.pullTimeDelayMsWhenException });
      await wait(o.pullTimeDelayMsWhenException);
      continue;
    }
    const wanted: PoppedMessage[] = [];
    for (const p of found) {
      if (matchesTags(p, sub)) wanted.push(p);
      // Not this consumer's: acknowledged so the broker does not deliver it again.
      else void c.pop.ack(addr, o.consumerGroup, mq.topic, p.handle, p.receiptHandle, {}).catch(() => undefined);
    }
    if (wanted.length > 0) {
      pq.waitAckCount += wanted.length;
      c.consume.submit(wanted, pq);
    }
    if (found.length > 0 && o.pullIntervalMs > 0) await wait(o.pullIntervalMs);
  }
}
