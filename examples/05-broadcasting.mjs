// 05 — Broadcasting: every member of the group gets every message (offsets kept by each member).
// Run: node examples/05-broadcasting.mjs
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ConsumeFromWhere, MessageModel, MessageSelector, Producer, PushConsumer } from 'rocketmq-ts';
import { runIfMain, until } from './_run.mjs';

export async function main(
  endpoints,
  { topic = `ExampleBroadcast_${Date.now()}`, count = 4, timeoutMs = 30_000 } = {},
) {
  const offsetsDir = await mkdtemp(path.join(os.tmpdir(), 'rocketmq-ts-offsets-'));
  const members = ['member_1', 'member_2'].map((instanceName) => {
    const consumer = new PushConsumer({
      consumerGroup: 'example_broadcast',
      endpoints,
      instanceName,
      messageModel: MessageModel.BROADCASTING,
      consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
      offsetStoreDir: offsetsDir,
    });
    const got = [];
    consumer.subscribe(topic, MessageSelector.byTag('*'));
    consumer.registerMessageListener((messages) => {
      for (const m of messages) got.push(String(m.body));
    });
    return { instanceName, consumer, got };
  });
  const producer = new Producer({ producerGroup: 'example_producer', endpoints });
  await producer.start();
  try {
    for (let i = 0; i < count; i++) await producer.send({ topic, body: Buffer.from(`news ${i}`) });
    for (const m of members) await m.consumer.start();
    await until(() => members.every((m) => m.got.length >= count), timeoutMs, 'both members');
    for (const m of members) console.log(`${m.instanceName} received ${m.got.length}: ${m.got.sort().join(', ')}`);
  } finally {
    await producer.shutdown();
    for (const m of members) await m.consumer.shutdown();
    await rm(offsetsDir, { recursive: true, force: true });
  }
  return members.map((m) => m.got);
}

runIfMain(import.meta.url, main);
