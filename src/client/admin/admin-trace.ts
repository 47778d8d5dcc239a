/**
 * The AdminClient's message-trace query (mqadmin `queryMsgTraceById`, RocketMQ's
 * QueryMsgTraceByIdSubCommand and TraceView): the trace topic's messages whose keys hold the message id,
 * decoded into the records about that message.
 */
import { InvalidArgumentError } from '../../common/errors.js';
import { decodeTraceData, DEFAULT_TRACE_TOPIC, type TraceType } from '../trace/trace-codec.js';
import { queryMsgByKey } from './admin-messages.js';
import type { AdminTransport } from './admin-transport.js';

/** One trace record about a message (RocketMQ: TraceView). */
export interface MsgTraceView {
  /** Pub, SubBefore, SubAfter or EndTransaction. */
  type: TraceType;
  msgId: string;
  topic: string;
  tags: string;
  keys: string;
  offsetMsgId: string;
  storeHost: string;
  /** The host that sent the trace record (the trace message's born host). */
  clientHost: string;
  groupName: string;
  /** When the send or consume began (a SubAfter: when it ended), ms. */
  timeStamp: number;
  costTime: number;
  /** `success` or `failed`, as mqadmin prints it. */
  status: 'success' | 'failed';
}

export interface QueryMsgTraceOptions {
  /** The trace topic. Default `RMQ_SYS_TRACE_TOPIC`. */
  traceTopic?: string;
}

export async function queryMsgTraceById(
  t: AdminTransport,
  msgId: string,
  options: QueryMsgTraceOptions = {},
): Promise<MsgTraceView[]> {
  if (typeof msgId !== 'string' || msgId.trim() === '') throw new InvalidArgumentError('msgId', 'must be a message id');
  const id = msgId.trim();
  // RocketMQ asks for 64 messages of the trace topic up to now.
  const messages = await queryMsgByKey(t, options.traceTopic ?? DEFAULT_TRACE_TOPIC, id, {
    maxNum: 64,
    endTimestamp: Date.now(),
  });
  const views: MsgTraceView[] = [];
  for (const m of [...messages].reverse()) {
    const body = m.body ? m.body.toString('utf8') : '';
    for (const ctx of decodeTraceData(body)) {
      const bean = ctx.traceBeans[0];
      if (!bean || bean.msgId !== id) continue;
      views.push({
        type: ctx.traceType,
        msgId: id,
        topic: bean.topic ?? '',
        tags: bean.tags ?? '',
        keys: bean.keys ?? '',
        offsetMsgId: bean.offsetMsgId ?? '',
        storeHost: bean.storeHost ?? '',
        clientHost: m.bornHost.ip,
        groupName: ctx.groupName ?? '',
        timeStamp: ctx.timeStamp,
        costTime: ctx.costTime,
        status: ctx.success ? 'success' : 'failed',
      });
    }
  }
  return views;
}
