/**
 * The broker's metrics under RocketMQ 5's names and labels (BrokerMetricsManager, BrokerMetricsConstant,
 * DefaultStoreMetricsConstant), read at scrape time from what the broker already counts: the stats
 * table (BrokerStatsManager), the topic and subscription-group tables, the committed and pulled consumer
 * offsets against the store's max offsets, the consumer and producer tables, and the pull hold service;
 * and the histograms and counters the BrokerMetricsRecorder keeps as requests are answered.
 */
import type { MessageStore } from '../../store/index.js';
import { StatsName, type BrokerStatsManager } from '../broker-stats-manager.js';
import type { ClientChannelTable } from '../client-channel-table.js';
import type { ConsumerManager } from '../consumer-manager.js';
import type { ConsumerOffsetManager } from '../consumer-offset-manager.js';
import type { PullRequestHoldService } from '../pull-request-hold-service.js';
import type { SubscriptionGroupManager } from '../subscription-group-manager.js';
import type { TopicConfigManager } from '../topic-config-manager.js';
import { requestCodeLabel, responseCodeLabel } from './broker-metrics-recorder.js';
import { PrometheusText, type Labels } from './prometheus-text.js';

export interface BrokerMetricsSources {
  clusterName: string;
  brokerName: string;
  brokerStats: BrokerStatsManager;
  store: MessageStore;
  topicConfigManager: TopicConfigManager;
  subscriptionGroupManager: SubscriptionGroupManager;
  consumerOffsetManager: ConsumerOffsetManager;
  consumerManager: ConsumerManager;
  clientChannels: ClientChannelTable;
  pullRequestHoldService: PullRequestHoldService;
  /** The broker's options; `brokerPermission` is read at each scrape, as an operator may change it. */
  options: { readonly brokerPermission: number };
  /** Open connections of the HTTP and the remoting listeners. */
  connections(): { http: number; remoting: number };
}

/** RocketMQ marks system topics and groups with these (TopicValidator, MixAll). */
const isSystemTopic = (t: string): boolean =>
  t.startsWith('rmq_sys_') ||
  t.startsWith('%RETRY%') ||
  t.startsWith('%DLQ%') ||
  t === 'TBW102' ||
  t === 'SCHEDULE_TOPIC_XXXX' ||
  t === 'RMQ_SYS_TRANS_HALF_TOPIC' ||
  t === 'RMQ_SYS_TRANS_OP_HALF_TOPIC' ||
  t === 'RMQ_SYS_TRACE_TOPIC' ||
  t === 'OFFSET_MOVED_EVENT' ||
  t === 'SELF_TEST_TOPIC';

/** RocketMQ: MixAll.isSysConsumerGroup. */
const isSystemGroup = (g: string): boolean => g.startsWith('CID_RMQ_SYS_');

