/**
 * The few broker metrics that cannot be read from existing tables at scrape time, so they are counted
 * as things happen (RocketMQ: the histograms and counters of BrokerMetricsManager and
 * RemotingMetricsManager): the latency of each answered request, the size of stored messages and the
 * messages sent to a dead-letter queue. Recording only bumps numbers in series created on first use;
 * labels are made when the endpoint is scraped (broker-metrics.ts).
 * @pure
 */
import { MessageConst } from '../../common/message.js';
import { RequestCode, ResponseCode } from '../../protocol/index.js';

/** RocketMQ: RemotingMetricsManager's rpc latency buckets, milliseconds. */
export const RPC_LATENCY_BUCKETS: readonly number[] = [1, 3, 5, 7, 10, 100, 1000, 2000, 3000];
/** RocketMQ: BrokerMetricsManager's message size buckets, bytes (1 KiB to 4 MiB). */
export const MESSAGE_SIZE_BUCKETS: readonly number[] = [1024, 4096, 512 * 1024, 1024 * 1024, 2048 * 1024, 4096 * 1024];

/** RocketMQ: BrokerMetricsManager's transaction finish latency buckets, seconds (5 s to a day). */
export const FINISH_LATENCY_BUCKETS: readonly number[] = [5, 60, 600, 3600, 12 * 3600, 24 * 3600];

/** The `protocol_type` label: the listener a request came in on. */
export type ProtocolType = 'http' | 'remoting';

/** RocketMQ: TopicMessageType's metrics values. */
export type TopicMessageType = 'normal' | 'fifo' | 'delay' | 'transaction';

/** Observations in fixed buckets (Prometheus's cumulative `le` counts are made at scrape time). */
export class Histogram {
  /** Per bucket, then the overflow past the last bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(v: number): void {
    const b = this.bounds;
    let i = 0;
    while (i < b.length && v > (b[i] as number)) i++;
    this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += v;
    this.count++;
  }
}

export interface RpcSeries {
  protocol: ProtocolType;
  requestCode: number;
  responseCode: number;
  histogram: Histogram;
}

/** Request codes RocketMQ names (RemotingHelper writes a code's field name in lower case); others are `unknown`. */
const REQUEST_NAMES = new Map<number, string>(Object.entries(RequestCode).map(([k, v]) => [v, k.toLowerCase()]));
const RESPONSE_NAMES = new Map<number, string>(Object.entries(ResponseCode).map(([k, v]) => [v, k.toLowerCase()]));

/** The `request_code` label, as RocketMQ's RemotingHelper.getRequestCodeDesc writes it. */
export const requestCodeLabel = (code: number): string => REQUEST_NAMES.get(code) ?? String(code);
/** The `response_code` label, as RocketMQ's RemotingHelper.getResponseCodeDesc writes it. */
export const responseCodeLabel = (code: number): string => RESPONSE_NAMES.get(code) ?? String(code);

/**
 * Unknown request codes share one series, so a client sending made-up codes cannot grow the table;
 * RocketMQ answers them REQUEST_CODE_NOT_SUPPORTED anyway.
 */
const UNKNOWN_REQUEST = -1;
/** Response codes are small numbers; the key reserves this many per request code and protocol. */
const RESPONSE_SPAN = 1 << 16;

/** RocketMQ's properties of a delayed or timed message (MessageConst). */
const DELAY_PROPERTIES = [
  MessageConst.DELAY,
  '__STARTDELIVERTIME',
  'TIMER_DELIVER_MS',
  'TIMER_DELAY_SEC',
  'TIMER_DELAY_MS',
] as const;

/** RocketMQ: BrokerMetricsManager.getMessageType, from a sent message's properties. */
export function topicMessageType(properties: Readonly<Record<string, string>>): TopicMessageType {
  if (properties[MessageConst.TRAN_MSG] === 'true') return 'transaction';
  if (properties[MessageConst.SHARDING_KEY] !== undefined) return 'fifo';
  return DELAY_PROPERTIES.some((p) => properties[p] !== undefined) ? 'delay' : 'normal';
}

const isRetryOrDlq = (topic: string): boolean => topic.startsWith('%RETRY%') || topic.startsWith('%DLQ%');

export class BrokerMetricsRecorder {
  /** rocketmq_rpc_latency, keyed by request code, protocol and response code folded into one number. */
  readonly rpc = new Map<number, RpcSeries>();
  /** rocketmq_message_size, keyed by `topic` and message type. */
  readonly messageSize = new Map<string, Map<TopicMessageType, Histogram>>();
  /** rocketmq_send_to_dlq_messages_total, keyed by group then by the topic the message came from. */
  readonly sentToDlq = new Map<string, Map<string, number>>();
  /** rocketmq_commit_messages_total, rocketmq_rollback_messages_total and rocketmq_finish_message_latency, per topic. */
  readonly transactions = new Map<string, { commits: number; rollbacks: number; finish: Histogram }>();
  /**
   * rocketmq_consumer_queueing_latency and rocketmq_consumer_lag_latency per group then topic, as the
   * metrics endpoint computed them just before its last scrape (they need the commit log's store times).
   */
  consumerLatencies = new Map<string, Map<string, { queueingMs: number; lagMs: number }>>();

