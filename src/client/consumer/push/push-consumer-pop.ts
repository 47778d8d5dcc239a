/**
 * A PushConsumer with `consumeMode: 'POP'` (RocketMQ 5's DefaultMQPushConsumer with client rebalance
 * off): no queue is divided on the client. For every subscribed topic and each of its brokers, the
 * broker is asked which queues this member pops (QUERY_ASSIGNMENT); where the group is in POP mode its
 * answer is followed, and otherwise the member pops every queue there (queue id -1), the broker handing
 * each message to one member. So members need no settle: they start popping at once, two members never
 * get the same message while it is invisible, and every member of a group larger than the queue count
 * gets work. Each assignment has its pop loop (pop-message-loop.ts), the messages go to the listener
 * through the POP consume service (pop-consume-service.ts), which acknowledges them or has the broker
 * deliver them again. Assignments are refreshed at every rebalance pass of the client instance.
 *
 * start() and shutdown() keep PushConsumerLifecycle's contract: idempotent, START_FAILED on a failed
 * start, shutdown waiting for running listeners and their acknowledgements up to its deadline.
 */
import { InvalidArgumentError, StateError } from '../../../common/errors.js';
import { RETRY_GROUP_TOPIC_PREFIX, compareMessageQueue, type MessageQueue } from '../../../common/message.js';
import type { SubscriptionData } from '../../../filter/index.js';
import { instanceNameForClient } from '../../instance/client-options.js';
import { reachBrokers } from '../../instance/client-start.js';
import { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { MQConsumerInner } from '../../instance/mq-consumer-inner.js';
import { Deferred } from '../consumer-startup.js';
import { PopAPIWrapper, type PoppedMessage } from '../pop-api-wrapper.js';
import { PopConsumeService, type PopProcessQueue } from './pop-consume-service.js';
import { runPopLoop, type PopLoopContext } from './pop-message-loop.js';
import type { PushConsumerShutdownReport, PushConsumerState } from './push-consumer-events.js';
import type { PushConsumerHost } from './push-consumer-run.js';
import type { ListenerRegistration } from './push-consumer-subscriptions.js';
import { SEND_MESSAGE_BACK_TIMEOUT_MS } from './send-message-back.js';

/** RocketMQ: a send-back with delay level -1 goes straight to the dead-letter queue. */
const DEAD_LETTER_DELAY_LEVEL = -1;

interface Assignment {
  pq: PopProcessQueue;
  abort: AbortController;
  loop: Promise<void>;
}

interface Started {
  instance: MQClientInstance;
  pop: PopAPIWrapper;
  consume: PopConsumeService;
}

const keyOf = (mq: MessageQueue): string => `${mq.topic}@${mq.brokerName}@${mq.queueId}`;

export class PushConsumerPop {
  state: PushConsumerState = 'CREATE_JUST';
  readonly ready = new Deferred<void>();
  readonly #host: PushConsumerHost;
  readonly #assignments = new Map<string, Assignment>();
  readonly #startAbort = new AbortController();
  #started: Started | undefined;
  #startPromise: Promise<void> | undefined;
  #shutdownPromise: Promise<PushConsumerShutdownReport> | undefined;
  #refreshing: Promise<boolean> | undefined;
  #flowControlTimes = 0;
  readonly #onAbort = (): void => void this.shutdown(this.#host.options.shutdownTimeoutMs);

  constructor(host: PushConsumerHost) {
    this.#host = host;
    host.options.signal?.addEventListener('abort', this.#onAbort, { once: true });
  }

  get clientId(): string | undefined {
    return this.#started?.instance.clientId;
  }

  /** The assignments popped now (queue id -1: every queue of the topic on that broker), sorted. */
  assignedQueues(): MessageQueue[] {
    return [...this.#assignments.values()].map((a) => ({ ...a.pq.mq })).sort(compareMessageQueue);
  }

  start(listener: ListenerRegistration | undefined, subscriptions: Map<string, SubscriptionData>): Promise<void> {
    if (this.#shutdownPromise)
      return Promise.reject(new StateError('the PushConsumer has been shut down, it can not be started again'));
    this.#startPromise ??= this.#start(listener, subscriptions);
    return this.#startPromise;
  }

  async #start(listener: ListenerRegistration | undefined, subscriptions: Map<string, SubscriptionData>) {
    const o = this.#host.options;
    const logger = this.#host.logger;
    if (!listener) throw new InvalidArgumentError('listener', 'register a message listener before start()');
    if (listener.orderly) throw orderlyRefused();
    if (subscriptions.size === 0)
      throw new InvalidArgumentError('subscription', 'subscribe at least one topic before start()');
    if (o.signal?.aborted) throw new StateError('the PushConsumer signal was aborted before start()');
    this.state = 'STARTING';
    const instance = MQClientInstance.acquire({ ...o, instanceName: instanceNameForClient(o.instanceName) });
    const pop = new PopAPIWrapper(instance.api);
    const consume = new PopConsumeService({
      consumerGroup: o.consumerGroup,
      consumeThreadMax: o.consumeThreadMax,
      consumeMessageBatchMaxSize: o.consumeMessageBatchMaxSize,
      maxReconsumeTimes: o.maxReconsumeTimes,
      retryDelaysMs: o.popRetryDelaysMs,
      listener: listener.fn,
      clock: o.clock,
      logger,
      ack: (popped) => this.#ack(instance, pop, popped),
      changeInvisibleTime: async (p, ms) => {
        const addr = await this.#brokerAddr(instance, p.message.topic, p.handle.brokerName);
        await pop.changeInvisibleTime(addr, o.consumerGroup, p.message.topic, p.handle, p.receiptHandle, ms, {});
      },
      sendToDeadLetterQueue: async (msg, mq) => {
        const addr = await this.#brokerAddr(instance, mq.topic, mq.brokerName);
        await instance.api.consumerSendMessageBack(
          addr,
          mq.brokerName,
          msg,
          o.consumerGroup,
          DEAD_LETTER_DELAY_LEVEL,
          o.maxReconsumeTimes,
          { timeoutMs: SEND_MESSAGE_BACK_TIMEOUT_MS },
        );
      },
      onConsumeFailure: (e) => this.#host.events.emit('consumeFailure', e),
    });
    try {
      instance.registerConsumer(o.consumerGroup, this.#inner());
      this.#started = { instance, pop, consume };
      await instance.start();
      await reachBrokers({
        instance,
        what: 'PushConsumer',
        group: o.consumerGroup,
        subscriptions: () => [...subscriptions.values()],
        startTimeoutMs: o.startTimeoutMs,
        clock: o.clock,
        logger,
        signal: this.#startAbort.signal,
      });
      this.state = 'RUNNING';
    } catch (err) {
      this.state = 'START_FAILED';
      this.#started = undefined;
      this.ready.reject(err);
      await instance.unregisterConsumer(o.consumerGroup).catch(() => undefined);
      await instance.release();
      throw err;
    }
    // Prompt start: the first assignment is asked for now, not at the instance's next rebalance pass.
    const began = o.clock.now();
    // A topic without a route yet (created by its first send) is asked for again at the instance's
    // short retry interval rather than its full rebalance period.
    if (!(await this.refresh())) instance.rebalanceImmediately();
    const event = {
      assigned: this.assignedQueues(),
      elapsedMs: o.clock.now() - began,
      settleMs: 0,
      membershipChanges: 0,
    };
    if (this.state !== 'RUNNING') return;
    this.ready.resolve();
    logger.info(event, 'PushConsumer (POP) ready');
    this.#host.events.emit('ready', event);
  }

  /** One ACK_MESSAGE, or one BATCH_ACK_MESSAGE per broker; rejects with the first failure once all are done. */
  async #ack(instance: MQClientInstance, pop: PopAPIWrapper, popped: readonly PoppedMessage[]): Promise<void> {
    const group = this.#host.options.consumerGroup;
    const byBroker = new Map<string, PoppedMessage[]>();
    for (const p of popped) {
      const list = byBroker.get(p.handle.brokerName);
      if (list) list.push(p);
      else byBroker.set(p.handle.brokerName, [p]);
    }
    const results = await Promise.allSettled(
      [...byBroker].map(async ([brokerName, list]) => {
        const first = list[0] as PoppedMessage;
        const addr = await this.#brokerAddr(instance, first.message.topic, brokerName);
        if (list.length === 1) return pop.ack(addr, group, first.message.topic, first.handle, first.receiptHandle, {});
        const items = list.map((p) => ({ topic: p.message.topic, handle: p.handle }));
        return pop.batchAck(addr, brokerName, group, items, {});
      }),
    );
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  async #brokerAddr(instance: MQClientInstance, topic: string, brokerName: string): Promise<string> {
    return (
      instance.findBrokerAddressInPublish(brokerName) ??
      (await instance.findBrokerAddressForQueue({ topic, brokerName, queueId: 0 })).brokerAddr
    );
  }

  /** What the client instance drives: heartbeats announce the subscriptions, a rebalance pass refreshes assignments. */
  #inner(): MQConsumerInner {
    const host = this.#host;
    const o = host.options;
    return {
      groupName: () => o.consumerGroup,
      messageModel: () => 'CLUSTERING',
      // RocketMQ's push consumer announces itself the same way whether it pulls or pops.
      consumeType: () => 'CONSUME_PASSIVELY',
      consumeFromWhere: () => o.consumeFromWhere,
      subscriptions: () => [...host.subscriptions.values()],
      doRebalance: () => this.refresh(),
      persistConsumerOffset: async () => undefined,
      updateTopicSubscribeInfo: () => undefined,
      isSubscribeTopicNeedUpdate: (topic) => host.subscriptions.has(topic),
      connectionError: (e) => void host.events.emit('connectionError', e),
    };
  }

  /**
   * Asks each subscribed topic's brokers for this member's assignments and starts or stops pop loops to
   * match; one pass at a time. Resolves false when a topic's route or a broker could not be reached
   * (its current assignments are kept, and the instance tries again sooner).
   */
  refresh(): Promise<boolean> {
    if (this.state !== 'RUNNING' || !this.#started) return Promise.resolve(true);
    this.#refreshing ??= this.#refresh(this.#started).finally(() => (this.#refreshing = undefined));
    return this.#refreshing;
  }

  async #refresh(s: Started): Promise<boolean> {
    const host = this.#host;
    const wanted = new Map<string, MessageQueue>();
    let complete = true;
    for (const topic of host.subscriptions.keys()) {
      // The group's pull retry topic is not popped: failures come back through the POP retry topic.
      if (topic.startsWith(RETRY_GROUP_TOPIC_PREFIX)) continue;
      try {
        const mqs = await s.instance.fetchSubscribeMessageQueues(topic);
        for (const brokerName of new Set(mqs.map((mq) => mq.brokerName))) {
          for (const queueId of await this.#assignmentOn(s, topic, brokerName))
            wanted.set(keyOf({ topic, brokerName, queueId }), { topic, brokerName, queueId });
        }
      } catch (err) {
        complete = false;
        host.logger.warn({ err, topic }, 'POP assignment: the route could not be read; the assignments are kept');
        for (const [k, a] of this.#assignments) if (a.pq.mq.topic === topic) wanted.set(k, a.pq.mq);
      }
    }
    if (this.state !== 'RUNNING') return true;
    const removed: MessageQueue[] = [];
    for (const [k, a] of this.#assignments) {
      if (wanted.has(k)) continue;
      a.pq.dropped = true;
      a.abort.abort(new StateError('the POP assignment was given up'));
      this.#assignments.delete(k);
      removed.push(a.pq.mq);
    }
    const added: MessageQueue[] = [];
    for (const [k, mq] of wanted) {
      if (this.#assignments.has(k)) continue;
      const pq: PopProcessQueue = { mq, dropped: false, waitAckCount: 0, lastPopTimestamp: 0 };
      const abort = new AbortController();
      this.#assignments.set(k, { pq, abort, loop: runPopLoop(this.#loopContext(s), pq, abort.signal) });
      added.push(mq);
    }
    for (const topic of new Set([...added, ...removed].map((mq) => mq.topic))) {
      const on = (mqs: MessageQueue[]) => mqs.filter((mq) => mq.topic === topic);
      host.events.emit('rebalance', {
        topic,
        added: on(added),
        removed: on(removed),
        assigned: on(this.assignedQueues()),
      });
    }
    return complete;
  }

  /**
   * The queue ids this member pops on one broker. Where the group is in POP mode the broker's answer is
   * followed (it may share out queues, RocketMQ's popShareQueueNum); in PULL mode, or from a broker
   * that cannot answer, the member pops every queue (-1) and the broker gives each message to one member.
   */
  async #assignmentOn(s: Started, topic: string, brokerName: string): Promise<number[]> {
    const o = this.#host.options;
    try {
      const addr = await this.#brokerAddr(s.instance, topic, brokerName);
      const a = await s.pop.queryAssignment(
        addr,
        {
          topic,
          consumerGroup: o.consumerGroup,
          clientId: s.instance.clientId,
          strategyName: o.allocateMessageQueueStrategy.getName(),
        },
        { signal: this.#startAbort.signal },
      );
      if (a.mode === 'POP') return a.queueIds;
    } catch (err) {
      this.#host.logger.debug({ err, topic, brokerName }, 'QUERY_ASSIGNMENT failed: every queue is popped');
    }
    return [-1];
  }

  #loopContext(s: Started): PopLoopContext {
    const host = this.#host;
    return {
      options: host.options,
      logger: host.logger,
      events: host.events,
      instance: s.instance,
      pop: s.pop,
      consume: s.consume,
      subscriptions: host.subscriptions,
      isPaused: () => host.isPaused(),
      flowControlHit: (pq) => {
        if (this.#flowControlTimes++ % 1000 === 0)
          host.logger.warn(
            { mq: pq.mq, waitAck: pq.waitAckCount, times: this.#flowControlTimes },
            'POP flow control: too many messages wait for their acknowledgement',
          );
      },
    };
  }

  shutdown(timeoutMs: number): Promise<PushConsumerShutdownReport> {
    this.#shutdownPromise ??= this.#shutdown(timeoutMs);
    return this.#shutdownPromise;
  }

  async #shutdown(timeoutMs: number): Promise<PushConsumerShutdownReport> {
    const o = this.#host.options;
    const report: PushConsumerShutdownReport = { unfinishedListeners: 0, droppedConsumeRequests: 0, errors: [] };
    o.signal?.removeEventListener('abort', this.#onAbort);
    this.#startAbort.abort(new StateError('the PushConsumer is shutting down'));
    if (this.#startPromise) await this.#startPromise.catch(() => undefined);
    this.ready.reject(new StateError('the PushConsumer was shut down before it was ready'));
    const s = this.#started;
    if (!s || this.state !== 'RUNNING') {
      this.state = 'SHUTDOWN';
      return report;
    }
    const deadline = o.clock.now() + timeoutMs;
    this.state = 'SHUTTING_DOWN';
    const loops: Promise<void>[] = [];
    for (const a of this.#assignments.values()) {
      a.pq.dropped = true;
      a.abort.abort(new StateError('the PushConsumer is shutting down'));
      loops.push(a.loop);
    }
    this.#assignments.clear();
    const consumed = await s.consume.shutdown(deadline);
    report.unfinishedListeners = consumed.unfinished;
    report.droppedConsumeRequests = consumed.droppedRequests;
    await Promise.all(loops);
    try {
      await s.instance.unregisterConsumer(o.consumerGroup);
    } catch (error) {
      report.errors.push({ step: 'unregister', error });
    }
    try {
      await s.instance.release();
    } catch (error) {
      report.errors.push({ step: 'release', error });
    }
    this.#started = undefined;
    this.state = 'SHUTDOWN';
    if (report.unfinishedListeners > 0 || report.droppedConsumeRequests > 0 || consumed.unsettledAcks > 0)
      this.#host.logger.warn(
        { ...report, unsettledAcks: consumed.unsettledAcks },
        'PushConsumer (POP) shut down with unfinished work (the broker delivers it again)',
      );
    return report;
  }
}

/** Orderly consumption needs the broker's orderly POP, which this client does not ask for. */
export function orderlyRefused(): InvalidArgumentError {
  return new InvalidArgumentError(
    'listener',
    "consumeMode 'POP' takes a concurrent listener (registerMessageListener): orderly consumption needs consumeMode 'PULL'",
  );
}
