/**
 * Members of a new group starting together read no message twice (the start-up settle), over HTTP and
 * over TCP remoting; a lone consumer still gets its first message soon; `ready` tells when the first
 * pulls are held. The 20-round version is `npm run soak -- start-together`.
 */
import type { MessageExt } from '../../../src/common/message.js';
import { LitePullConsumer } from '../../../src/client/consumer/lite/lite-pull-consumer.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import type { PushConsumerOptions } from '../../../src/client/consumer/push/push-consumer-options.js';
import type { ReadyEvent } from '../../../src/client/consumer/push/push-consumer-events.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { twoProcessRound } from '../../support/start-together.mjs';
import { useBrokerAndProducer, startProducer, topicWithBacklog, uniq } from './push-consumer-support.js';

const QUEUES = 16;
const BACKLOG = 400;
/** Rounds per transport here; the soak runs 20. */
const ROUNDS = Number(process.env.START_TOGETHER_ROUNDS ?? 2);

const env = useBrokerAndProducer(8, { remotingPort: 0 });

type Transport = 'http' | 'tcp';
const addressing = (t: Transport, on: BrokerFixture = env.fx): Partial<PushConsumerOptions> =>
  t === 'http' ? { endpoints: on.broker.address } : { namesrvAddr: on.broker.remotingAddress ?? '' };

/** A topic of QUEUES queues holding BACKLOG messages. */
const backlogTopic = (): Promise<string> => topicWithBacklog(env, 'Together', QUEUES, BACKLOG);

/** Counts deliveries per body. */
class Tally {
  readonly counts = new Map<string, number>();
  add(body: string): void {
    this.counts.set(body, (this.counts.get(body) ?? 0) + 1);
  }
  get duplicates(): number {
    let n = 0;
    for (const c of this.counts.values()) n += c - 1;
    return n;
  }
}

function member(
  t: Transport,
  group: string,
  topic: string,
  tally: Tally,
  on: BrokerFixture = env.fx,
  { listenerMs = 1, pullBatchSize }: { listenerMs?: number; pullBatchSize?: number } = {},
): PushConsumer {
  const c = new PushConsumer({
    ...addressing(t, on),
    ...(pullBatchSize === undefined ? {} : { pullBatchSize }),
    consumerGroup: group,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
  });
  c.subscribe(topic, '*');
  c.registerMessageListener(async (msgs: MessageExt[]) => {
    await new Promise((r) => setTimeout(r, listenerMs));
    for (const m of msgs) tally.add(m.body?.toString() ?? '');
  });
  return c;
}

