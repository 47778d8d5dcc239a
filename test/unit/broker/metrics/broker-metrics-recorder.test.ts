/**
 * The broker's recorded metrics: bucket boundaries as Prometheus's `le` reads them, RocketMQ's message
 * types and code names, the bound on request-code series, and the histogram exposition text.
 */
import {
  BrokerMetricsRecorder,
  Histogram,
  requestCodeLabel,
  responseCodeLabel,
  topicMessageType,
} from '../../../../src/broker/metrics/broker-metrics-recorder.js';
import { PrometheusText } from '../../../../src/broker/metrics/prometheus-text.js';

test('a value equal to a bound falls in that bound’s bucket (le), past the last in the overflow', () => {
  const h = new Histogram([1, 10]);
  for (const v of [0.5, 1, 1.01, 10, 11]) h.observe(v);
  expect([...h.counts]).toEqual([2, 2, 1]);
  expect(h.count).toBe(5);
  expect(h.sum).toBeCloseTo(23.51);
});

test('message types as RocketMQ’s BrokerMetricsManager.getMessageType tells them', () => {
  expect(topicMessageType({})).toBe('normal');
  expect(topicMessageType({ TRAN_MSG: 'true', __SHARDINGKEY: 'k' })).toBe('transaction');
  expect(topicMessageType({ __SHARDINGKEY: 'k', DELAY: '2' })).toBe('fifo');
  for (const p of ['DELAY', '__STARTDELIVERTIME', 'TIMER_DELIVER_MS', 'TIMER_DELAY_SEC', 'TIMER_DELAY_MS'])
    expect(topicMessageType({ [p]: '1' })).toBe('delay');
});

test('codes are named as RocketMQ’s RemotingHelper names them; unknown request codes share one series', () => {
  expect(requestCodeLabel(10)).toBe('send_message');
  expect(responseCodeLabel(0)).toBe('success');
  expect(responseCodeLabel(9999)).toBe('9999');
  const r = new BrokerMetricsRecorder();
  r.onRpc('remoting', 10, 0, 2);
  r.onRpc('http', 10, 0, 2);
  r.onRpc('remoting', 10, 1, 2);
  for (let code = 900_000; code < 900_100; code++) r.onRpc('remoting', code, 3, 1);
  expect(r.rpc.size).toBe(4);
  expect([...r.rpc.values()].find((s) => s.requestCode === -1)?.histogram.count).toBe(100);
});

test('sizes skip retry and dead-letter topics; a batch is one observation of its average', () => {
  const r = new BrokerMetricsRecorder();
  r.onStored('T', {}, 3000, 3);
  r.onStored('%RETRY%g', {}, 100);
  r.onStored('%DLQ%g', {}, 100);
  expect([...r.messageSize.keys()]).toEqual(['T']);
  expect(r.messageSize.get('T')?.get('normal')).toMatchObject({ count: 1, sum: 1000 });
  r.onSendToDlq('g', '%RETRY%g');
  r.onSendToDlq('g', '%RETRY%g');
  expect(r.sentToDlq.get('g')?.get('%RETRY%g')).toBe(2);
  r.onGroupDeleted('g');
  expect(r.sentToDlq.size).toBe(0);
});

test('a histogram is written as cumulative _bucket lines ending with +Inf, then _sum and _count', () => {
  const p = new PrometheusText();
  const h = new Histogram([1, 10]);
  for (const v of [0.5, 5, 50]) h.observe(v);
  p.histogram('x_latency', 'help')({ a: 'b' }, h);
  expect(p.toString()).toBe(
    [
      '# HELP x_latency help',
      '# TYPE x_latency histogram',
      'x_latency_bucket{a="b",le="1"} 1',
      'x_latency_bucket{a="b",le="10"} 2',
      'x_latency_bucket{a="b",le="+Inf"} 3',
      'x_latency_sum{a="b"} 55.5',
      'x_latency_count{a="b"} 3',
      '',
    ].join('\n'),
  );
});

test('transactions: commits and rollbacks are counted per topic, the finish time only for commits', () => {
  const r = new BrokerMetricsRecorder();
  r.onTransactionEnd('T', true, 3);
  r.onTransactionEnd('T', true, 90);
  r.onTransactionEnd('T', false, 7);
  const t = r.transactions.get('T');
  expect(t).toMatchObject({ commits: 2, rollbacks: 1 });
  expect(t?.finish.count).toBe(2);
  expect([...(t?.finish.counts ?? [])]).toEqual([1, 0, 1, 0, 0, 0, 0]);
});
