import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { MessageSelector } from '../../../src/client/consumer/message-selector.js';
import type { Producer } from '../../../src/client/producer/producer.js';
import type { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { MessageModel } from '../../../src/client/consumer/consumer-constants.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, startProducer, uniq } from './push-consumer-support.js';

describe('PushConsumer subscriptions and BROADCASTING', () => {
  let fx: BrokerFixture;
  let producer: Producer;
  let offsetDir: string;
  const open: PushConsumer[] = [];

  beforeAll(async () => {
    fx = await startBroker();
    producer = await startProducer(fx.broker.address, 4);
    offsetDir = await mkdtemp(path.join(tmpdir(), 'rmq-bcast-'));
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((c) => c.shutdown({ timeoutMs: 1000 })));
  });
  afterAll(async () => {
    await producer.shutdown();
    await fx.close();
    await rm(offsetDir, { recursive: true, force: true });
  });

  const TAGS = ['TagA', 'TagB', 'TagC', undefined];
  const sendTagged = (topic: string, n: number): Promise<string[]> =>
    sendMany(producer, topic, n, 'x', (i) => {
      const tags = TAGS[i % TAGS.length];
      return { ...(tags ? { tags } : {}), properties: { a: String(i % 10) } };
    });

  it.each([
    ['tag expression TagA || TagC', 'TagA || TagC', (i: number) => i % 4 === 0 || i % 4 === 2],
    ['MessageSelector.byTag(TagB)', MessageSelector.byTag('TagB'), (i: number) => i % 4 === 1],
    ['MessageSelector.bySql(a > 5)', MessageSelector.bySql('a > 5'), (i: number) => i % 10 > 5],
    [
      'MessageSelector.bySql with tags',
      MessageSelector.bySql("TAGS = 'TagA' AND a < 5"),
      (i: number) => i % 4 === 0 && i % 10 < 5,
    ],
  ])('%s delivers exactly the matching messages', async (_name, selector, matches) => {
    const topic = uniq('FilterT');
    await sendMany(producer, topic, 1, 'warm', () => ({ tags: 'Warm' }));
    const col = new Collector();
    const c = newConsumer(fx.broker.address, uniq('gf')).subscribe(topic, selector);
    c.registerMessageListener(col.listener);
    open.push(c);
    await c.start();
    const N = 80;
    await sendTagged(topic, N);
    // Wait for every expected body, then a quiet period in which a wrongly delivered one would show up.
    const expected = Array.from({ length: N }, (_, i) => i)
      .filter(matches)
      .map((i) => `x-${i}`);
    await waitFor(() => expected.every((b) => col.distinct.has(b)), 10_000);
    await new Promise((r) => setTimeout(r, 300));
    expect([...col.distinct].sort()).toEqual([...expected].sort());
  });

  it('BROADCASTING delivers every message to every member, with offsets in a local file', async () => {
    const topic = uniq('BcastT');
    const group = uniq('gb');
    await sendMany(producer, topic, 1, 'warm');
    const cols = [new Collector(), new Collector()];
    const members = cols.map((col, i) => {
      const c = newConsumer(fx.broker.address, group, {
        messageModel: MessageModel.BROADCASTING,
        instanceName: `bcast${i}`,
        offsetStoreDir: offsetDir,
      }).subscribe(topic, '*');
      c.registerMessageListener(col.listener);
      open.push(c);
      return c;
    });
    await Promise.all(members.map((m) => m.start()));
    await waitFor(() => members.every((m) => m.assignedQueues().length === 4), 10_000);
    const sent = await sendMany(producer, topic, 60, 'b');
    await waitFor(() => cols.every((col) => sent.every((b) => col.distinct.has(b))), 10_000);
    // No retry topic in BROADCASTING.
    expect(members[0]?.assignedQueues().every((q) => q.topic === topic)).toBe(true);
  });
});
