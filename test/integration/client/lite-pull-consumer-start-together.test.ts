/**
 * LitePullConsumers of a new group (subscribe mode) starting together read no message twice: the
 * start-up settle, over HTTP and over TCP remoting, in one process and in two; a lone consumer still
 * gets its first message soon; assign mode does not settle.
 */
import { LitePullConsumer } from '../../../src/client/consumer/lite/lite-pull-consumer.js';
import type { LitePullConsumerOptions } from '../../../src/client/consumer/lite/lite-pull-consumer-options.js';
import type { ReadyEvent } from '../../../src/client/consumer/consumer-startup.js';
import { waitFor } from '../../support/broker-fixture.js';
import { twoProcessRound } from '../../support/start-together.mjs';
import { useBrokerAndProducer, topicWithBacklog, uniq } from './push-consumer-support.js';

const QUEUES = 16;
const BACKLOG = 400;
/**
 * The staggered two-process start: enough that the first process is still busy when the second joins, on
 * a loaded machine too (4,000 were drained by the first process alone once, the second joining late).
 */
const STAGGERED_BACKLOG = 12_000;

const env = useBrokerAndProducer(8, { remotingPort: 0 });

type Transport = 'http' | 'tcp';
const addressing = (t: Transport): Partial<LitePullConsumerOptions> =>
  t === 'http' ? { endpoints: env.fx.broker.address } : { namesrvAddr: env.fx.broker.remotingAddress ?? '' };

/** A topic of QUEUES queues holding `backlog` messages. */
const backlogTopic = (backlog = BACKLOG): Promise<string> => topicWithBacklog(env, 'LiteTogether', QUEUES, backlog, 16);

/** Consumes with `for await`, counting deliveries per body; resolves when the consumer shuts down. */
function drain(c: LitePullConsumer, counts: Map<string, number>): Promise<void> {
  return (async () => {
    for await (const m of c) {
      const body = m.body?.toString() ?? '';
      counts.set(body, (counts.get(body) ?? 0) + 1);
    }
  })();
}

const duplicates = (counts: Map<string, number>): number => [...counts.values()].reduce((n, c) => n + c - 1, 0);

function member(t: Transport, group: string, topic: string, extra: Partial<LitePullConsumerOptions> = {}) {
  const c = new LitePullConsumer({
    ...addressing(t),
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    ...extra,
  });
  c.subscribe(topic, '*');
  return c;
}

describe.each<Transport>(['http', 'tcp'])('LitePullConsumers of a new group starting together (%s)', (t) => {
  it('4 members started with Promise.all read no message twice, each holding a share', async () => {
    const topic = await backlogTopic();
    const group = uniq('litetogether');
    const counts = new Map<string, number>();
    // A client of its own per member, as separate deployments have.
    const members = Array.from({ length: 4 }, (_, i) =>
      member(t, group, topic, { instanceName: `${group}_${i}`, pullBatchSize: 32 }),
    );
    const loops: Promise<void>[] = [];
    try {
      await Promise.all(
        members.map(async (c) => {
          await c.start();
          loops.push(drain(c, counts));
        }),
      );
      await Promise.all(members.map((c) => c.ready));
      await waitFor(() => counts.size === BACKLOG, 60_000);
      expect(members.map((c) => c.assignment().filter((q) => q.topic === topic).length)).toEqual([4, 4, 4, 4]);
    } finally {
      await Promise.all(members.map((c) => c.shutdown()));
      await Promise.all(loops);
    }
    expect(duplicates(counts)).toBe(0);
  }, 90_000);

  it('4 members in 2 processes started 100 ms apart read no message twice', async () => {
    const topic = await backlogTopic(STAGGERED_BACKLOG);
    const options = {
      ...addressing(t),
      consumerGroup: uniq('litepair'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
      pullBatchSize: 32,
    };
    // Without the settle the first process takes every queue and consumes for 100 ms before the second
    // joins, which then reads offsets the first has not committed yet: hundreds of duplicates.
    const r = await twoProcessRound(options, topic, STAGGERED_BACKLOG, 'lite', 100);
    process.stdout.write(`lite ${t}, 2 processes 100 ms apart: ${JSON.stringify(r)}\n`);
    expect(r.consumed).toBe(STAGGERED_BACKLOG);
    expect(r.duplicates).toBe(0);
    expect(r.perProcess.every((n) => n > 0)).toBe(true);
  }, 90_000);

  it('a lone member is settled at once, having found itself alone, and gets its first message soon', async () => {
    const topic = await backlogTopic();
    const counts = new Map<string, number>();
    const c = member(t, uniq('litealone'), topic);
    const readyEvents: ReadyEvent[] = [];
    c.events.on('ready', (e) => readyEvents.push(e));
    let loop: Promise<void> | undefined;
    let first = 0;
    try {
      await c.start();
      const started = Date.now();
      loop = drain(c, counts);
      await waitFor(() => counts.size > 0, 10_000);
      first = Date.now() - started;
      await c.ready;
      expect(readyEvents).toHaveLength(1);
      expect(readyEvents[0]?.membershipChanges).toBe(0);
      // Alone at its first look: no quiet period before the first division of the queues.
      expect(readyEvents[0]?.settleMs).toBeLessThan(300);
      expect(readyEvents[0]?.assigned.filter((q) => q.topic === topic)).toHaveLength(QUEUES);
      await waitFor(() => counts.size === BACKLOG, 30_000);
    } finally {
      await c.shutdown();
      await loop;
    }
    expect(duplicates(counts)).toBe(0);
    expect(first).toBeLessThan(5000);
  }, 60_000);
});

it('assign mode and startSettleMs 0 do not settle', async () => {
  const topic = await backlogTopic();
  const off = member('tcp', uniq('litenosettle'), topic, { startSettleMs: 0 });
  const assigned = new LitePullConsumer({ ...addressing('http'), consumerGroup: uniq('liteassign') });
  const events: ReadyEvent[] = [];
  off.events.on('ready', (e) => events.push(e));
  assigned.events.on('ready', (e) => events.push(e));
  try {
    await off.start();
    await assigned.assign([{ topic, brokerName: env.fx.broker.options.brokerName, queueId: 0 }]);
    await assigned.start();
    await Promise.all([off.ready, assigned.ready]);
    expect(events.map((e) => e.settleMs)).toEqual([0, 0]);
  } finally {
    await Promise.all([off.shutdown(), assigned.shutdown()]);
  }
});

it('startSettleMs and startSettleMaxMs are validated', () => {
  expect(
    () => new LitePullConsumer({ endpoints: 'http://127.0.0.1:1', consumerGroup: 'g', startSettleMs: -1 }),
  ).toThrow(/startSettleMs/);
  expect(
    () => new LitePullConsumer({ endpoints: 'http://127.0.0.1:1', consumerGroup: 'g', startSettleMaxMs: 1.5 }),
  ).toThrow(/startSettleMaxMs/);
});
