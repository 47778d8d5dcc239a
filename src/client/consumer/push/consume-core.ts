/**
 * What the two consume services share (RocketMQ's ConsumeMessageConcurrentlyService and
 * ConsumeMessageOrderlyService run the same steps around the listener, each with its own rules for
 * what a result means): getting messages ready for the listener, calling it (an answer, a thenable or
 * a throw), reading its answer as a status, letting I/O in between synchronous listener runs, taking
 * finished messages out of their ProcessQueue, waiting for running work with a deadline, and the
 * consume-timeout clean-up (concurrent consumption only).
 */
import type { Clock, TimerHandle } from '../../../common/clock.js';
import { RocketMQError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import { MessageConst, retryTopic, type MessageExt, type MessageQueue } from '../../../common/message.js';
import type { TraceContext } from '../../trace/trace-codec.js';
import { ConsumeOutcomes, type ConsumeOutcome, type MsgTrace } from '../../trace/trace-hooks.js';
import type { OffsetStore } from '../offset-store.js';
import type { ProcessQueue } from '../process-queue.js';
import type { ConsumerTelemetry } from '../../telemetry/index.js';

/** A worker running sync listeners back to back lets I/O in after this long. */
export const CONSUME_SLICE_MS = 5;

/** RocketMQ: a message past consumeTimeout is sent back with delay level 3. */
export const EXPIRED_SEND_BACK_DELAY_LEVEL = 3;

export function isThenable(v: unknown): v is PromiseLike<unknown> {
  return (
    (typeof v === 'object' || typeof v === 'function') &&
    v !== null &&
    typeof (v as { then?: unknown }).then === 'function'
  );
}

/** Lets pending I/O (pull answers, timers) run before the next synchronous listener call. */
export function yieldToIo(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}

/**
 * CONSUME_START_TIME's text for now, one string per millisecond: it stays on its message for as long
 * as the message is held, so the batches started in the same millisecond share it.
 */
export class StartTimeText {
  #last = -1;
  #text = '';

  constructor(private readonly clock: Clock) {}

  now(): string {
    const now = this.clock.now();
    if (now !== this.#last) {
      this.#last = now;
      this.#text = String(now);
    }
    return this.#text;
  }
}

/**
 * RocketMQ: resetRetryAndNamespace (a redelivered message gets its real topic back) and the
 * CONSUME_START_TIME property, set on every message just before the listener sees it.
 */
export function prepareMessages(msgs: readonly MessageExt[], consumerGroup: string, startTime: string): void {
  const groupTopic = retryTopic(consumerGroup);
  for (const msg of msgs) {
    const props = (msg.properties ??= {});
    const realTopic = props[MessageConst.RETRY_TOPIC];
    if (realTopic !== undefined && msg.topic === groupTopic) msg.topic = realTopic;
    props[MessageConst.CONSUME_START_TIME] = startTime;
  }
}

/** How one service reads its listener's answers. */
export interface ListenerRules<S extends string> {
  /** Every status the listener may answer. */
  readonly statuses: readonly S[];
  /** What resolving with nothing (`undefined`) means. */
  readonly success: S;
  /** What a throw, a rejection or a value that is not a status means. */
  readonly failure: S;
  /** Names the listener in logs ("listener", "orderly listener"). */
  readonly what: string;
}

/** Who calls the listener, for the logs. */
export interface ListenerLog {
  readonly logger: Logger;
  readonly consumerGroup: string;
  /** OpenTelemetry: a span per message around the listener call, and the consume metrics. */
  readonly telemetry?: ConsumerTelemetry | undefined;
  /** The consumer's message trace, when `enableMsgTrace` is on: a SubBefore and a SubAfter per call. */
  readonly trace?: MsgTrace | undefined;
}

/**
 * What a listener call's end means for its SubAfter record (RocketMQ's ConsumeReturnType): a throw is
 * EXCEPTION, an answer that is no status RETURNNULL, the failure status FAILED; success is the success
 * status or an orderly COMMIT.
 */
function traceOutcome<S extends string>(
  rules: ListenerRules<S>,
  status: S,
  how: 'answer' | 'invalid' | 'threw',
): ConsumeOutcome {
  if (how === 'threw') return ConsumeOutcomes.EXCEPTION;
  if (how === 'invalid') return ConsumeOutcomes.RETURNNULL;
  if (status === rules.failure) return ConsumeOutcomes.FAILED;
  return status === rules.success || status === 'COMMIT'
    ? ConsumeOutcomes.SUCCESS
    : { ...ConsumeOutcomes.SUCCESS, success: false };
}

/**
 * The listener's answer as a status, the same rule for both services: nothing (`undefined`) is
 * `success`, a known status is itself, and anything else (`null` included) is a listener bug, logged
 * and read as `failure` so no message is lost because of it.
 */
export function listenerStatus<S extends string>(
  answer: unknown,
  rules: ListenerRules<S>,
  log: ListenerLog,
  mq: MessageQueue,
): S {
  // `null` is not nothing: a listener answering null (Java's "no status") has not consumed its messages.
  if (answer === undefined) return rules.success;
  if (rules.statuses.includes(answer as S)) return answer as S;
  log.logger.warn(
    { mq, returned: answer },
    `${rules.what} returned a value that is not a status: treated as ${rules.failure}`,
  );
  return rules.failure;
}

function answered<S extends string, R>(
  answer: unknown,
  rules: ListenerRules<S>,
  log: ListenerLog,
  mq: MessageQueue,
  then: (status: S, error: unknown) => R,
  onSettled: (() => void) | undefined,
  traced: TraceContext | undefined,
): R {
  onSettled?.();
  const status = listenerStatus(answer, rules, log, mq);
  if (traced) {
    const how = answer === undefined || rules.statuses.includes(answer as S) ? 'answer' : 'invalid';
    log.trace?.consumed(traced, traceOutcome(rules, status, how), traced.traceBeans.length);
  }
  return then(status, undefined);
}

function threw<S extends string, R>(
  err: unknown,
  rules: ListenerRules<S>,
  log: ListenerLog,
  mq: MessageQueue,
  then: (status: S, error: unknown) => R,
  onSettled: (() => void) | undefined,
  traced: TraceContext | undefined,
): R {
  onSettled?.();
  log.logger.warn({ err, mq, group: log.consumerGroup }, `${rules.what} threw: treated as ${rules.failure}`);
  if (traced) log.trace?.consumed(traced, traceOutcome(rules, rules.failure, 'threw'), traced.traceBeans.length);
  return then(rules.failure, err);
}

/**
 * Calls `listener(msgs.slice(), context)` and hands its status to `then` (a throw or a rejection is
 * `rules.failure`, with what was thrown). Synchronous when the listener answers synchronously, and
 * then it costs no promise and no closure. `onSettled` runs once, when the listener's call has ended
 * and before `then`.
 */
export function runListener<C, S extends string, R>(
  listener: (msgs: MessageExt[], context: C) => unknown,
  msgs: readonly MessageExt[],
  context: C,
  rules: ListenerRules<S>,
  log: ListenerLog,
  mq: MessageQueue,
  then: (status: S, error: unknown) => R,
  onSettled?: () => void,
): R | Promise<Awaited<R>> {
  const span = log.telemetry?.process(msgs, mq);
  if (span) then = span.wrap(then, rules.failure);
  let answer: unknown;
  const traced = log.trace?.consuming(msgs);
  try {
    answer = span ? span.run(listener, msgs.slice(), context) : listener(msgs.slice(), context);
  } catch (err) {
    return threw(err, rules, log, mq, then, onSettled, traced);
  }
  if (!isThenable(answer)) return answered(answer, rules, log, mq, then, onSettled, traced);
  // `then` may return a promise itself: the chain resolves to its value.
  return Promise.resolve(answer).then(
    (a) => answered(a, rules, log, mq, then, onSettled, traced),
    (err: unknown) => threw(err, rules, log, mq, then, onSettled, traced),
  ) as Promise<Awaited<R>>;
}

/**
 * Takes finished messages out of the ProcessQueue and moves the queue's offset to its smallest held one
 * (or past the largest when none is left). `whileDropped` keeps doing so for a queue being released.
 */
export function commitConsumed(
  pq: ProcessQueue,
  mq: MessageQueue,
  done: readonly MessageExt[],
  now: number,
  offsetStore: OffsetStore,
  whileDropped: boolean,
): void {
  const offset = pq.removeMessage(done, now);
  if (offset >= 0 && (whileDropped || !pq.dropped)) offsetStore.updateOffset(mq, offset, true);
}

/** Waits for `idle` at most `ms` on `clock`; true when it came first. The timer is always cleared. */
export async function waitAtMost(idle: Promise<unknown>, ms: number, clock: Clock): Promise<boolean> {
  let timer: TimerHandle | undefined;
  try {
    return await Promise.race([
      idle.then(() => true),
      new Promise<boolean>((resolve) => {
        timer = clock.setTimeout(() => resolve(false), ms);
      }),
    ]);
  } finally {
    if (timer !== undefined) clock.clearTimeout(timer);
  }
}

/**
 * RocketMQ: ConsumeMessageConcurrentlyService.cleanExpireMsg — in each held queue, head messages
 * consumed for longer than `consumeTimeoutMs` are sent back (delay level 3) and removed.
 */
export async function cleanExpiredMessages(
  queues: Iterable<{ mq: MessageQueue; pq: ProcessQueue }>,
  consumeTimeoutMs: number,
  clock: Clock,
  sendMessageBack: (msg: MessageExt, delayLevel: number, mq: MessageQueue) => Promise<boolean>,
  logger: Logger,
): Promise<void> {
  for (const { mq, pq } of [...queues]) {
    try {
      const removed = await pq.cleanExpiredMsg(
        consumeTimeoutMs,
        () => clock.now(),
        async (msg) => {
          if (!(await sendMessageBack(msg, EXPIRED_SEND_BACK_DELAY_LEVEL, mq)))
            throw new RocketMQError('ERR_SEND_BACK', 'send back failed');
        },
      );
      if (removed.length)
        logger.warn({ mq, count: removed.length }, 'messages past consumeTimeout sent back for retry');
    } catch (err) {
      logger.warn({ err, mq }, 'cleanExpiredMsg failed');
    }
  }
}
