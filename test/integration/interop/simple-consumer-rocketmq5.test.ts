/**
 * Our SimpleConsumer against a stock Apache RocketMQ 5.3.3 NameServer and broker (the 5.3.3 kit, one
 * cluster for the file), over RocketMQ's remoting POP (PopMessageProcessor, AckMessageProcessor,
 * ChangeInvisibleTimeProcessor, PopReviveService): receive by tag and by SQL92 and ack,
 * changeInvisibleDuration, and the redelivery of an unacknowledged message through the broker's revive
 * with reconsumeTimes growing, then the dead-letter queue past the consumer's maxReconsumeTimes. Our
 * PushConsumer with `consumeMode: 'POP'` on the same cluster: a member killed mid-batch loses nothing (what
 * it held comes back to the survivor after its invisible time), and eight members started together on a
 * four-queue topic all receive with no duplicate. The group stays in RocketMQ's default PULL request mode:
 * the consumer then pops every queue (queue id -1) and 5.3.3's broker serves that without setConsumeMode.
 * Skipped with one line without the kit or Java 17+.
 */
import { Producer } from '../../../src/client/producer/producer.js';
import { MessageSelector } from '../../../src/client/consumer/message-selector.js';
import { SimpleConsumer, type ReceivedMessage, type SimpleConsumerOptions } from '../../../src/index.js';
import { PushConsumer } from '../../../src/client/consumer/push/push-consumer.js';
import type { PushConsumerOptions } from '../../../src/client/consumer/push/push-consumer-options.js';
import { waitFor } from '../../support/broker-fixture.js';
import { kitDescribe, startKit, type RocketMQKit } from '../../support/rocketmq-kit.js';
import { body, eightTogether, killedMidBatch } from '../../support/pop-scenarios.js';

