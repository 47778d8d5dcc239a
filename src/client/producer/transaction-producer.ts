/**
 * TransactionProducer (RocketMQ's TransactionMQProducer with DefaultMQProducerImpl.sendMessageInTransaction
 * and checkTransactionState): a message is first sent as a half message, invisible to consumers; the
 * listener's `executeLocalTransaction` runs; its answer commits (the message is delivered), rolls back
 * (it never is) or leaves the decision open (UNKNOW), and the producer tells the broker with a oneway
 * END_TRANSACTION. A half message left open is checked later by the broker, which asks a live member of
 * the producer group (over the TCP transport); `checkLocalTransaction` answers and the producer tells the
 * broker again.
 *
 * As in RocketMQ: a delay level on the message is dropped, a send not stored as SEND_OK rolls back, a
 * listener that throws or answers nothing leaves the decision UNKNOW, and a failed END_TRANSACTION is
 * only logged (the check-back settles it).
 */
import { InvalidArgumentError } from '../../common/errors.js';
import { MessageSysFlag, decodeMessageId } from '../../common/codec/index.js';
import { MessageConst, type Message, type MessageExt } from '../../common/message.js';
import type { EndTransactionRequestHeader } from '../../protocol/commands/end-transaction.js';
import type { CheckTransactionStateRequestHeader } from '../../protocol/commands/end-transaction.js';
import { SlotSet } from '../../common/slot-set.js';
import type { MQProducerInner } from '../instance/mq-consumer-inner.js';
import type { MQClientInstance } from '../instance/mq-client-instance.js';
import { Producer } from './producer.js';
import type { ProducerOptions } from './producer-options.js';
import type { SendResult } from './producer-types.js';

/** RocketMQ's LocalTransactionState. */
export const LocalTransactionState = Object.freeze({
  COMMIT_MESSAGE: 'COMMIT_MESSAGE',
  ROLLBACK_MESSAGE: 'ROLLBACK_MESSAGE',
  UNKNOW: 'UNKNOW',
} as const);
export type LocalTransactionState = (typeof LocalTransactionState)[keyof typeof LocalTransactionState];

/** A message as `executeLocalTransaction` sees it: the one sent, with its transaction id (its msgId). */
export type TransactionMessage = Message & { transactionId: string };

/** What a TransactionProducer asks of your code (RocketMQ's TransactionListener); sync or async. */
export interface TransactionListener {
  /** Runs your local transaction after the half message is stored; `arg` is what sendMessageInTransaction got. */
  executeLocalTransaction(
    message: TransactionMessage,
    arg: unknown,
  ): LocalTransactionState | Promise<LocalTransactionState>;
  /** Answers the broker's check of a half message left undecided (after a restart, a crash or UNKNOW). */
  checkLocalTransaction(message: MessageExt): LocalTransactionState | Promise<LocalTransactionState>;
}

export interface TransactionProducerOptions extends ProducerOptions {
  transactionListener: TransactionListener;
}

/** RocketMQ's TransactionSendResult. */
export interface TransactionSendResult extends SendResult {
  /** The message's transaction id (its UNIQ_KEY, the msgId). */
  transactionId: string;
  localTransactionState: LocalTransactionState;
}

const STATES = new Set<string>(Object.values(LocalTransactionState));

const tranType = (state: LocalTransactionState): number =>
  state === LocalTransactionState.COMMIT_MESSAGE
    ? MessageSysFlag.TRANSACTION_COMMIT_TYPE
    : state === LocalTransactionState.ROLLBACK_MESSAGE
      ? MessageSysFlag.TRANSACTION_ROLLBACK_TYPE
      : MessageSysFlag.TRANSACTION_NOT_TYPE;

function checkListener(listener: unknown): TransactionListener {
  const l = listener as Partial<TransactionListener> | null | undefined;
  if (
    l === null ||
    typeof l !== 'object' ||
    typeof l.executeLocalTransaction !== 'function' ||
    typeof l.checkLocalTransaction !== 'function'
  ) {
    throw new InvalidArgumentError(
      'transactionListener',
      'must be an object with executeLocalTransaction(message, arg) and checkLocalTransaction(message)',
    );
  }
  return l as TransactionListener;
}

