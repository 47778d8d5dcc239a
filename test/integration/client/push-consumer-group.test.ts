import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Producer } from '../../../src/client/producer/producer.js';
import type { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import {
  Collector,
  newConsumer,
  sendMany,
  settled,
  startProducer,
  topicAssignments,
  uniq,
} from './push-consumer-support.js';

const QUEUES = 8;

describe('PushConsumer group (CLUSTERING over 8 queues)', () => {
  let fx: BrokerFixture;
  let producer: Producer;
  const open: PushConsumer[] = [];

  beforeAll(async () => {
    fx = await startBroker({ watchRenewGraceMs: 1000, clientScanIntervalMs: 200 });
    producer = await startProducer(fx.broker.address, QUEUES);
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown({ timeoutMs: 1000 })));
  });
  afterAll(async () => {
    await producer.shutdown();
    await fx.close();
  });

  async function group(
    topic: string,
    groupName: string,
    n: number,
  ): Promise<{ consumers: PushConsumer[]; collectors: Collector[] }> {
    const consumers: PushConsumer[] = [];
    const collectors: Collector[] = [];
    for (let i = 0; i < n; i++) {
      const col = new Collector();
      const c = newConsumer(fx.broker.address, groupName).subscribe(topic, '*');
      c.registerMessageListener(col.listener);
      consumers.push(c);
      collectors.push(col);
      open.push(c);
    }
    await Promise.all(consumers.map((c) => c.start()));
    return { consumers, collectors };
  }

  it('three consumers receive every message at least once, and once settled no queue has two owners', async () => {
    const topic = uniq('GroupT');
    const groupName = uniq('g3');
    await sendMany(producer, topic, 8, 'warm'); // creates the topic with 8 queues
    const { consumers, collectors } = await group(topic, groupName, 3);
    await waitFor(() => settled(consumers, topic, QUEUES), 10_000);
    const split = topicAssignments(consumers, topic)
      .map((a) => a.length)
      .sort();
    expect(split).toEqual([2, 3, 3]);
    const sent = await sendMany(producer, topic, 400, 'body');
    const received = (): Set<string> => new Set(collectors.flatMap((c) => c.bodies));
    await waitFor(() => sent.every((b) => received().has(b)), 15_000);
    expect(settled(consumers, topic, QUEUES)).toBe(true);
    // Each message went to the owner of its queue only (no queue has two owners).
    const owners = new Map<string, number>();
    collectors.forEach((col, i) => {
      for (const m of col.messages) {
        // Only what was sent after the group settled: earlier messages may have moved with their queue.
        if (m.topic !== topic || !m.body?.toString().startsWith('body-')) continue;
        const k = `${m.brokerName}/${m.queueId}`;
        expect(owners.get(k) ?? i).toBe(i);
        owners.set(k, i);
      }
    });
  });

  it('a member joining or leaving makes the others rebalance within about a second', async () => {
    const topic = uniq('JoinT');
    const groupName = uniq('gj');
    await sendMany(producer, topic, 8, 'warm');
    const { consumers } = await group(topic, groupName, 2);
    await waitFor(() => settled(consumers, topic, QUEUES), 10_000);
    const [a, b] = consumers as [PushConsumer, PushConsumer];

    const joiner = newConsumer(fx.broker.address, groupName).subscribe(topic, '*');
    joiner.registerMessageListener(new Collector().listener);
    open.push(joiner);
    await joiner.start();
    const joinedAt = Date.now();
    await waitFor(
      () => settled([a, b, joiner], topic, QUEUES) && joiner.assignedQueues().some((q) => q.topic === topic),
      5000,
    );
    const joinMs = Date.now() - joinedAt;

    await joiner.shutdown();
    const leftAt = Date.now();
    await waitFor(() => settled([a, b], topic, QUEUES), 5000);
    const leaveMs = Date.now() - leftAt;
    // The joiner's own first pass may wait for its route; the others react to the membership watch.
    expect(joinMs).toBeLessThan(2000);
    expect(leaveMs).toBeLessThan(1500);
  });

  it('a killed member (SIGKILL, no unregister) hands its queues over within the eviction time', async () => {
    const topic = uniq('KillT');
    const groupName = uniq('gk');
    await sendMany(producer, topic, 8, 'warm');
    const { consumers, collectors } = await group(topic, groupName, 1);
    const child = spawnConsumerChild(fx.broker.address, groupName, topic);
    try {
      await waitFor(() => {
        const mine = topicAssignments(consumers, topic)[0] ?? [];
        return mine.length === QUEUES / 2;
      }, 15_000);
      child.kill('SIGKILL');
      const killedAt = Date.now();
      await waitFor(() => settled(consumers, topic, QUEUES), 10_000);
      // watchRenewGraceMs 1000 + scan 200 in this broker: well under 5 s.
      expect(Date.now() - killedAt).toBeLessThan(5000);
      // Nothing is lost: everything sent after the kill, on all 8 queues, reaches the survivor.
      const sent = await sendMany(producer, topic, 80, 'after');
      const survivor = collectors[0] as Collector;
      await waitFor(() => sent.every((b) => survivor.distinct.has(b)), 10_000);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
    }
  });
});

function spawnConsumerChild(endpoints: string, group: string, topic: string): ChildProcess {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const dist = path.resolve(here, '../../../dist/index.js');
  const script = `
    const { PushConsumer } = await import(${JSON.stringify(dist)});
    const c = new PushConsumer({ endpoints: ${JSON.stringify(endpoints)}, consumerGroup: ${JSON.stringify(group)} });
    c.subscribe(${JSON.stringify(topic)}, '*');
    c.registerMessageListener(() => 'CONSUME_SUCCESS');
    await c.start();
    setInterval(() => {}, 1000);
  `;
  return spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: 'ignore' });
}
