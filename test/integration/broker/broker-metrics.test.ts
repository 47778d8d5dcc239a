/**
 * The broker's Prometheus endpoint over real HTTP during a small drain: the exposition text parses
 * strictly (HELP and TYPE before each family's samples, well-formed labels and values, no series twice),
 * RocketMQ 5's names and labels carry the counts of what was sent and consumed, the histograms of request
 * latency and message size, the dead-letter count and the consumer latencies follow what was done, the server closes with the
 * broker, and a port that cannot be bound is a start error naming it.
 */
import { Producer } from '../../../src/client/producer/producer.js';
import { LocalTransactionState, PushConsumer, TransactionProducer } from '../../../src/index.js';
import { Broker } from '../../../src/broker/index.js';
import type { MessageExt } from '../../../src/common/message.js';
import { startBroker, tempStorePath, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { rmSync } from 'node:fs';

interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Parses Prometheus text format 0.0.4, throwing at the first line that breaks it. */
function parseExposition(text: string): Sample[] {
  expect(text.endsWith('\n')).toBe(true);
  const types = new Map<string, string>();
  const helped = new Set<string>();
  const seen = new Set<string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    let m = /^# HELP ([a-zA-Z_:][a-zA-Z0-9_:]*) (.*)$/.exec(line);
    if (m) {
      expect(helped.has(m[1]!)).toBe(false);
      helped.add(m[1]!);
      continue;
    }
    m = /^# TYPE ([a-zA-Z_:][a-zA-Z0-9_:]*) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (m) {
      expect(helped.has(m[1]!)).toBe(true);
      expect(types.has(m[1]!)).toBe(false);
      types.set(m[1]!, m[2]!);
      continue;
    }
    m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.eE+-]+|NaN|[+-]Inf)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${JSON.stringify(line)}`);
    const [, name, rawLabels = '', value] = m as unknown as [string, string, string | undefined, string];
    const family = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
    const histogramPart = family !== undefined && types.get(family) === 'histogram';
    if (!types.has(name) && !histogramPart) throw new Error(`sample before its TYPE: ${line}`);
    if (types.get(name) === 'histogram') throw new Error(`a histogram sample without a suffix: ${line}`);
    const labels: Record<string, string> = {};
    const labelRe = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\["\\n])*)"(,|$)/y;
    let at = 0;
    while (at < rawLabels.length) {
      labelRe.lastIndex = at;
      const l = labelRe.exec(rawLabels);
      if (!l) throw new Error(`bad labels: ${rawLabels}`);
      expect(labels[l[1]!]).toBeUndefined();
      labels[l[1]!] = l[2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      at = labelRe.lastIndex;
    }
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`series twice: ${line}`);
    seen.add(key);
    samples.push({ name, labels, value: Number(value) });
  }
  return samples;
}

const find = (samples: Sample[], name: string, labels: Record<string, string> = {}): Sample[] =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

describe('broker metrics endpoint', () => {
  let fx: BrokerFixture;
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0, metricsPort: 0, brokerName: 'broker-m', clusterName: 'ClusterM' });
  });
  afterAll(async () => {
    await fx.close();
  });

  async function scrape(): Promise<Sample[]> {
    const res = await fetch(`${fx.broker.metricsAddress}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    return parseExposition(await res.text());
  }

  it('binds 127.0.0.1 and answers only /metrics', async () => {
    expect(fx.broker.metricsAddress).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect((await fetch(`${fx.broker.metricsAddress}/other`)).status).toBe(404);
    expect((await fetch(`${fx.broker.metricsAddress}/metrics`, { method: 'POST' })).status).toBe(405);
  });

  it('counts a drain under RocketMQ 5 names and labels, scraped while it runs', async () => {
    const topic = `MetricsT${Date.now()}`;
    const group = `metricsg${Date.now()}`;
    const n = 40;
    const producer = new Producer({ namesrvAddr: fx.broker.remotingAddress ?? '', producerGroup: 'metricsp' });
    await producer.start();
    let bytes = 0;
    for (let i = 0; i < n; i++) {
      const body = Buffer.from(`body-${i}`);
      bytes += body.length;
      await producer.send({ topic, body });
    }
    const node = { cluster: 'ClusterM', node_type: 'broker', node_id: 'broker-m' };
    const before = await scrape();
    expect(find(before, 'rocketmq_messages_in_total', { ...node, topic, is_system: 'false' })[0]?.value).toBe(n);
    expect(find(before, 'rocketmq_throughput_in_total', { ...node, topic })[0]?.value).toBeGreaterThanOrEqual(bytes);
    // The producer is registered by its heartbeat, which may land after its first sends.
    const producers = (samples: Sample[]): number =>
      find(samples, 'rocketmq_producer_connections', node).reduce((a, s) => a + s.value, 0);
    await waitFor(async () => producers(await scrape()) > 0, 20_000);

    const got: MessageExt[] = [];
    const consumer = new PushConsumer({
      endpoints: fx.broker.address,
      consumerGroup: group,
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      persistConsumerOffsetIntervalMs: 50,
      pullBatchSize: 4,
    });
    consumer.subscribe(topic, '*');
    consumer.registerMessageListener((msgs: MessageExt[]) => void got.push(...msgs));
    await consumer.start();
    try {
      // Mid-drain scrapes parse and never count more than was sent.
      while (got.length < n) {
        const mid = await scrape();
        const out = find(mid, 'rocketmq_messages_out_total', { topic, consumer_group: group })[0]?.value ?? 0;
        expect(out).toBeLessThanOrEqual(n);
        await new Promise((r) => setImmediate(r));
      }
      let after: Sample[] = [];
      await waitFor(async () => {
        after = await scrape();
        return find(after, 'rocketmq_consumer_lag_messages', { topic, consumer_group: group })[0]?.value === 0;
      }, 20_000);
      const labels = { ...node, topic, consumer_group: group };
      expect(find(after, 'rocketmq_messages_out_total', { ...labels, is_retry: 'false' })[0]?.value).toBe(n);
      expect(find(after, 'rocketmq_throughput_out_total', labels)[0]?.value).toBeGreaterThanOrEqual(bytes);
      expect(find(after, 'rocketmq_consumer_inflight_messages', labels)[0]?.value).toBe(0);
      expect(find(after, 'rocketmq_consumer_ready_messages', labels)[0]?.value).toBe(0);
      // Caught up: nothing waits to be pulled or committed.
      expect(find(after, 'rocketmq_consumer_queueing_latency', labels)[0]?.value).toBe(0);
      expect(find(after, 'rocketmq_consumer_lag_latency', labels)[0]?.value).toBe(0);
      expect(
        find(after, 'rocketmq_consumer_connections', { ...node, consumer_group: group, consume_mode: 'push' })[0]
          ?.value,
      ).toBe(1);
      expect(find(after, 'rocketmq_topic_number', node)[0]?.value).toBeGreaterThanOrEqual(1);
      expect(find(after, 'rocketmq_broker_permission', node)[0]?.value).toBe(6);
      expect(find(after, 'rocketmq_consumer_group_number', node)[0]?.value).toBeGreaterThanOrEqual(1);
      expect(find(after, 'rocketmq_storage_size', node)[0]?.value).toBeGreaterThan(0);
      expect(find(after, 'rocketmq_processor_watermark', { ...node, processor: 'pull_message_hold' })).toHaveLength(1);
    } finally {
      await consumer.shutdown();
      await producer.shutdown();
    }
  }, 60_000);

  /** The `_bucket` lines of one histogram series: cumulative, ending with `+Inf` equal to `_count`. */
  function histogram(samples: Sample[], name: string, labels: Record<string, string>) {
    const buckets = find(samples, `${name}_bucket`, labels);
    const count = find(samples, `${name}_count`, labels);
    const sum = find(samples, `${name}_sum`, labels);
    expect(count).toHaveLength(1);
    expect(sum).toHaveLength(1);
    const les = buckets.map((b) => b.labels.le);
    expect(les[les.length - 1]).toBe('+Inf');
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]!.value).toBeGreaterThanOrEqual(buckets[i - 1]!.value);
    expect(buckets[buckets.length - 1]!.value).toBe(count[0]!.value);
    return { buckets, count: count[0]!.value, sum: sum[0]!.value };
  }

  it('histograms of request latency and message size, the dead-letter count, the consumer latencies', async () => {
    const topic = `MetricsH${Date.now()}`;
    const group = `metricsh${Date.now()}`;
    const node = { cluster: 'ClusterM', node_type: 'broker', node_id: 'broker-m' };
    // Over HTTP (the fixture's client) and over the remoting port (a Producer reaching it as its name server).
    for (let i = 0; i < 3; i++) expect((await fx.client.send(topic, Buffer.alloc(100))).code).toBe(0);
    expect((await fx.client.send(topic, Buffer.alloc(5000), { properties: { DELAY: '1' } })).code).toBe(0);
    expect((await fx.client.send(topic, 'f', { properties: { __SHARDINGKEY: 'k' } })).code).toBe(0);
    expect((await fx.client.pull({ group, topic, maxMsgNums: 1 })).code).toBe(0);
    const producer = new Producer({ namesrvAddr: fx.broker.remotingAddress ?? '', producerGroup: 'metricsh' });
    await producer.start();
    try {
      await producer.send({ topic, body: Buffer.from('over remoting') });
    } finally {
      await producer.shutdown();
    }
    // A retry past its maximum goes to the group's dead-letter queue.
    const retry = `%RETRY%${group}`;
    expect((await fx.client.send(retry, 'dead', { reconsumeTimes: 3, maxReconsumeTimes: 2 })).code).toBe(0);

    const s = await scrape();
    const sendHttp = histogram(s, 'rocketmq_rpc_latency', {
      ...node,
      protocol_type: 'http',
      request_code: 'send_message',
      response_code: 'success',
    });
    expect(sendHttp.count).toBeGreaterThanOrEqual(6);
    expect(sendHttp.sum).toBeGreaterThanOrEqual(0);
    expect(sendHttp.buckets.map((b) => b.labels.le)).toEqual([
      '1',
      '3',
      '5',
      '7',
      '10',
      '100',
      '1000',
      '2000',
      '3000',
      '+Inf',
    ]);
    const pulls = find(s, 'rocketmq_rpc_latency_count', {
      ...node,
      protocol_type: 'http',
      request_code: 'pull_message',
    });
    expect(pulls.reduce((n, p) => n + p.value, 0)).toBeGreaterThanOrEqual(1);
    // The producer's route query and its send came over the remoting listener.
    const remoting = find(s, 'rocketmq_rpc_latency_count', { ...node, protocol_type: 'remoting' });
    expect(remoting.map((r) => r.labels.request_code)).toEqual(
      expect.arrayContaining(['get_routeinfo_by_topic', 'send_message']),
    );

    const normal = histogram(s, 'rocketmq_message_size', {
      ...node,
      topic,
      message_type: 'normal',
      is_system: 'false',
    });
    expect(normal.count).toBe(4);
    // A stored record is its body plus the record's header and properties.
    expect(normal.sum).toBeGreaterThan(300 + 'over remoting'.length);
    expect(normal.buckets.find((b) => b.labels.le === '1024')?.value).toBe(4);
    const delay = histogram(s, 'rocketmq_message_size', { ...node, topic, message_type: 'delay' });
    expect(delay.count).toBe(1);
    expect(delay.buckets.find((b) => b.labels.le === '4096')?.value).toBe(0);
    expect(delay.buckets.find((b) => b.labels.le === '524288')?.value).toBe(1);
    expect(histogram(s, 'rocketmq_message_size', { ...node, topic, message_type: 'fifo' }).count).toBe(1);
    // Retry and dead-letter topics are not sized, as in RocketMQ.
    expect(find(s, 'rocketmq_message_size_count', { topic: retry })).toHaveLength(0);
    expect(find(s, 'rocketmq_message_size_count', { topic: `%DLQ%${group}` })).toHaveLength(0);

    // A group that committed offset 1 of queue 0: its oldest waiting message ages until it is consumed.
    const committed = await fx.client.call('UPDATE_CONSUMER_OFFSET', {
      consumerGroup: group,
      topic,
      queueId: 0,
      commitOffset: 1,
    });
    expect(committed.code).toBe(0);
    const ages = async (): Promise<number[]> => {
      const now = await scrape();
      const labels = { ...node, topic, consumer_group: group, is_retry: 'false' };
      return ['rocketmq_consumer_queueing_latency', 'rocketmq_consumer_lag_latency'].map(
        (name) => find(now, name, labels)[0]?.value ?? -1,
      );
    };
    await waitFor(async () => (await ages()).every((a) => a >= 20), 20_000);
    for (const a of await ages()) expect(a).toBeLessThan(600_000);

    expect(
      find(s, 'rocketmq_send_to_dlq_messages_total', {
        ...node,
        topic: retry,
        consumer_group: group,
        is_system: 'true',
      })[0]?.value,
    ).toBe(1);
  }, 60_000);

  it('commits and rollbacks of transactions, and the time to the commit', async () => {
    const topic = `MetricsTx${Date.now()}`;
    const node = { cluster: 'ClusterM', node_type: 'broker', node_id: 'broker-m' };
    let decision: LocalTransactionState = LocalTransactionState.COMMIT_MESSAGE;
    const p = new TransactionProducer({
      producerGroup: 'metricstx',
      endpoints: fx.broker.address,
      transactionListener: {
        executeLocalTransaction: () => decision,
        checkLocalTransaction: () => LocalTransactionState.UNKNOW,
      },
    });
    await p.start();
    try {
      await p.sendMessageInTransaction({ topic, body: Buffer.from('commit me') });
      await p.sendMessageInTransaction({ topic, body: Buffer.from('and me') });
      decision = LocalTransactionState.ROLLBACK_MESSAGE;
      await p.sendMessageInTransaction({ topic, body: Buffer.from('roll me back') });
    } finally {
      await p.shutdown();
    }
    let s: Sample[] = [];
    await waitFor(async () => {
      s = await scrape();
      return (
        find(s, 'rocketmq_commit_messages_total', { ...node, topic })[0]?.value === 2 &&
        find(s, 'rocketmq_rollback_messages_total', { ...node, topic })[0]?.value === 1
      );
    }, 20_000);
    const finish = histogram(s, 'rocketmq_finish_message_latency', { ...node, topic });
    expect(finish.count).toBe(2);
    expect(finish.buckets.find((b) => b.labels.le === '5')?.value).toBe(2);
    // Half messages are sized as transaction messages of the topic they were sent to.
    expect(histogram(s, 'rocketmq_message_size', { ...node, topic, message_type: 'transaction' }).count).toBe(3);
  }, 60_000);

  it('a metrics port that cannot be bound fails the start, naming it; the server closes with the broker', async () => {
    const storePath = tempStorePath();
    try {
      await expect(
        Broker.start({ port: 0, storePath, metricsPort: Number(new URL(fx.broker.metricsAddress ?? '').port) }),
      ).rejects.toThrow(/metrics port could not be opened on 127\.0\.0\.1:\d+/);
      const b = await Broker.start({ port: 0, storePath, metricsPort: 0 });
      const url = `${b.metricsAddress}/metrics`;
      expect((await fetch(url)).status).toBe(200);
      await b.shutdown();
      await expect(fetch(url)).rejects.toThrow();
    } finally {
      rmSync(storePath, { recursive: true, force: true });
    }
  }, 30_000);
});