/**
 * Sends transactional messages. Create it with a `producerGroup`, `namesrvAddr` or `endpoints` and a
 * `transactionListener`, `start()` it, then `sendMessageInTransaction(message, arg)`.
 *
 * ```ts
 * const producer = new TransactionProducer({
 *   producerGroup: 'orders', namesrvAddr: '127.0.0.1:9876',
 *   transactionListener: {
 *     executeLocalTransaction: async (msg) => ((await saveOrder(msg)) ? 'COMMIT_MESSAGE' : 'ROLLBACK_MESSAGE'),
 *     checkLocalTransaction: async (msg) => ((await orderExists(msg)) ? 'COMMIT_MESSAGE' : 'ROLLBACK_MESSAGE'),
 *   },
 * });
 * ```
 */
export class TransactionProducer extends Producer {
  readonly transactionListener: TransactionListener;
  readonly #checks = new SlotSet<Promise<unknown>>();
  /** Brokers this producer's group was announced to (the check-back goes to an announced member). */
  readonly #announced = new Set<string>();
  #closing: Promise<void> | undefined;

  constructor(options: TransactionProducerOptions) {
    if (options === null || typeof options !== 'object') {
      throw new InvalidArgumentError('options', 'TransactionProducer options are required');
    }
    const { transactionListener, ...producerOptions } = options;
    const listener = checkListener(transactionListener);
    super(producerOptions);
    this.transactionListener = listener;
  }

  /**
   * Starts the producer and announces its group to the brokers of the template topic's route at once, as
   * RocketMQ's producer does, so a broker can check back a transaction with any member of the group.
   */
  override async start(): Promise<void> {
    await super.start();
    const instance = this.runningInstance();
    await instance.getTopicPublishInfo(this.options.createTopicKey).catch(() => undefined);
    await instance.sendHeartbeatToAllBrokers();
  }

  /** Makes sure the broker holding a half message knows this member of the group before it may check. */
  async #announce(instance: MQClientInstance, addr: string): Promise<void> {
    if (this.#announced.has(addr)) return;
    try {
      await instance.heartbeatOrThrow([addr]);
      this.#announced.add(addr);
    } catch (err) {
      this.options.logger.warn({ err, addr }, 'announcing the transactional producer failed');
    }
  }

  protected override producerInner(): MQProducerInner {
    return {
      groupName: () => this.wireGroup,
      checkTransactionState: (addr, msg, header) => this.#track(this.#checkTransactionState(addr, msg, header)),
    };
  }

  /**
   * RocketMQ: sendMessageInTransaction — sends `message` as a half message, runs the local transaction
   * and tells the broker its outcome. Rejects only when the half message could not be sent.
   */
  async sendMessageInTransaction(message: Message, arg?: unknown): Promise<TransactionSendResult> {
    const logger = this.options.logger;
    const { delayTimeLevel, ...rest } = message;
    if (delayTimeLevel !== undefined) logger.debug({ delayTimeLevel }, 'a transactional message is not delayed');
    const properties = { ...(message.properties ?? {}) };
    delete properties[MessageConst.DELAY];
    properties[MessageConst.TRAN_MSG] = 'true';
    properties[MessageConst.PGROUP] = this.wireGroup;
    const half: Message = { ...rest, properties };
    const sendResult = await this.sendPrepared(half, {}, (req) => {
      req.header.sysFlag |= MessageSysFlag.TRANSACTION_PREPARED_TYPE;
    });
    const transactionId = sendResult.msgId;
    const instance = this.runningInstance();
    const addr = instance.findBrokerAddressInPublish(sendResult.messageQueue.brokerName);
    if (addr !== undefined) await this.#announce(instance, addr);
    let state: LocalTransactionState = LocalTransactionState.ROLLBACK_MESSAGE;
    let localError: unknown;
    if (sendResult.sendStatus === 'SEND_OK') {
      try {
        state = this.#stateOf(await this.transactionListener.executeLocalTransaction({ ...half, transactionId }, arg));
      } catch (err) {
        localError = err;
        state = LocalTransactionState.UNKNOW;
        logger.info({ err, transactionId }, 'executeLocalTransaction threw; the broker will check the transaction');
      }
    }
    try {
      await this.#endTransaction(instance, sendResult, state, transactionId, half);
    } catch (err) {
      logger.warn({ err, transactionId, state, localError }, 'END_TRANSACTION not sent; the broker will check');
    }
    return { ...sendResult, transactionId, localTransactionState: state };
  }

