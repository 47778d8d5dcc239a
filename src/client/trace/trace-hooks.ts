/**
 * The hooks that turn the message path's events into trace records (RocketMQ:
 * SendMessageTraceHookImpl, ConsumeMessageTraceHookImpl, EndTransactionTraceHookImpl). Each builds a
 * record and appends it to the dispatcher; none throws, so a hook can never fail a send or a consume.
 */
import type { Clock } from '../../common/clock.js';
import type { Logger } from '../../common/logger.js';
import { MessageConst, type MessageExt } from '../../common/message.js';
import { createUniqId, string2messageProperties } from '../../common/codec/index.js';
import type { SendMessageRequestHeader } from '../../protocol/commands/index.js';
import type { SendResponse } from '../instance/mq-client-api.js';
import type { AsyncTraceDispatcher } from './async-trace-dispatcher.js';
import {
  ConsumeReturnType,
  DEFAULT_TRACE_REGION_ID,
  TraceMessageType,
  traceBean,
  type TraceBean,
  type TraceContext,
} from './trace-codec.js';

/** RocketMQ: MessageConst.PROPERTY_MSG_REGION and PROPERTY_TRACE_SWITCH. */
const MSG_REGION = 'MSG_REGION';
const TRACE_ON = 'TRACE_ON';
/** RocketMQ: MessageConst.PROPERTY_STARTDE_LIVER_TIME, the timed delivery that also makes a Delay_Msg. */
const START_DELIVER_TIME = '__STARTDELIVERTIME';

function context(type: TraceContext['traceType'], timeStamp: number, beans: TraceBean[]): TraceContext {
  return {
    traceType: type,
    timeStamp,
    regionId: '',
    groupName: '',
    costTime: 0,
    success: true,
    requestId: '',
    contextCode: 0,
    traceBeans: beans,
  };
}

/** How a consume ended, for a SubAfter record. */
export interface ConsumeOutcome {
  success: boolean;
  /** RocketMQ's ConsumeReturnType ordinal (the SubAfter record's context code). */
  returnType: number;
}

/** The consume outcomes RocketMQ's consume services record. */
export const ConsumeOutcomes = Object.freeze({
  SUCCESS: { success: true, returnType: ConsumeReturnType.SUCCESS },
  FAILED: { success: false, returnType: ConsumeReturnType.FAILED },
  EXCEPTION: { success: false, returnType: ConsumeReturnType.EXCEPTION },
  RETURNNULL: { success: false, returnType: ConsumeReturnType.RETURNNULL },
} satisfies Record<string, ConsumeOutcome>);

/** The tracing of one client: its dispatcher and the hooks its message path calls. */
export class MsgTrace {
  readonly dispatcher: AsyncTraceDispatcher;
  readonly #group: string;
  readonly #clock: Clock;
  readonly #logger: Logger;
  #hookFailed = false;
  /** A SimpleConsumer's received messages → their SubBefore, until acknowledged or handed back. */
  readonly #received = new WeakMap<MessageExt, TraceContext>();

  constructor(dispatcher: AsyncTraceDispatcher, group: string, clock: Clock, logger: Logger) {
    this.dispatcher = dispatcher;
    this.#group = group;
    this.#clock = clock;
    this.#logger = logger;
  }