let seq = 0;
const uniq = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}_${++seq}`;

kitDescribe(
  'SimpleConsumer against Apache RocketMQ 5.3.3 (POP over remoting)',
  () => {
    let kit: RocketMQKit;
    let producer: Producer;
    const consumers: SimpleConsumer[] = [];
    const pushers: PushConsumer[] = [];

    const popPush = (group: string, topic: string, extra: Partial<PushConsumerOptions> = {}): PushConsumer => {
      const c = new PushConsumer({
        namesrvAddr: kit.namesrvAddr,
        consumerGroup: group,
        consumeMode: 'POP',
        consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
        brokerSuspendMaxTimeMs: 2000,
        ...extra,
      });
      c.subscribe(topic, '*');
      pushers.push(c);
      return c;
    };

    const consumer = async (
      group: string,
      topic: string,
      selector: MessageSelector | string = '*',
      extra: Partial<SimpleConsumerOptions> = {},
    ): Promise<SimpleConsumer> => {
      const c = new SimpleConsumer({
        namesrvAddr: kit.namesrvAddr,
        consumerGroup: group,
        awaitDurationMs: 2000,
        requestTimeoutMs: 10_000,
        ...extra,
      });
      c.subscribe(topic, selector);
      consumers.push(c);
      await c.start();
      // The first POP of a new group sets its offsets (RocketMQ's ConsumeInitMode); later sends are all seen.
      expect(await c.receive(1, 10_000)).toEqual([]);
      return c;
    };

    /** Receives until `n` messages came or `timeoutMs` passed. */
    const receiveN = async (c: SimpleConsumer, n: number, invisibleMs: number, timeoutMs = 30_000) => {
      const out: ReceivedMessage[] = [];
      const deadline = Date.now() + timeoutMs;
      while (out.length < n && Date.now() < deadline)
        out.push(...(await c.receive(Math.min(32, n - out.length), invisibleMs)));
      return out;
    };

    const send = async (topic: string, bodies: string[], tags = 'T'): Promise<void> => {
      for (const s of bodies) await producer.send({ topic, body: Buffer.from(s), tags });
    };

    beforeAll(async () => {
      kit = await startKit({ version: 5 });
      producer = new Producer({ namesrvAddr: kit.namesrvAddr, sendMsgTimeoutMs: 20_000 });
      await producer.start();
    }, 180_000);

    afterEach(async () => {
      await Promise.all(pushers.splice(0).map((c) => c.shutdown({ timeoutMs: 1000 }).catch(() => undefined)));
    }, 60_000);

    afterAll(async () => {
      await Promise.all(consumers.splice(0).map((c) => c.shutdown().catch(() => undefined)));
      await producer?.shutdown();
      await kit?.stop();
    }, 60_000);

    it('receives by tag and acks; an acknowledged message is not delivered again', async () => {
      const topic = uniq('PopT');
      await kit.createTopic(topic, 4);
      const c = await consumer(uniq('PopG'), topic, 'TagA');
      await send(topic, ['b0', 'b1'], 'TagB');
      await send(topic, ['a0', 'a1', 'a2', 'a3', 'a4', 'a5'], 'TagA');
      const got = await receiveN(c, 6, 20_000);
      expect(got.map(body).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'a4', 'a5']);
      for (const m of got) {
        expect(m.topic).toBe(topic);
        expect(m.deliveryAttempt).toBe(1);
        await c.ack(m);
      }
      expect(await c.receive(8, 20_000)).toEqual([]);
    }, 90_000);

    it('receives by SQL92: only the messages whose properties match', async () => {
      const topic = uniq('PopSqlT');
      await kit.createTopic(topic, 2);
      const c = await consumer(uniq('PopSqlG'), topic, MessageSelector.bySql("color = 'red' AND seq >= 2"));
      for (let i = 0; i < 8; i++)
        await producer.send({
          topic,
          body: Buffer.from(`s${i}`),
          tags: 'T',
          properties: { color: i % 2 ? 'blue' : 'red', seq: String(i) },
        });
      const got = await receiveN(c, 3, 20_000);
      expect(got.map(body).sort()).toEqual(['s2', 's4', 's6']);
      for (const m of got) await c.ack(m);
      expect(await c.receive(8, 20_000)).toEqual([]);
    }, 90_000);

    it('changeInvisibleDuration: a shorter time brings the message back sooner, with a new receipt handle', async () => {
      const topic = uniq('PopCiT');
      await kit.createTopic(topic, 2);
      const c = await consumer(uniq('PopCiG'), topic);
      await send(topic, ['x']);
      const [m] = await receiveN(c, 1, 60_000);
      expect(m && body(m)).toBe('x');
      const oldHandle = m!.receiptHandle;
      await c.changeInvisibleDuration(m!, 1000);
      expect(m!.receiptHandle).not.toBe(oldHandle);
      const [again] = await receiveN(c, 1, 60_000, 60_000);
      expect(again && body(again)).toBe('x');
      expect(again!.reconsumeTimes).toBe(1);
      expect(again!.topic).toBe(topic);
      await c.ack(again!);
      expect(await c.receive(1, 10_000)).toEqual([]);
    }, 120_000);

    it('an unacknowledged message is revived with reconsumeTimes growing, then goes to %DLQ%', async () => {
      const topic = uniq('PopRvT');
      const group = uniq('PopRvG');
      await kit.createTopic(topic, 2);
      const out = await kit.mqadmin('updateSubGroup', '-c', kit.clusterName, '-g', group, '-r', '2');
      expect(out).toMatch(/success/);
      // RocketMQ 5's broker revives a message forever; moving it to the DLQ is the consumer's part.
      const c = await consumer(group, topic, '*', { maxReconsumeTimes: 2 });
      await send(topic, ['poison', 'fine']);
      const attempts: number[] = [];
      for (let i = 0; i < 3; i++) {
        const got = await receiveN(c, i === 0 ? 2 : 1, 2000, 60_000);
        const poison = got.find((m) => body(m) === 'poison');
        expect(poison).toBeDefined();
        attempts.push(poison!.reconsumeTimes);
        expect(poison!.topic).toBe(topic);
        for (const m of got) if (body(m) === 'fine') await c.ack(m);
      }
      expect(attempts).toEqual([0, 1, 2]);
      // Revived once more past maxReconsumeTimes, the consumer moves it to %DLQ%<group> instead of returning it.
      const after: ReceivedMessage[] = [];
      await waitFor(async () => {
        after.push(...(await c.receive(4, 2000)));
        return /\s1\s/.test(await kit.mqadmin('topicStatus', '-t', `%DLQ%${group}`));
      }, 90_000);
      expect(after.map(body)).toEqual([]);
    }, 180_000);

    it('POP push: a member killed mid-batch loses nothing, its messages come back to the survivor after their invisible time', async () => {
      const topic = uniq('PopKillT');
      const group = uniq('PopKillG');
      await kit.createTopic(topic, 4);
      await killedMidBatch(
        { member: (extra) => popPush(group, topic, extra), send: (bodies) => send(topic, bodies), timeoutMs: 30_000 },
        { messages: 24, invisibleMs: 2000, survivorInvisibleMs: 20_000 },
      );
    }, 120_000);

    it('POP push: eight members started together on a four-queue topic all receive, with no duplicate', async () => {
      const topic = uniq('PopEightT');
      const group = uniq('PopEightG');
      await kit.createTopic(topic, 4);
      await eightTogether(
        {
          member: (extra) => popPush(group, topic, extra),
          send: (bodies) =>
            Promise.all(bodies.map((s) => producer.send({ topic, body: Buffer.from(s), tags: 'T' }))).then(() => {}),
          timeoutMs: 30_000,
        },
        { messages: 160, workMs: 20, extra: { popInvisibleTimeMs: 30_000 } },
      );
    }, 120_000);
  },
  5,
);
