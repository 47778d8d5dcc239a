// 10 — Connect to an Apache RocketMQ cluster: give `namesrvAddr` (its NameServers) instead of
// `endpoints`. Routes come from the NameServers and every broker is reached over RocketMQ's TCP
// remoting. The bundled broker answers the same way on its remoting port
// (npx rocketmq-ts broker --store /tmp/rmq --remoting-port 9876).
// Run: NAMESRV_ADDR=127.0.0.1:9876 node examples/10-namesrv.mjs
import { AdminClient, ConsumeFromWhere, MessageSelector, Producer, PushConsumer } from 'rocketmq-ts';
import { namesrvAddr, runIfMain, until } from './_run.mjs';

export async function main(nameServers = namesrvAddr, { topic = 'ExampleClusterOrders', timeoutMs = 30_000 } = {}) {
  // The admin client reads the cluster's brokers from the NameServers (mqadmin -n).
  const admin = new AdminClient({ namesrvAddr: nameServers });
  const received = [];
  try {
    console.log(`brokers: ${(await admin.brokerAddresses()).join(', ')}`);
    await admin.createTopic(topic, { queueNums: 2 });

    const producer = new Producer({ producerGroup: 'example_cluster_producer', namesrvAddr: nameServers });
    await producer.start();
    const run = Date.now().toString(36); // this run's keys, so a second run counts only its own messages
    try {
      for (let i = 0; i < 4; i++) {
        const r = await producer.send({ topic, tags: 'Paid', keys: `${run}-${i}`, body: Buffer.from(`order ${i}`) });
        console.log(`sent ${run}-${i} to ${r.messageQueue.brokerName} queue ${r.messageQueue.queueId}`);
      }
    } finally {
      await producer.shutdown();
    }

    const group = `example_cluster_${topic}`;
    const consumer = new PushConsumer({
      consumerGroup: group,
      namesrvAddr: nameServers,
      consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    });
    consumer.subscribe(topic, MessageSelector.byTag('Paid'));
    consumer.registerMessageListener((messages) => {
      for (const m of messages) {
        if (!m.properties.KEYS?.startsWith(`${run}-`)) continue; // an earlier run's message
        console.log(`received ${m.properties.KEYS}: ${m.body}`);
        received.push(m);
      }
    });
    await consumer.start();
    try {
      await until(() => received.length >= 4, timeoutMs, '4 messages');
    } finally {
      await consumer.shutdown(); // commits the consumed offsets
    }
    const progress = await admin.consumerProgress(group, topic);
    console.log(`group ${group}: lag ${progress.diffTotal}`);
  } finally {
    await admin.shutdown();
  }
  return received;
}

runIfMain(import.meta.url, () => main());