  /** A request answered after `ms` milliseconds (RocketMQ: NettyRemotingAbstract.writeResponse). */
  onRpc(protocol: ProtocolType, requestCode: number, responseCode: number, ms: number): void {
    const code = REQUEST_NAMES.has(requestCode) ? requestCode : UNKNOWN_REQUEST;
    const key = ((code + 1) * 2 + (protocol === 'http' ? 0 : 1)) * RESPONSE_SPAN + (responseCode & (RESPONSE_SPAN - 1));
    let s = this.rpc.get(key);
    if (!s) {
      s = { protocol, requestCode: code, responseCode, histogram: new Histogram(RPC_LATENCY_BUCKETS) };
      this.rpc.set(key, s);
    }
    s.histogram.observe(ms);
  }

  /**
   * Messages stored by one send (a batch is one observation of its average size, as RocketMQ records
   * wroteBytes / msgNum); retry and dead-letter topics are left out, as in RocketMQ.
   */
  onStored(topic: string, properties: Readonly<Record<string, string>>, wroteBytes: number, messages = 1): void {
    if (isRetryOrDlq(topic) || messages <= 0) return;
    let byType = this.messageSize.get(topic);
    if (!byType) this.messageSize.set(topic, (byType = new Map()));
    const type = topicMessageType(properties);
    let h = byType.get(type);
    if (!h) byType.set(type, (h = new Histogram(MESSAGE_SIZE_BUCKETS)));
    h.observe(Math.floor(wroteBytes / messages));
  }

  /** A message of `group` from `topic` goes to the group's dead-letter queue. */
  onSendToDlq(group: string, topic: string): void {
    let byTopic = this.sentToDlq.get(group);
    if (!byTopic) this.sentToDlq.set(group, (byTopic = new Map()));
    byTopic.set(topic, (byTopic.get(topic) ?? 0) + 1);
  }

  /** A transaction of a half message for `topic` committed or rolled back, `seconds` after the half was born. */
  onTransactionEnd(topic: string, commit: boolean, seconds: number): void {
    let t = this.transactions.get(topic);
    if (!t)
      this.transactions.set(topic, (t = { commits: 0, rollbacks: 0, finish: new Histogram(FINISH_LATENCY_BUCKETS) }));
    if (commit) {
      t.commits++;
      t.finish.observe(seconds);
    } else t.rollbacks++;
  }

  /** Forgets a deleted group's dead-letter counts. */
  onGroupDeleted(group: string): void {
    this.sentToDlq.delete(group);
  }
}
