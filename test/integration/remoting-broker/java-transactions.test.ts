/**
 * RocketMQ's own Java client (4.9.8, then 5.3.3: one suite each, from the shared kits) against the bundled broker over its remoting
 * port: a TransactionMQProducer whose local transaction commits (delivered once), rolls back (never
 * delivered) or stays UNKNOW until the broker's check-back settles it, and one that dies before deciding
 * is settled by the check-back to another member of its group; and a DefaultLitePullConsumer that
 * subscribe()s to a topic and receives the first message sent after it started within a bound close to
 * RocketMQ's own. The broker checks undecided halves often, so check-backs come within seconds.
 * One JVM serves the whole file (Driver.java); skipped with one line when Java or the kit is missing.
 */
import { rmSync } from 'node:fs';
import type { Broker } from '../../../src/broker/index.js';
import { decodeMessage } from '../../../src/common/codec/index.js';
import type { MessageExt } from '../../../src/common/message.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, type BrokerFixture } from '../../support/broker-fixture.js';
import {
  DRIVER_SOURCE,
  JavaDriver,
  compileJava,
  describeWithJavaEach,
  javaKit,
  waitUntil,
} from '../../support/java-client.js';

/** Every message stored on the topic's queues (what a consumer of the topic can read). */
async function delivered(broker: Broker, topic: string): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  for (let q = 0; q < 8; q++) {
    if (broker.store.getMaxOffsetInQueue(topic, q) === 0) continue;
    const r = await broker.store.getMessage('t', topic, q, 0, 100, null);
    for (const b of r.messages) out.push(decodeMessage(b, 0).message);
  }
  return out;
}