describe.each<Transport>(['http', 'tcp'])('members of a new group starting together (%s)', (t) => {
  it(`4 members started with Promise.all read no message twice (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const topic = await backlogTopic();
      const group = uniq('together');
      const tally = new Tally();
      const members = Array.from({ length: 4 }, () => member(t, group, topic, tally));
      try {
        await Promise.all(members.map((c) => c.start()));
        await Promise.all(members.map((c) => c.ready));
        await waitFor(() => tally.counts.size === BACKLOG, 60_000);
        // Every member holds a share: the queues were divided, not taken by the first to start.
        expect(members.map((c) => c.assignedQueues().filter((q) => q.topic === topic).length)).toEqual([4, 4, 4, 4]);
      } finally {
        await Promise.all(members.map((c) => c.shutdown()));
      }
      expect({ round, duplicates: tally.duplicates }).toEqual({ round, duplicates: 0 });
    }
  }, 120_000);

  it('a member joining a group that is consuming: the running member hands its queues over and nothing comes twice', async () => {
    const topic = await backlogTopic();
    const group = uniq('handover');
    const byFirst = new Tally();
    const bySecond = new Tally();
    // Small pulls and a slow listener: the first member has messages of many queues in its listener
    // (those it gives up included) when the second joins.
    const slow = { listenerMs: 50, pullBatchSize: 2 };
    const first = member(t, group, topic, byFirst, env.fx, slow);
    const second = member(t, group, topic, bySecond, env.fx, slow);
    try {
      await first.start();
      await waitFor(() => byFirst.counts.size >= 40, 30_000);
      await second.start();
      await second.ready;
      await waitFor(() => byFirst.counts.size + bySecond.counts.size >= BACKLOG, 60_000);
      expect(second.assignedQueues().filter((q) => q.topic === topic)).toHaveLength(QUEUES / 2);
    } finally {
      await Promise.all([first.shutdown(), second.shutdown()]);
    }
    expect(bySecond.counts.size).toBeGreaterThan(0);
    const both = new Tally();
    for (const tally of [byFirst, bySecond])
      for (const [body, n] of tally.counts) for (let i = 0; i < n; i++) both.add(body);
    expect({ consumed: both.counts.size, duplicates: both.duplicates }).toEqual({ consumed: BACKLOG, duplicates: 0 });
  }, 120_000);

  it('a lone consumer is ready and gets its first message without waiting for a settle it does not need', async () => {
    const topic = await backlogTopic();
    const tally = new Tally();
    const c = member(t, uniq('alone'), topic, tally);
    const readyEvents: ReadyEvent[] = [];
    c.events.on('ready', (e) => readyEvents.push(e));
    let first = 0;
    const t0 = Date.now();
    try {
      await c.start();
      const started = Date.now();
      await waitFor(() => tally.counts.size > 0, 10_000);
      first = Date.now() - started;
      await c.ready;
      expect(readyEvents).toHaveLength(1);
      expect(readyEvents[0]?.membershipChanges).toBe(0);
      // Alone at its first look: no quiet period before the first division of the queues.
      expect(readyEvents[0]?.settleMs).toBeLessThan(300);
      expect(readyEvents[0]?.assigned.filter((q) => q.topic === topic)).toHaveLength(QUEUES);
      await waitFor(() => tally.counts.size === BACKLOG, 30_000);
      expect(tally.duplicates).toBe(0);
    } finally {
      await c.shutdown();
    }
    process.stdout.write(`lone ${t} consumer: first message ${first} ms after start() (${Date.now() - t0} ms total)\n`);
    expect(first).toBeLessThan(5000);
  }, 60_000);

  it('ready resolves once every first pull is held by the broker, and rejects when shutdown comes first', async () => {
    // A broker of its own, so that every pull it holds is this consumer's.
    const own = await startBroker({ remotingPort: 0 });
    const ownProducer = await startProducer(own.broker.address);
    const topic = uniq('ReadyEmpty');
    await own.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 8, writeQueueNums: 8, perm: 6 });
    const tally = new Tally();
    const c = member(t, uniq('ready'), topic, tally, own);
    try {
      await c.start();
      await c.ready;
      // Empty queues: each first pull is held (the retry topic's queue included). Over TCP the broker
      // has read every pull when ready resolves; over HTTP every pull has been written, and the broker
      // may still be reading the last ones.
      const mine = c.assignedQueues();
      expect(mine.filter((q) => q.topic === topic)).toHaveLength(8);
      const held = (): number => own.broker.pullRequestHoldService.size;
      if (t === 'tcp') expect(held()).toBe(mine.length);
      else await waitFor(() => held() === mine.length, 1000);
      // A message sent now is delivered at once: nothing waits for a timer.
      const sentAt = Date.now();
      await ownProducer.send({ topic, body: Buffer.from('after-ready') });
      await waitFor(() => tally.counts.has('after-ready'), 10_000);
      process.stdout.write(`${t}: delivered ${Date.now() - sentAt} ms after the send\n`);
    } finally {
      await c.shutdown();
      await ownProducer.shutdown();
      await own.close();
    }
    const early = member(t, uniq('early'), topic, tally);
    const starting = early.start();
    const down = early.shutdown();
    await expect(early.ready).rejects.toThrow(/shut down|start/);
    await starting.catch(() => undefined);
    await down;
  }, 60_000);
});

it.each<Transport>(['http', 'tcp'])(
  'LitePullConsumer (subscribe): ready once every first pull is held (%s)',
  async (t) => {
    const own = await startBroker({ remotingPort: 0 });
    const topic = uniq('LiteReady');
    await own.client.call('UPDATE_AND_CREATE_TOPIC', { topic, readQueueNums: 4, writeQueueNums: 4, perm: 6 });
    const c = new LitePullConsumer({
      ...addressing(t, own),
      consumerGroup: uniq('liteready'),
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    });
    c.subscribe(topic, '*');
    try {
      await c.start();
      await c.ready;
      const mine = c.assignment().length;
      expect(mine).toBeGreaterThanOrEqual(4);
      const held = (): number => own.broker.pullRequestHoldService.size;
      if (t === 'tcp') expect(held()).toBe(mine);
      else await waitFor(() => held() === mine, 1000);
    } finally {
      await c.shutdown();
      await own.close();
    }
    await expect(c.ready).resolves.toBeUndefined();
  },
  60_000,
);

it.each<Transport>(['http', 'tcp'])(
  '4 members in 2 processes started together read no message twice (%s)',
  async (t) => {
    const topic = await backlogTopic();
    const options = { ...addressing(t), consumerGroup: uniq('pair'), consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' };
    const r = await twoProcessRound(options, topic, BACKLOG);
    expect(r.consumed).toBe(BACKLOG);
    expect(r.duplicates).toBe(0);
    expect(r.perProcess.every((n) => n > 0)).toBe(true);
  },
  90_000,
);