  #stateOf(answer: unknown): LocalTransactionState {
    if (typeof answer === 'string' && STATES.has(answer)) return answer as LocalTransactionState;
    if (answer !== undefined && answer !== null)
      this.options.logger.warn({ answer }, 'the transaction listener answered no LocalTransactionState; UNKNOW');
    return LocalTransactionState.UNKNOW;
  }

  /** RocketMQ: DefaultMQProducerImpl.endTransaction. */
  async #endTransaction(
    instance: MQClientInstance,
    sendResult: SendResult,
    state: LocalTransactionState,
    transactionId: string,
    half: Message,
  ): Promise<void> {
    const { offset } = decodeMessageId(sendResult.offsetMsgId || sendResult.msgId);
    const addr = instance.findBrokerAddressInPublish(sendResult.messageQueue.brokerName);
    if (addr === undefined) throw new Error(`the broker ${sendResult.messageQueue.brokerName} is not known`);
    const header: EndTransactionRequestHeader = {
      producerGroup: this.wireGroup,
      tranStateTableOffset: sendResult.queueOffset,
      commitLogOffset: offset,
      commitOrRollback: tranType(state),
      fromTransactionCheck: false,
      msgId: sendResult.msgId,
      transactionId,
    };
    await instance.api.endTransactionOneway(addr, header, { timeoutMs: this.options.sendMsgTimeoutMs });
    this.msgTrace()?.endTransaction({
      addr,
      message: half,
      msgId: sendResult.msgId,
      transactionId,
      state,
      fromTransactionCheck: false,
    });
  }

  /** RocketMQ: DefaultMQProducerImpl.checkTransactionState — asks the listener, answers the broker. */
  async #checkTransactionState(addr: string, msg: MessageExt, h: CheckTransactionStateRequestHeader): Promise<void> {
    const logger = this.options.logger;
    let state: LocalTransactionState = LocalTransactionState.UNKNOW;
    try {
      state = this.#stateOf(await this.transactionListener.checkLocalTransaction(this.names.unwrapMessage(msg)));
    } catch (err) {
      logger.warn({ err, msgId: msg.msgId }, 'checkLocalTransaction threw; answering UNKNOW');
    }
    let instance: MQClientInstance;
    try {
      instance = this.runningInstance();
    } catch {
      return;
    }
    const header: EndTransactionRequestHeader = {
      producerGroup: this.wireGroup,
      tranStateTableOffset: h.tranStateTableOffset,
      commitLogOffset: h.commitLogOffset,
      commitOrRollback: tranType(state),
      fromTransactionCheck: true,
      msgId: (msg.properties ?? {})[MessageConst.UNIQ_KEY] ?? msg.msgId,
      transactionId: h.transactionId,
    };
    await instance.api.endTransactionOneway(addr, header, { timeoutMs: this.options.sendMsgTimeoutMs });
    this.msgTrace()?.endTransaction({
      addr,
      message: msg,
      msgId: header.msgId ?? msg.msgId,
      transactionId: h.transactionId,
      state,
      fromTransactionCheck: true,
    });
  }

  #track(p: Promise<void>): void {
    const slot = this.#checks.add(p);
    const done = (): void => this.#checks.delete(slot, p);
    p.then(done, (err: unknown) => {
      done();
      this.options.logger.warn({ err }, 'answering a transaction check failed');
    });
  }

  /** Waits for check-backs being answered, then shuts the producer down. Idempotent. */
  override shutdown(): Promise<void> {
    this.#closing ??= Promise.allSettled(this.#checks.toArray()).then(() => super.shutdown());
    return this.#closing;
  }
}
