import type { Logger } from '../../../src/common/logger.js';
import { isUnreachable } from '../../../src/client/broker-health.js';
import type { MessageExt } from '../../../src/common/message.js';
import type { PushConsumer } from '../../../src/client/push-consumer.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { newConsumer, settled, startProducer, topicAssignments, uniq } from './push-consumer-support.js';

/**
 * Queues of the topic: 256 by default (four times the 64 control connections, and far more held pulls
 * than HTTP/1.1 connections a single pool would give), MANY_QUEUES=1000 for the full check (it needs a
 * machine that is not shared: broker and both members run in this one process).
 */
const QUEUES = Number(process.env.MANY_QUEUES ?? 256);

/** Records every warning and error a consumer logs. */
function recordingLogger(): Logger & { problems: string[] } {
  const problems: string[] = [];
  const noop = (): void => {};
  const record = (obj: unknown, msg?: string): void => {
    const err = (obj as { err?: { message?: string } } | undefined)?.err;
    problems.push(`${String(msg)}${err?.message ? `: ${err.message}` : ''}`);
  };
  return { problems, debug: noop, info: noop, warn: record, error: record } as unknown as Logger & {
    problems: string[];
  };
}

describe('held pulls never starve control calls (many queues on one broker)', () => {
  let fx: BrokerFixture;
  beforeAll(async () => {
    // A member that misses heartbeats for 4 s is evicted: starving the heartbeat shows at once.
    fx = await startBroker({ channelExpiredTimeoutMs: 4000, clientScanIntervalMs: 250 });
  });
  afterAll(async () => {
    await fx.close();
  });

  it('one member holds all the queues with no timeout and no eviction; a second member splits them cleanly', async () => {
    const topic = uniq('Many');
    const group = uniq('gmany');
    const created = await fx.client.call('UPDATE_AND_CREATE_TOPIC', {
      topic,
      readQueueNums: QUEUES,
      writeQueueNums: QUEUES,
      perm: 6,
    });
    expect(created.code).toBe(0);
    const producer = await startProducer(fx.broker.address);
    const deliveries = new Map<string, number>();
    const listener = (msgs: MessageExt[]): void => {
      for (const m of msgs) {
        const b = m.body?.toString() ?? '';
        deliveries.set(b, (deliveries.get(b) ?? 0) + 1);
      }
    };
    // Short holds and periods so that a few cycles of each fit in seconds.
    const opts = {
      brokerSuspendMaxTimeMs: 2000,
      consumerTimeoutMsWhenSuspend: 12_000,
      heartbeatBrokerIntervalMs: 1000,
      persistConsumerOffsetIntervalMs: 2000,
      watchConsumerIdsHoldMs: 2000,
      stallTimeoutMs: 0,
    };
    const logA = recordingLogger();
    const logB = recordingLogger();
    const a = newConsumer(fx.broker.address, group, { ...opts, logger: logA }).subscribe(topic, '*');
    a.registerMessageListener(listener);
    const b = newConsumer(fx.broker.address, group, { ...opts, logger: logB }).subscribe(topic, '*');
    b.registerMessageListener(listener);
    const pullErrors: unknown[] = [];
    for (const c of [a, b]) c.events.on('pullError', (e) => pullErrors.push(e.error));
    const removedFromA: number[] = [];
    a.events.on('rebalance', (e) => e.topic === topic && e.removed.length && removedFromA.push(e.removed.length));
    const members = async (): Promise<string[]> => {
      const r = await fx.client.call('GET_CONSUMER_LIST_BY_GROUP', { consumerGroup: group });
      return (JSON.parse(r.body.toString('utf8')) as { consumerIdList: string[] }).consumerIdList;
    };
    let sent = 0;
    const send = async (n: number): Promise<void> => {
      for (let i = 0; i < n; i++) await producer.send({ topic, body: Buffer.from(`m-${sent++}`) });
    };
    const alone = async (ms: number, consumers: PushConsumer[]): Promise<void> => {
      const until = Date.now() + ms;
      while (Date.now() < until) {
        await send(20);
        const ids = await members();
        for (const c of consumers) expect(ids).toContain(c.clientId);
        await new Promise((r) => setTimeout(r, 200));
      }
    };
    try {
      await a.start();
      await waitFor(() => settled([a], topic, QUEUES), 20_000);
      // Several hold cycles, heartbeats and offset persists with every queue held by one member.
      await alone(8000, [a]);
      expect(removedFromA).toEqual([]);

      await b.start();
      const halves = (): boolean =>
        settled([a, b], topic, QUEUES) && topicAssignments([a, b], topic).every((q) => q.length === QUEUES / 2);
      await waitFor(halves, 20_000);
      expect(topicAssignments([a, b], topic).map((q) => q.length)).toEqual([QUEUES / 2, QUEUES / 2]);
      await alone(5000, [a, b]);
      await waitFor(() => deliveries.size === sent, 20_000);

      // No call timed out and no heartbeat failed: held pulls starved nothing. (A pull the broker answers
      // with a retriable code, e.g. SUBSCRIPTION_NOT_LATEST while the group's members report their
      // subscriptions, is retried by the consumer and is not what this test is about.)
      const starved = (p: string): boolean => /timed out|heartbeat failed|ERR_TIMEOUT|ERR_TRANSPORT/.test(p);
      expect(logA.problems.filter(starved)).toEqual([]);
      expect(logB.problems.filter(starved)).toEqual([]);
      expect(pullErrors.filter((e) => isUnreachable(e))).toEqual([]);
      expect(removedFromA).toEqual([QUEUES / 2]);
      const duplicated = [...deliveries.values()].filter((n) => n > 1).length;
      // Only what was in flight while queues changed hands may come twice.
      expect(duplicated).toBeLessThanOrEqual(20);
    } finally {
      await Promise.all([a.shutdown(), b.shutdown()]);
      await producer.shutdown();
    }
  }, 90_000);
});
