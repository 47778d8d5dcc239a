/**
 * RocketMQ's message-trace record format (TraceDataEncoder, TraceContext, TraceBean, TraceType,
 * TraceConstants): each record is its fields joined by CONTENT_SPLITOR (char 1) and ended by
 * FIELD_SPLITOR (char 2), so records from any client concatenate into one trace message body. The
 * encoder writes absent strings as Java's StringBuilder does (`null`), because RocketMQ's hooks leave a
 * message's missing tags or keys null and the query side reads what was written.
 * @pure
 */

/** RocketMQ: TraceConstants.CONTENT_SPLITOR, between the fields of a record. */
export const CONTENT_SPLITOR = '\u0001';
/** RocketMQ: TraceConstants.FIELD_SPLITOR, after each record. */
export const FIELD_SPLITOR = '\u0002';
/** RocketMQ: TopicValidator.RMQ_SYS_TRACE_TOPIC, where trace records go unless `traceTopic` says otherwise. */
export const DEFAULT_TRACE_TOPIC = 'RMQ_SYS_TRACE_TOPIC';
/** RocketMQ: TraceConstants.GROUP_NAME_PREFIX, the trace producer's group prefix. */
export const TRACE_GROUP_NAME_PREFIX = '_INNER_TRACE_PRODUCER';
/** RocketMQ: MixAll.DEFAULT_TRACE_REGION_ID. */
export const DEFAULT_TRACE_REGION_ID = 'DefaultRegion';

/**
 * RocketMQ: TraceType. `Recall` (RocketMQ 5's DefaultRecallMessageTraceHook, after RECALL_MESSAGE) is only
 * read: these clients do not recall messages.
 */
export type TraceType = 'Pub' | 'SubBefore' | 'SubAfter' | 'EndTransaction' | 'Recall';

/** RocketMQ's MessageType; the record carries the ordinal. */
export const TraceMessageType = Object.freeze({
  Normal_Msg: 0,
  Trans_Msg_Half: 1,
  Trans_msg_Commit: 2,
  Delay_Msg: 3,
  /** Added by RocketMQ 5's MessageType; its clients do not write it yet, a record may carry it. */
  Order_Msg: 4,
} as const);
export type TraceMessageType = (typeof TraceMessageType)[keyof typeof TraceMessageType];

/** RocketMQ's ConsumeReturnType; a SubAfter record carries the ordinal as its context code. */
export const ConsumeReturnType = Object.freeze({
  SUCCESS: 0,
  TIME_OUT: 1,
  EXCEPTION: 2,
  RETURNNULL: 3,
  FAILED: 4,
} as const);

/** One message of a record (RocketMQ: TraceBean). `null` is Java's absent string, written as `null`. */
export interface TraceBean {
  topic: string | null;
  msgId: string | null;
  offsetMsgId: string | null;
  tags: string | null;
  keys: string | null;
  storeHost: string | null;
  bodyLength: number;
  retryTimes: number;
  msgType: TraceMessageType;
  transactionId: string | null;
  /** LocalTransactionState's name (COMMIT_MESSAGE, ROLLBACK_MESSAGE, UNKNOW). */
  transactionState: string | null;
  fromTransactionCheck: boolean;
  /** Only read from old Pub records (their 15th field); never written. */
  clientHost?: string | undefined;
}

/** One record (RocketMQ: TraceContext). Pub and EndTransaction carry one bean; Sub records one per message. */
export interface TraceContext {
  traceType: TraceType;
  timeStamp: number;
  regionId: string | null;
  groupName: string | null;
  costTime: number;
  success: boolean;
  requestId: string | null;
  contextCode: number;
  traceBeans: TraceBean[];
}

/** A TraceBean with RocketMQ's defaults (empty strings, Normal_Msg). */
export function traceBean(fields: Partial<TraceBean>): TraceBean {
  return {
    topic: '',
    msgId: '',
    offsetMsgId: '',
    tags: '',
    keys: '',
    storeHost: '',
    bodyLength: 0,
    retryTimes: 0,
    msgType: TraceMessageType.Normal_Msg,
    transactionId: null,
    transactionState: null,
    fromTransactionCheck: false,
    ...fields,
  };
}

/** What one record contributes to a trace message: its text and its keys (RocketMQ: TraceTransferBean). */
export interface TraceTransfer {
  data: string;
  keys: string[];
}

/** Java's String.valueOf for what a StringBuilder appends. */
const j = (v: string | number | boolean | null): string => (v === null ? 'null' : String(v));

function line(fields: readonly (string | number | boolean | null)[], end: string): string {
  return fields.map(j).join(CONTENT_SPLITOR) + end;
}