  #append(ctx: TraceContext): void {
    this.dispatcher.append(ctx);
  }

  /** A hook bug is logged once; the message path goes on. */
  #failed(err: unknown): void {
    if (this.#hookFailed) return;
    this.#hookFailed = true;
    this.#logger.warn({ err }, 'building a trace record failed; the message path is not affected');
  }

  /**
   * RocketMQ: SendMessageTraceHookImpl — a Pub record once a broker answered a send attempt (an attempt
   * that failed has no answer and no record, as in RocketMQ). `startedAt` is when the attempt began.
   */
  sent(addr: string, header: SendMessageRequestHeader, bodyLength: number, msgId: string, r: SendResponse): void {
    try {
      if (header.topic.startsWith(this.dispatcher.traceTopic)) return;
      // A broker that names no region, or has tracing off, is not traced (RocketMQ skips the same).
      if (r.regionId === undefined || !r.traceOn) return;
      const props = string2messageProperties(header.properties ?? '');
      let msgType: TraceMessageType = TraceMessageType.Normal_Msg;
      if (props[MessageConst.TRAN_MSG] === 'true') msgType = TraceMessageType.Trans_Msg_Half;
      if (props[START_DELIVER_TIME] !== undefined || props[MessageConst.DELAY] !== undefined)
        msgType = TraceMessageType.Delay_Msg;
      const startedAt = header.bornTimestamp;
      const ctx = context('Pub', startedAt, [
        traceBean({
          topic: header.topic,
          msgId,
          offsetMsgId: r.offsetMsgId,
          tags: props[MessageConst.TAGS] ?? null,
          keys: props[MessageConst.KEYS] ?? null,
          storeHost: addr,
          bodyLength,
          msgType,
        }),
      ]);
      ctx.groupName = header.producerGroup;
      ctx.regionId = r.regionId;
      ctx.costTime = Math.max(0, this.#clock.now() - startedAt);
      ctx.success = r.sendStatus === 'SEND_OK';
      this.#append(ctx);
    } catch (err) {
      this.#failed(err);
    }
  }

  /**
   * RocketMQ: ConsumeMessageTraceHookImpl.consumeMessageBefore — a SubBefore record for the messages
   * handed to the listener (those whose TRACE_ON is `false` left out). Returns what `consumed` needs.
   */
  consuming(msgs: readonly MessageExt[]): TraceContext | undefined {
    try {
      const beans: TraceBean[] = [];
      let regionId: string | null = null;
      for (const msg of msgs) {
        const props = msg.properties ?? {};
        if (props[TRACE_ON] === 'false') continue;
        regionId = props[MSG_REGION] ?? null;
        beans.push(
          traceBean({
            topic: msg.topic,
            msgId: msg.msgId,
            tags: props[MessageConst.TAGS] ?? null,
            keys: props[MessageConst.KEYS] ?? null,
            bodyLength: msg.storeSize,
            retryTimes: msg.reconsumeTimes,
          }),
        );
      }
      if (beans.length === 0) return undefined;
      const ctx = context('SubBefore', this.#clock.now(), beans);
      ctx.groupName = this.#group;
      ctx.regionId = regionId;
      ctx.requestId = createUniqId(this.#clock);
      this.#append(ctx);
      return ctx;
    } catch (err) {
      this.#failed(err);
      return undefined;
    }
  }

  /** RocketMQ: ConsumeMessageTraceHookImpl.consumeMessageAfter — the SubAfter records of a consume. */
  consumed(before: TraceContext | undefined, outcome: ConsumeOutcome, msgCount: number): void {
    if (!before) return;
    try {
      const now = this.#clock.now();
      const ctx = context('SubAfter', now, before.traceBeans);
      ctx.groupName = before.groupName;
      ctx.regionId = before.regionId;
      ctx.requestId = before.requestId;
      ctx.success = outcome.success;
      ctx.contextCode = outcome.returnType;
      ctx.costTime = Math.max(0, Math.trunc((now - before.timeStamp) / Math.max(1, msgCount)));
      this.#append(ctx);
    } catch (err) {
      this.#failed(err);
    }
  }

  /**
   * RocketMQ: DefaultLitePullConsumerImpl.pull runs the consume hooks on the messages a pull found, a
   * SubBefore and at once a successful SubAfter; here they run as the messages are handed to the
   * application, which is when this consumer decodes them.
   */
  pulled(msgs: readonly MessageExt[]): void {
    this.consumed(this.consuming(msgs), ConsumeOutcomes.SUCCESS, msgs.length);
  }

  /**
   * A SimpleConsumer's receive: one SubBefore for what a receive brought. RocketMQ 5's remoting client
   * has no SimpleConsumer; its POP push consumer records a SubBefore and a SubAfter around the listener,
   * and here the listener is the application between receive and ack.
   */
  received(msgs: readonly MessageExt[]): void {
    const ctx = this.consuming(msgs);
    if (ctx) for (const m of msgs) this.#received.set(m, ctx);
  }

  /** A SimpleConsumer's ack (success) or changeInvisibleDuration (failed): the message's SubAfter. */
  settled(msg: MessageExt, outcome: ConsumeOutcome): void {
    const before = this.#received.get(msg);
    if (!before) return;
    this.#received.delete(msg);
    const bean = before.traceBeans.find((b) => b.msgId === msg.msgId);
    if (bean) this.consumed({ ...before, traceBeans: [bean] }, outcome, 1);
  }

  /**
   * RocketMQ: EndTransactionTraceHookImpl — an EndTransaction record once END_TRANSACTION was sent (or
   * a transaction check answered).
   */
  endTransaction(e: {
    addr: string;
    message: {
      topic: string;
      tags?: string | undefined;
      keys?: string | readonly string[] | undefined;
      properties?: Readonly<Record<string, string>> | null | undefined;
    };
    msgId: string;
    transactionId: string | undefined;
    state: string;
    fromTransactionCheck: boolean;
  }): void {
    try {
      const { message } = e;
      if (message.topic.startsWith(this.dispatcher.traceTopic)) return;
      const props = message.properties ?? {};
      const keys = Array.isArray(message.keys) ? message.keys.join(MessageConst.KEY_SEPARATOR) : message.keys;
      const ctx = context('EndTransaction', this.#clock.now(), [
        traceBean({
          topic: message.topic,
          msgId: e.msgId,
          tags: message.tags ?? props[MessageConst.TAGS] ?? null,
          keys: (keys as string | undefined) ?? props[MessageConst.KEYS] ?? null,
          storeHost: e.addr,
          msgType: TraceMessageType.Trans_msg_Commit,
          transactionId: e.transactionId ?? null,
          transactionState: e.state,
          fromTransactionCheck: e.fromTransactionCheck,
        }),
      ]);
      ctx.groupName = this.#group;
      const region = props[MSG_REGION];
      ctx.regionId = region === undefined || region === '' ? DEFAULT_TRACE_REGION_ID : region;
      this.#append(ctx);
    } catch (err) {
      this.#failed(err);
    }
  }
}