/** Polls an async condition (waitUntil takes a synchronous one). */
async function waitAsync(cond: () => Promise<boolean>, timeoutMs: number, describeState: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`condition not met in ${timeoutMs} ms: ${describeState()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describeWithJavaEach(
  (release) => `RocketMQ ${release} Java transactional producer and lite pull consumer against the bundled broker`,
  (version) => {
    let classes: string;
    let fx: BrokerFixture;
    let java: JavaDriver;
    let ns: string;

    const createTopic = async (topic: string, queues: number): Promise<void> => {
      const r = await fx.client.call('UPDATE_AND_CREATE_TOPIC', {
        topic,
        readQueueNums: queues,
        writeQueueNums: queues,
        perm: 6,
      });
      expect(r.code).toBe(ResponseCode.SUCCESS);
    };
    const state = (): string =>
      `checks ${JSON.stringify(java.checks.slice(-10))} messages ${JSON.stringify(java.messages.slice(-10))} ` +
      `pollErrors ${JSON.stringify(java.pollErrors.slice(-5))}\n${java.log.slice(-3000)}`;
    const bodiesOn = async (topic: string): Promise<string[]> =>
      (await delivered(fx.broker, topic)).map((m) => m.body?.toString() ?? '').sort();

    beforeAll(async () => {
      const kit = javaKit(version);
      if (!kit) return;
      classes = compileJava(kit, [DRIVER_SOURCE]);
      // Halves older than the timeout are checked on every pass, so an UNKNOW is asked about within seconds.
      fx = await startBroker({ remotingPort: 0, transactionTimeOut: 500, transactionCheckInterval: 500 });
      ns = fx.broker.remotingAddress as string;
      java = await JavaDriver.start(kit, classes);
      await java.command('txproducer', 'TX', ns, uniqueName('JTxGroup'));
      await java.command('producer', 'P1', ns);
    }, 60_000);

    afterAll(async () => {
      await java?.close();
      await fx?.close();
      if (classes) rmSync(classes, { recursive: true, force: true });
    }, 60_000);

    test('a Java transaction that commits is delivered once, without being checked', async () => {
      const topic = uniqueName('JTxCommit');
      await createTopic(topic, 4);
      const r = await java.command('txsend', 'TX', topic, 'paid', 'COMMIT');
      expect(r).toMatchObject({ status: 'SEND_OK', state: 'COMMIT_MESSAGE' });
      await waitAsync(async () => (await bodiesOn(topic)).length === 1, 10_000, state);
      const [m] = await delivered(fx.broker, topic);
      expect(m?.body?.toString()).toBe('paid');
      expect(m?.properties?.UNIQ_KEY).toBe(r.msgId);
      expect(m?.properties?.TRAN_MSG).toBeUndefined();
      expect(m?.properties?.txState).toBe('COMMIT');
      await waitUntil(() => fx.broker.transactionalMessageService.pendingCount === 0, 10_000, state);
      await fx.broker.transactionalMessageService.check();
      expect(await bodiesOn(topic)).toEqual(['paid']);
      expect(java.checks.filter((c) => c.topic === topic)).toHaveLength(0);
    }, 30_000);

    test('a Java transaction that rolls back is never delivered', async () => {
      const topic = uniqueName('JTxRollback');
      await createTopic(topic, 4);
      const r = await java.command('txsend', 'TX', topic, 'never', 'ROLLBACK');
      expect(r).toMatchObject({ status: 'SEND_OK', state: 'ROLLBACK_MESSAGE' });
      await waitUntil(() => fx.broker.transactionalMessageService.pendingCount === 0, 10_000, state);
      await fx.broker.transactionalMessageService.check();
      expect(await delivered(fx.broker, topic)).toHaveLength(0);
      expect(java.checks.filter((c) => c.topic === topic)).toHaveLength(0);
    }, 30_000);

    test('a Java UNKNOW stays invisible while the check answers UNKNOW, then the check-back settles it', async () => {
      const topic = uniqueName('JTxUnknown');
      await createTopic(topic, 4);
      const checksOf = (body: string) => java.checks.filter((c) => c.topic === topic && c.body === body);

      // Commit by check-back: the first check answers UNKNOW and leaves it pending; the next one commits.
      const late = await java.command('txsend', 'TX', topic, 'late', 'UNKNOW');
      expect(late).toMatchObject({ status: 'SEND_OK', state: 'UNKNOW' });
      await waitUntil(() => checksOf('late').length >= 1, 15_000, state);
      // The check names the half by its UNIQ_KEY, the id the send returned (RocketMQ's TransactionSendResult
      // has no transactionId of its own, and the checked MessageExt's msgId is the stored one).
      expect(checksOf('late')[0]).toMatchObject({ answer: 'UNKNOW', transactionId: late.msgId });
      expect(await delivered(fx.broker, topic)).toHaveLength(0);
      await java.command('txcheck', 'TX', 'COMMIT');
      await waitAsync(async () => (await bodiesOn(topic)).length === 1, 15_000, state);
      expect(await bodiesOn(topic)).toEqual(['late']);
      expect(checksOf('late').at(-1)?.answer).toBe('COMMIT_MESSAGE');

      // Rollback by check-back: never delivered.
      await java.command('txcheck', 'TX', 'ROLLBACK');
      await java.command('txsend', 'TX', topic, 'dropped', 'UNKNOW');
      await waitUntil(() => checksOf('dropped').some((c) => c.answer === 'ROLLBACK_MESSAGE'), 15_000, state);
      await waitUntil(() => fx.broker.transactionalMessageService.pendingCount === 0, 10_000, state);
      await fx.broker.transactionalMessageService.check();
      expect(await bodiesOn(topic)).toEqual(['late']);
      await java.command('txcheck', 'TX', 'UNKNOW');
    }, 60_000);

    test('a Java producer that dies before deciding is resolved by the check-back to another member of its group', async () => {
      const kit = javaKit(version);
      if (!kit) return;
      const topic = uniqueName('JTxOrphan');
      const group = uniqueName('JTxShared');
      await createTopic(topic, 4);
      const doomed = await JavaDriver.start(kit, classes);
      try {
        await doomed.command('txproducer', 'DOOMED', ns, group);
        await java.command('txproducer', 'SURVIVOR', ns, group);
        await java.command('txcheck', 'SURVIVOR', 'COMMIT');
        // Both members must be on record with the broker before one of them dies: RocketMQ 5.3.3's producer
        // heartbeats only to brokers it has sent to, so each commits one transaction on another topic first.
        const warm = `${topic}Warm`;
        await createTopic(warm, 1);
        await doomed.command('txsend', 'DOOMED', warm, 'warm-doomed', 'COMMIT');
        await java.command('txsend', 'SURVIVOR', warm, 'warm-survivor', 'COMMIT');
        const members = () => fx.broker.consumerManager.producerManager.getClientIds(group).length;
        await waitUntil(
          () => members() === 2,
          30_000,
          () => `${members()} members; ${state()}`,
        );
        // The half is stored, then the JVM ends inside executeLocalTransaction: no END_TRANSACTION is sent.
        await expect(doomed.command('txsend', 'DOOMED', topic, 'orphan', 'HALT')).rejects.toThrow(/driver exited/);
        const survivorChecks = () => java.checks.filter((c) => c.p === 'SURVIVOR' && c.topic === topic);
        await waitUntil(() => survivorChecks().some((c) => c.answer === 'COMMIT_MESSAGE'), 30_000, state);
        await waitAsync(async () => (await bodiesOn(topic)).length === 1, 15_000, state);
        await waitUntil(() => fx.broker.transactionalMessageService.pendingCount === 0, 15_000, state);
        await fx.broker.transactionalMessageService.check();
        expect(await bodiesOn(topic)).toEqual(['orphan']);
      } finally {
        await java.command('stop', 'SURVIVOR');
        await doomed.close();
      }
    }, 90_000);

    test('a Java DefaultLitePullConsumer.subscribe() gets its first messages promptly, not after its 20 s rebalance', async () => {
      const topic = uniqueName('JLite');
      await createTopic(topic, 4);
      await java.command('litepull', 'L1', ns, uniqueName('JLiteGroup'), topic);
      const sentAt = Date.now();
      for (let i = 0; i < 3; i++)
        expect((await java.command('send', 'P1', topic, 'T', '', `lite-${i}`)).status).toBe('SEND_OK');
      const got = () => java.messages.filter((m) => m.c === 'L1');
      await waitUntil(() => new Set(got().map((m) => m.body)).size === 3, 30_000, state);
      // RocketMQ's own broker hands it over in about a second (so does ours on a quiet machine): the
      // consumer's first rebalance assigns the queues and the pull that follows finds the messages. The
      // bound is loose for a busy machine, and still far below the 20 s a member waited when it was not
      // told of its own join.
      const firstAfter = (got()[0]?.at ?? Infinity) - sentAt;
      expect(firstAfter).toBeLessThan(10_000);
      expect([...new Set(got().map((m) => m.body))].sort()).toEqual(['lite-0', 'lite-1', 'lite-2']);
      expect(got().every((m) => m.topic === topic)).toBe(true);
      await java.command('stop', 'L1');
    }, 60_000);
  },
);
