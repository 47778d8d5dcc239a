/**
 * What the parts of a LitePullConsumer (assignment, fetching, offsets, lifecycle) share and name
 * without importing each other or the public class: its states and events, the view of the consumer
 * they read, what one start() creates, and the argument checks.
 */
import type { MsgTrace } from '../../trace/trace-hooks.js';
import type { ConsumerTelemetry } from '../../telemetry/index.js';
import { InvalidArgumentError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageQueue } from '../../../common/message.js';
import type { ConsumerStartup, ReadyEvent } from '../consumer-startup.js';
import type { ConnectionErrorEvent } from '../../instance/connection-errors.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { SafeEventEmitter } from '../../instance/safe-emitter.js';
import type { OffsetPersistedEvent, OffsetStore } from '../offset-store.js';
import type { PullAPIWrapper } from '../pull-api-wrapper.js';
import type { PullMessageService } from '../pull-message-service.js';
import type { RebalanceImpl } from '../rebalance-impl.js';
import type { ResolvedLitePullConsumerOptions } from './lite-pull-consumer-options.js';
import type { LiteFlowControlEvent, LitePullErrorEvent } from './lite-pull-message.js';
import type { AssignmentChangedEvent } from './rebalance-lite-pull-impl.js';

export type LitePullConsumerState =
  'CREATE_JUST' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN' | 'START_FAILED';

export interface LitePullConsumerEvents {
  /** `subscribe` mode: the queues of a topic held by this member changed. */
  assignmentChanged: [event: AssignmentChangedEvent];
  pullError: [event: LitePullErrorEvent];
  flowControl: [event: LiteFlowControlEvent];
  offsetPersisted: [event: OffsetPersistedEvent];
  /** The consumer holds its queues and their first pulls are held by the broker (as `ready` resolves). */
  ready: [event: ReadyEvent];
  /** A NameServer or broker that has not answered yet could not be reached (once per address); it keeps trying. */
  connectionError: [event: ConnectionErrorEvent];
}

/** What one start() creates. */
export interface LiteRun {
  instance: MQClientInstance;
  wrapper: PullAPIWrapper;
  offsetStore: OffsetStore;
  pulls: PullMessageService;
  rebalance: RebalanceImpl;
  /** The settle and the `ready` signal, once the brokers know this member. */
  startup: ConsumerStartup | undefined;
  /** The message trace, when `enableMsgTrace` is on. */
  trace?: MsgTrace | undefined;
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
  /** OpenTelemetry: a receive span per message handed out, and the consume metrics. */
  readonly telemetry: ConsumerTelemetry;
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
