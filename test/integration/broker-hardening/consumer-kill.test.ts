/**
 * Consumer SIGKILL with takeover, short version: a push consumer in a child process is killed with
 * SIGKILL in the middle of consuming while a producer keeps sending; the surviving member of its group
 * takes its queues over, and every message sent is consumed (by the child before the kill, or by the
 * survivor): none lost. Duplicates (at-least-once: what the child consumed after its last committed
 * offset) are counted, not forbidden.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Producer } from '../../../src/client/producer/producer.js';
import type { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import { startBroker, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { Collector, newConsumer, sendMany, uniq } from '../client/push-consumer-support.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.resolve(here, '../../../dist/index.js');

/** A push consumer child that prints `consumed <body>` for each message before acknowledging it. */
function spawnConsumer(endpoints: string, group: string, topic: string): { child: ChildProcess; consumed: string[] } {
  const script = `
    const { PushConsumer } = await import(${JSON.stringify(dist)});
    const c = new PushConsumer({ endpoints: ${JSON.stringify(endpoints)}, consumerGroup: ${JSON.stringify(group)},
      consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET' });
    c.subscribe(${JSON.stringify(topic)}, '*');
    c.registerMessageListener(async (msgs) => {
      await new Promise((r) => setTimeout(r, 5));
      // stdout to a pipe is synchronous: a message is printed before its offset can be committed.
      for (const m of msgs) process.stdout.write('consumed ' + m.body.toString() + '\\n');
      return 'CONSUME_SUCCESS';
    });
    await c.start();
    process.stdout.write('started\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const consumed: string[] = [];
  let partial = '';
  child.stdout?.on('data', (d: Buffer) => {
    const lines = (partial + d.toString()).split('\n');
    partial = lines.pop() ?? '';
    for (const l of lines) if (l.startsWith('consumed ')) consumed.push(l.slice('consumed '.length));
  });
  return { child, consumed };
}

let fx: BrokerFixture;
let producer: Producer;
const open: PushConsumer[] = [];
beforeAll(async () => {
  fx = await startBroker({ watchRenewGraceMs: 1000, clientScanIntervalMs: 200 });
  // A generous send deadline: the machine running the suite may be very busy.
  producer = new Producer({ endpoints: fx.broker.address, defaultTopicQueueNums: 8, sendMsgTimeoutMs: 30_000 });
  await producer.start();
});
afterAll(async () => {
  for (const c of open) await c.shutdown().catch(() => undefined);
  await producer.shutdown();
  await fx.close();
});

test('a consumer killed mid-consumption under load: the survivor takes over, nothing is lost', async () => {
  const topic = uniq('CK');
  const group = uniq('ck');
  const sent = await sendMany(producer, topic, 300, 'before');
  const { child, consumed } = spawnConsumer(fx.broker.address, group, topic);
  const survivorLog = new Collector();
  const survivor = newConsumer(fx.broker.address, group).subscribe(topic, '*');
  survivor.registerMessageListener(survivorLog.listener);
  open.push(survivor);
  try {
    // Keep producing while the child consumes. The survivor joins once the child is consuming (so the
    // child surely holds queues with work on them), then the child is killed mid-consumption: conditions,
    // not timers.
    const during = sendMany(producer, topic, 300, 'during', () => ({}), 4);
    await waitFor(() => consumed.length >= 30, 60_000);
    await survivor.start();
    await waitFor(() => consumed.length >= 60, 60_000);
    child.kill('SIGKILL');
    sent.push(...(await during));
    const all = new Set(sent);
    await waitFor(() => {
      const seen = new Set([...consumed, ...survivorLog.bodies]);
      return [...all].every((b) => seen.has(b));
    }, 60_000);
    const deliveries = consumed.length + survivorLog.bodies.length;
    const distinct = new Set([...consumed, ...survivorLog.bodies]);
    const lost = [...all].filter((b) => !distinct.has(b));
    expect({ sent: all.size, lost: lost.length }).toEqual({ sent: 600, lost: 0 });
    expect(consumed.length).toBeGreaterThanOrEqual(60);
    // Duplicates are bounded by what the child consumed (at-least-once re-delivery of uncommitted work).
    expect(deliveries - distinct.size).toBeLessThanOrEqual(consumed.length);
    // The survivor ends up holding every queue of the topic.
    await waitFor(() => survivor.assignedQueues().filter((q) => q.topic === topic).length === 8, 30_000);
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
}, 180_000);