/** The exposition text of one scrape. */
export function renderBrokerMetrics(src: BrokerMetricsSources): string {
  const p = new PrometheusText();
  const node: Labels = { cluster: src.clusterName, node_type: 'broker', node_id: src.brokerName };

  const perKey = (name: string): Array<[string, number]> =>
    src.brokerStats.keysOf(name).map((k) => [k, src.brokerStats.getStatsItem(name, k)?.value ?? 0]);
  const splitKey = (key: string): [string, string] => {
    const at = key.lastIndexOf('@');
    return [key.slice(0, at), key.slice(at + 1)];
  };

  const inMsgs = p.family('rocketmq_messages_in_total', 'counter', 'Messages stored by sends, per topic');
  for (const [topic, v] of perKey(StatsName.TOPIC_PUT_NUMS))
    inMsgs({ ...node, topic, is_system: String(isSystemTopic(topic)) }, v);
  const inBytes = p.family('rocketmq_throughput_in_total', 'counter', 'Body bytes stored by sends, per topic');
  for (const [topic, v] of perKey(StatsName.TOPIC_PUT_SIZE))
    inBytes({ ...node, topic, is_system: String(isSystemTopic(topic)) }, v);
  const outMsgs = p.family(
    'rocketmq_messages_out_total',
    'counter',
    'Messages returned by pulls, per topic and consumer group',
  );
  for (const [key, v] of perKey(StatsName.GROUP_GET_NUMS)) {
    const [topic, group] = splitKey(key);
    outMsgs(
      {
        ...node,
        topic,
        consumer_group: group,
        is_retry: String(topic.startsWith('%RETRY%')),
        is_system: String(isSystemTopic(topic)),
      },
      v,
    );
  }
  const outBytes = p.family(
    'rocketmq_throughput_out_total',
    'counter',
    'Body bytes returned by pulls, per topic and consumer group',
  );
  for (const [key, v] of perKey(StatsName.GROUP_GET_SIZE)) {
    const [topic, group] = splitKey(key);
    outBytes(
      {
        ...node,
        topic,
        consumer_group: group,
        is_retry: String(topic.startsWith('%RETRY%')),
        is_system: String(isSystemTopic(topic)),
      },
      v,
    );
  }

  p.family(
    'rocketmq_broker_permission',
    'gauge',
    'The broker permission (PermName bits: 4 read, 2 write)',
  )(node, src.options.brokerPermission);
  p.family('rocketmq_topic_number', 'gauge', 'Topics on this broker')(node, src.topicConfigManager.allTopics().length);
  p.family(
    'rocketmq_consumer_group_number',
    'gauge',
    'Subscription groups on this broker',
  )(node, src.subscriptionGroupManager.allSubscriptionGroups().length);

  const lag = p.family(
    'rocketmq_consumer_lag_messages',
    'gauge',
    'Messages not committed yet: max offset minus committed offset, per topic and group',
  );
  const inflight = p.family(
    'rocketmq_consumer_inflight_messages',
    'gauge',
    'Messages pulled but not committed yet, per topic and group',
  );
  const ready = p.family(
    'rocketmq_consumer_ready_messages',
    'gauge',
    'Messages not pulled yet: max offset minus pulled offset, per topic and group',
  );
  for (const group of groupsWithOffsets(src)) {
    for (const [topic, queues] of src.consumerOffsetManager.offsetsOfGroup(group)) {
      let behind = 0;
      let pulledNotCommitted = 0;
      let notPulled = 0;
      for (const [queueId, committed] of queues) {
        const max = src.store.getMaxOffsetInQueue(topic, queueId);
        const pulled = Math.max(committed, src.consumerOffsetManager.queryPullOffset(group, topic, queueId));
        behind += Math.max(0, max - committed);
        pulledNotCommitted += Math.max(0, Math.min(pulled, max) - committed);
        notPulled += Math.max(0, max - pulled);
      }
      const labels = { ...node, topic, consumer_group: group, is_retry: String(topic.startsWith('%RETRY%')) };
      lag(labels, behind);
      inflight(labels, pulledNotCommitted);
      ready(labels, notPulled);
    }
  }

  const queueing = p.family(
    'rocketmq_consumer_queueing_latency',
    'gauge',
    'Age of the oldest message not pulled yet, milliseconds, per topic and group',
  );
  const lagLatency = p.family(
    'rocketmq_consumer_lag_latency',
    'gauge',
    'Age of the oldest message not committed yet, milliseconds, per topic and group',
  );
  for (const [group, byTopic] of src.brokerStats.metrics.consumerLatencies)
    for (const [topic, l] of byTopic) {
      const labels = { ...node, topic, consumer_group: group, is_retry: String(topic.startsWith('%RETRY%')) };
      queueing(labels, l.queueingMs);
      lagLatency(labels, l.lagMs);
    }

  const producers = p.family(
    'rocketmq_producer_connections',
    'gauge',
    'Producer clients connected, per language and version',
  );
  const byAttr = new Map<string, { language: string; version: number; n: number }>();
  for (const group of src.consumerManager.producerManager.getGroups()) {
    for (const clientId of src.consumerManager.producerManager.getClientIds(group)) {
      const { language, version } = src.clientChannels.describe(clientId);
      const k = `${language}/${version}`;
      const e = byAttr.get(k) ?? { language, version, n: 0 };
      e.n++;
      byAttr.set(k, e);
    }
  }
  for (const e of byAttr.values()) producers({ ...node, language: e.language, version: e.version }, e.n);
  const consumers = p.family(
    'rocketmq_consumer_connections',
    'gauge',
    'Consumer clients connected, per group, language, version and consume mode',
  );
  for (const group of src.consumerManager.getGroups()) {
    const info = src.consumerManager.getConsumerGroupInfo(group);
    if (!info) continue;
    const counts = new Map<string, { language: string; version: number; n: number }>();
    for (const clientId of info.getAllClientIds()) {
      const { language, version } = src.clientChannels.describe(clientId);
      const k = `${language}/${version}`;
      const e = counts.get(k) ?? { language, version, n: 0 };
      e.n++;
      counts.set(k, e);
    }
    const mode = info.consumeType === 'CONSUME_ACTIVELY' || info.consumeType === 'CONSUME_POP' ? 'pull' : 'push';
    for (const e of counts.values())
      consumers({ ...node, consumer_group: group, language: e.language, version: e.version, consume_mode: mode }, e.n);
  }

  p.family(
    'rocketmq_storage_size',
    'gauge',
    'Bytes of the commit log held by the store',
  )(
    { ...node, storage_type: 'local' },
    Math.max(0, src.store.getCommitLogMaxOffset() - Math.max(0, src.store.getCommitLogMinOffset())),
  );
  p.family(
    'rocketmq_processor_watermark',
    'gauge',
    'Requests waiting in a processor: pulls held for new messages',
  )({ ...node, processor: 'pull_message_hold' }, src.pullRequestHoldService.size);
  const m = src.brokerStats.metrics;
  const rpc = p.histogram('rocketmq_rpc_latency', 'Time from reading a request to its answer, milliseconds');
  for (const r of m.rpc.values())
    rpc(
      {
        ...node,
        protocol_type: r.protocol,
        request_code: r.requestCode < 0 ? 'unknown' : requestCodeLabel(r.requestCode),
        response_code: responseCodeLabel(r.responseCode),
      },
      r.histogram,
    );
  const size = p.histogram('rocketmq_message_size', 'Stored size of messages sent, bytes, per topic and message type');
  for (const [topic, byType] of m.messageSize)
    for (const [type, h] of byType)
      size({ ...node, topic, message_type: type, is_system: String(isSystemTopic(topic)) }, h);
  const dlq = p.family(
    'rocketmq_send_to_dlq_messages_total',
    'counter',
    'Messages sent to a dead-letter queue, per consumer group and the topic they came from',
  );
  for (const [group, byTopic] of m.sentToDlq)
    for (const [topic, n] of byTopic)
      dlq(
        { ...node, topic, consumer_group: group, is_system: String(isSystemTopic(topic) || isSystemGroup(group)) },
        n,
      );

  const commits = p.family('rocketmq_commit_messages_total', 'counter', 'Half messages committed, per topic');
  const rollbacks = p.family('rocketmq_rollback_messages_total', 'counter', 'Half messages rolled back, per topic');
  const finish = p.histogram(
    'rocketmq_finish_message_latency',
    'Time from sending a half message to its commit, seconds, per topic',
  );
  for (const [topic, t] of m.transactions) {
    commits({ ...node, topic }, t.commits);
    rollbacks({ ...node, topic }, t.rollbacks);
    finish({ ...node, topic }, t.finish);
  }

  const conns = src.connections();
  const open = p.family('rocketmq_broker_connections', 'gauge', 'Open client connections, per protocol');
  open({ ...node, protocol_type: 'http' }, conns.http);
  open({ ...node, protocol_type: 'remoting' }, conns.remoting);
  return p.toString();
}

