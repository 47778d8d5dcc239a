/** Helpers for the PushConsumer integration tests: consumers with test-friendly options, collectors. */
import { Producer } from '../../../src/client/producer/producer.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import type { PushConsumerOptions } from '../../../src/client/consumer/push/push-consumer-options.js';
import { ConsumeConcurrentlyStatus } from '../../../src/client/consumer/consumer-constants.js';
import type { MessageExt, MessageQueue } from '../../../src/common/message.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';

let seq = 0;
/** A name unique within the test run. */
export const uniq = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}_${++seq}`;

export const mqKey = (q: MessageQueue): string => `${q.topic}/${q.brokerName}/${q.queueId}`;

export function newConsumer(
  endpoints: string,
  consumerGroup: string,
  extra: Partial<PushConsumerOptions> = {},
): PushConsumer {
  return new PushConsumer({
    endpoints,
    consumerGroup,
    consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
    ...extra,
  });
}

/** Records every delivery (body string) per consumer. */
export class Collector {
  readonly bodies: string[] = [];
  readonly messages: MessageExt[] = [];
  get distinct(): Set<string> {
    return new Set(this.bodies);
  }
  listener = (msgs: MessageExt[]): ConsumeConcurrentlyStatus => {
    for (const m of msgs) {
      this.bodies.push(m.body?.toString() ?? '');
      this.messages.push(m);
    }
    return ConsumeConcurrentlyStatus.CONSUME_SUCCESS;
  };
}

export async function startProducer(endpoints: string, defaultTopicQueueNums = 8): Promise<Producer> {
  const p = new Producer({ endpoints, defaultTopicQueueNums });
  await p.start();
  return p;
}

/**
 * A broker and a producer shared by one describe block: started in its beforeAll, closed in its afterAll.
 * Read them inside tests (`env.fx`, `env.producer`), where they exist.
 */
export function useBrokerAndProducer(
  defaultTopicQueueNums: number,
  brokerOptions?: Parameters<typeof startBroker>[0],
): BrokerWithProducer {
  let fx: BrokerFixture | undefined;
  let producer: Producer | undefined;
  beforeAll(async () => {
    fx = await startBroker(brokerOptions);
    producer = await startProducer(fx.broker.address, defaultTopicQueueNums);
  });
  afterAll(async () => {
    await producer?.shutdown();
    await fx?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the shared broker is read outside a test');
    return value;
  };
  return {
    get fx() {
      return started(fx);
    },
    get producer() {
      return started(producer);
    },
  };
}

/** Sends `n` messages `prefix-0 ..` to `topic`, `concurrency` at a time. */
export async function sendMany(
  producer: Producer,
  topic: string,
  n: number,
  prefix = 'm',
  extra: (i: number) => { tags?: string; properties?: Record<string, string> } = () => ({}),
  concurrency = 16,
): Promise<string[]> {
  const bodies: string[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < n) {
      const i = next++;
      const body = `${prefix}-${i}`;
      bodies.push(body);
      await producer.send({ topic, body: Buffer.from(body), ...extra(i) });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  return bodies;
}

/** The topic's queues held by each consumer, without the retry topic. */
export function topicAssignments(consumers: PushConsumer[], topic: string): string[][] {
  return consumers.map((c) =>
    c
      .assignedQueues()
      .filter((q) => q.topic === topic)
      .map(mqKey),
  );
}

/** True when every queue of `topic` (`total` of them) is held by exactly one of `consumers`. */
export function settled(consumers: PushConsumer[], topic: string, total: number): boolean {
  const all = topicAssignments(consumers, topic).flat();
  return all.length === total && new Set(all).size === total;
}

/** What `useBrokerAndProducer` gives. */
export interface BrokerWithProducer {
  readonly fx: BrokerFixture;
  readonly producer: Producer;
}

/** A new topic (named after `prefix`) of `queues` queues holding `n` messages `m-0` ... `m-<n-1>`. */
export async function topicWithBacklog(
  env: BrokerWithProducer,
  prefix: string,
  queues: number,
  n: number,
  concurrency = 8,
): Promise<string> {
  const topic = uniq(prefix);
  const created = await env.fx.client.call('UPDATE_AND_CREATE_TOPIC', {
    topic,
    readQueueNums: queues,
    writeQueueNums: queues,
    perm: 6,
  });
  expect(created.code).toBe(0);
  await sendMany(env.producer, topic, n, 'm', () => ({}), concurrency);
  return topic;
}