/** RocketMQ: TraceDataEncoder.encoderFromContextBean — the record's text and keys (msg ids and message keys). */
export function encodeTraceContext(ctx: TraceContext): TraceTransfer {
  let data = '';
  const C = CONTENT_SPLITOR;
  const F = FIELD_SPLITOR;
  switch (ctx.traceType) {
    case 'Pub': {
      const b = ctx.traceBeans[0];
      if (b)
        data = line(
          [
            'Pub',
            ctx.timeStamp,
            ctx.regionId,
            ctx.groupName,
            b.topic,
            b.msgId,
            b.tags,
            b.keys,
            b.storeHost,
            b.bodyLength,
            ctx.costTime,
            b.msgType,
            b.offsetMsgId,
            ctx.success,
          ],
          F,
        );
      break;
    }
    case 'SubBefore':
      for (const b of ctx.traceBeans)
        data += line(
          ['SubBefore', ctx.timeStamp, ctx.regionId, ctx.groupName, ctx.requestId, b.msgId, b.retryTimes, b.keys],
          F,
        );
      break;
    case 'SubAfter':
      // The LOCAL access channel's form: the time stamp and group follow the context code.
      for (const b of ctx.traceBeans)
        data +=
          line(['SubAfter', ctx.requestId, b.msgId, ctx.costTime, ctx.success, b.keys, ctx.contextCode], C) +
          line([ctx.timeStamp, ctx.groupName], F);
      break;
    case 'EndTransaction': {
      const b = ctx.traceBeans[0];
      if (b)
        data = line(
          [
            'EndTransaction',
            ctx.timeStamp,
            ctx.regionId,
            ctx.groupName,
            b.topic,
            b.msgId,
            b.tags,
            b.keys,
            b.storeHost,
            b.msgType,
            b.transactionId,
            b.transactionState,
            b.fromTransactionCheck,
          ],
          F,
        );
      break;
    }
    case 'Recall': {
      const b = ctx.traceBeans[0];
      if (b) data = line(['Recall', ctx.timeStamp, ctx.regionId, ctx.groupName, b.topic, b.msgId, ctx.success], F);
      break;
    }
  }
  const keys: string[] = [];
  for (const b of ctx.traceBeans) {
    keys.push(j(b.msgId));
    if (b.keys !== null && b.keys.length > 0) keys.push(...b.keys.split(' '));
  }
  return { data, keys };
}

/** Java's Long.parseLong / Integer.parseInt: a malformed number fails the record, not the batch. */
function num(s: string | undefined): number {
  if (s === undefined || !/^[+-]?\d+$/.test(s)) throw new SyntaxError(`not a number: ${String(s)}`);
  return Number(s);
}

const str = (s: string | undefined): string => s ?? '';
const bool = (s: string | undefined): boolean => (s ?? '').toLowerCase() === 'true';

function decodeLine(f: string[]): TraceContext | undefined {
  const base = { regionId: '', groupName: '', costTime: 0, success: true, requestId: '', contextCode: 0 };
  switch (f[0]) {
    case 'Pub': {
      const bean = traceBean({
        topic: str(f[4]),
        msgId: str(f[5]),
        tags: str(f[6]),
        keys: str(f[7]),
        storeHost: str(f[8]),
        bodyLength: num(f[9]),
        msgType: num(f[11]) as TraceMessageType,
      });
      let success = true;
      if (f.length === 13) success = bool(f[12]);
      else if (f.length >= 14) {
        bean.offsetMsgId = str(f[12]);
        success = bool(f[13]);
        if (f.length >= 15) bean.clientHost = f[14];
      }
      return {
        ...base,
        traceType: 'Pub',
        timeStamp: num(f[1]),
        regionId: str(f[2]),
        groupName: str(f[3]),
        costTime: num(f[10]),
        success,
        traceBeans: [bean],
      };
    }
    case 'SubBefore':
      return {
        ...base,
        traceType: 'SubBefore',
        timeStamp: num(f[1]),
        regionId: str(f[2]),
        groupName: str(f[3]),
        requestId: str(f[4]),
        traceBeans: [traceBean({ msgId: str(f[5]), retryTimes: num(f[6]), keys: str(f[7]) })],
      };
    case 'SubAfter':
      return {
        ...base,
        traceType: 'SubAfter',
        requestId: str(f[1]),
        costTime: num(f[3]),
        success: bool(f[4]),
        contextCode: f.length >= 7 ? num(f[6]) : 0,
        // Records of the CLOUD access channel stop at the context code: no time stamp or group.
        timeStamp: f.length >= 9 ? num(f[7]) : 0,
        groupName: f.length >= 9 ? str(f[8]) : '',
        traceBeans: [traceBean({ msgId: str(f[2]), keys: str(f[5]) })],
      };
    case 'EndTransaction':
      return {
        ...base,
        traceType: 'EndTransaction',
        timeStamp: num(f[1]),
        regionId: str(f[2]),
        groupName: str(f[3]),
        traceBeans: [
          traceBean({
            topic: str(f[4]),
            msgId: str(f[5]),
            tags: str(f[6]),
            keys: str(f[7]),
            storeHost: str(f[8]),
            msgType: num(f[9]) as TraceMessageType,
            transactionId: str(f[10]),
            transactionState: str(f[11]),
            fromTransactionCheck: bool(f[12]),
          }),
        ],
      };
    case 'Recall':
      return {
        ...base,
        traceType: 'Recall',
        timeStamp: num(f[1]),
        regionId: str(f[2]),
        groupName: str(f[3]),
        success: bool(f[6]),
        traceBeans: [traceBean({ topic: str(f[4]), msgId: str(f[5]) })],
      };
    default:
      return undefined;
  }
}

/**
 * RocketMQ: TraceDataEncoder.decoderFromTraceDataString — the records of a trace message body. A record
 * that is cut short or malformed is skipped (RocketMQ's decoder throws on the whole body instead), so one
 * bad writer cannot hide the other clients' records.
 */
export function decodeTraceData(data: string): TraceContext[] {
  const out: TraceContext[] = [];
  if (!data) return out;
  for (const record of data.split(FIELD_SPLITOR)) {
    if (record.length === 0) continue;
    try {
      // Java's String.split drops trailing empty fields; the field counts below rely on it.
      const fields = record.split(CONTENT_SPLITOR);
      while (fields.length > 1 && fields[fields.length - 1] === '') fields.pop();
      const ctx = decodeLine(fields);
      if (ctx) out.push(ctx);
    } catch {
      // a malformed record: skipped (see above)
    }
  }
  return out;
}