/** What the consumer latencies are computed from. */
export type ConsumerLatencySources = Pick<
  BrokerMetricsSources,
  'store' | 'consumerOffsetManager' | 'subscriptionGroupManager' | 'consumerManager' | 'brokerStats'
>;

/**
 * Computes the consumer latency gauges (RocketMQ: ConsumerLagCalculator) before a scrape: per group and
 * topic, the age of the oldest message not pulled yet (queueing) and of the oldest not committed yet
 * (lag), from the store time of the message at the pulled and at the committed offset of each queue;
 * 0 when the group is caught up. Reads one record per queue and kind, so it runs per scrape, not per message.
 */
export async function refreshConsumerLatencies(src: ConsumerLatencySources, now = Date.now()): Promise<void> {
  const out = new Map<string, Map<string, { queueingMs: number; lagMs: number }>>();
  const age = async (topic: string, queueId: number, offset: number, max: number): Promise<number> => {
    if (offset >= max) return 0;
    const stored = await src.store.getMessageStoreTimeStamp(topic, queueId, Math.max(0, offset));
    return stored > 0 ? Math.max(0, now - stored) : 0;
  };
  for (const group of groupsWithOffsets(src)) {
    const byTopic = new Map<string, { queueingMs: number; lagMs: number }>();
    for (const [topic, queues] of src.consumerOffsetManager.offsetsOfGroup(group)) {
      let queueingMs = 0;
      let lagMs = 0;
      for (const [queueId, committed] of queues) {
        const max = src.store.getMaxOffsetInQueue(topic, queueId);
        const pulled = Math.max(committed, src.consumerOffsetManager.queryPullOffset(group, topic, queueId));
        queueingMs = Math.max(queueingMs, await age(topic, queueId, pulled, max));
        lagMs = Math.max(lagMs, await age(topic, queueId, committed, max));
      }
      byTopic.set(topic, { queueingMs, lagMs });
    }
    out.set(group, byTopic);
  }
  src.brokerStats.metrics.consumerLatencies = out;
}

/** Every group with committed offsets. */
function groupsWithOffsets(
  src: Pick<BrokerMetricsSources, 'subscriptionGroupManager' | 'consumerManager' | 'consumerOffsetManager'>,
): string[] {
  const groups = new Set<string>();
  for (const g of src.subscriptionGroupManager.allSubscriptionGroups()) groups.add(g.groupName);
  for (const g of src.consumerManager.getGroups()) groups.add(g);
  return [...groups].filter((g) => src.consumerOffsetManager.offsetsOfGroup(g).size > 0);
}
