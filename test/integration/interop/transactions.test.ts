/**
 * Our TransactionProducer against a stock Apache RocketMQ NameServer and broker (the 4.9.8 and 5.3.3 kits, one
 * cluster each for the file), over
 * TCP remoting through `namesrvAddr`; our PullConsumer reads what the broker delivers. A commit is
 * delivered once, a rollback never, and a transaction left UNKNOW is settled by the broker's check-back
 * (RocketMQ's TransactionalMessageCheckService) to commit or rollback as checkLocalTransaction answers.
 * Each kit's broker runs with transactionCheckInterval and transactionTimeOut of one second, so the
 * check comes within seconds instead of RocketMQ's default minute. Skipped with one line without the
 * kit or Java 17+.
 */
import { PullConsumer } from '../../../src/client/consumer/pull/pull-consumer.js';
import type { MessageExt } from '../../../src/common/message.js';
import { LocalTransactionState, TransactionProducer, type TransactionListener } from '../../../src/index.js';
import { waitFor } from '../../support/broker-fixture.js';
import { kitDescribeEach, startKit, type RocketMQKit } from '../../support/rocketmq-kit.js';

let seq = 0;
const uniq = (prefix: string): string => `${prefix}_${process.pid}_${Date.now().toString(36)}_${++seq}`;

kitDescribeEach(
  (release) => `TransactionProducer against Apache RocketMQ ${release}`,
  (version) => {
    let kit: RocketMQKit;
    let pull: PullConsumer;
    const producers: TransactionProducer[] = [];

    /** Everything a consumer of `topic` can read now, by body. */
    const delivered = async (topic: string): Promise<Map<string, MessageExt>> => {
      const out = new Map<string, MessageExt>();
      for (const mq of await pull.fetchSubscribeMessageQueues(topic)) {
        for (const m of (await pull.pull(mq, '*', 0, 64)).msgFoundList) out.set(m.body?.toString() ?? '', m);
      }
      return out;
    };

    const producer = async (listener: TransactionListener): Promise<TransactionProducer> => {
      const p = new TransactionProducer({
        producerGroup: uniq('TxPG'),
        namesrvAddr: kit.namesrvAddr,
        sendMsgTimeoutMs: 15_000,
        transactionListener: listener,
      });
      producers.push(p);
      await p.start();
      return p;
    };

    beforeAll(async () => {
      kit = await startKit({ version, brokerExtraConf: ['transactionCheckInterval=1000', 'transactionTimeOut=1000'] });
      pull = new PullConsumer({ namesrvAddr: kit.namesrvAddr, consumerGroup: uniq('TxPullG') });
      await pull.start();
    }, 180_000);

    afterAll(async () => {
      await Promise.all(producers.splice(0).map((p) => p.shutdown().catch(() => undefined)));
      await pull?.shutdown();
      await kit?.stop();
    }, 60_000);

    it('COMMIT_MESSAGE is delivered once; ROLLBACK_MESSAGE never is', async () => {
      const topic = uniq('TxT');
      await kit.createTopic(topic, 4);
      let decide: LocalTransactionState = LocalTransactionState.ROLLBACK_MESSAGE;
      const p = await producer({
        executeLocalTransaction: () => decide,
        // Were the broker to check (a loaded machine), the answer would not change the outcome.
        checkLocalTransaction: () => LocalTransactionState.ROLLBACK_MESSAGE,
      });
      const rolledBack = await p.sendMessageInTransaction({ topic, body: Buffer.from('rolled-back'), tags: 'T' });
      expect(rolledBack).toMatchObject({ sendStatus: 'SEND_OK', localTransactionState: 'ROLLBACK_MESSAGE' });
      decide = LocalTransactionState.COMMIT_MESSAGE;
      const committed = await p.sendMessageInTransaction(
        { topic, body: Buffer.from('committed'), tags: 'T', keys: 'order-1', properties: { amount: '42' } },
        'arg',
      );
      expect(committed).toMatchObject({ sendStatus: 'SEND_OK', localTransactionState: 'COMMIT_MESSAGE' });
      expect(committed.transactionId).toBe(committed.msgId);

      let got = new Map<string, MessageExt>();
      await waitFor(async () => (got = await delivered(topic)).has('committed'), 20_000);
      const m = got.get('committed')!;
      expect(m.msgId).toBe(committed.msgId);
      expect(m.properties).toMatchObject({ TAGS: 'T', KEYS: 'order-1', amount: '42' });
      // The rollback was decided before the commit was sent.
      expect([...got.keys()]).toEqual(['committed']);
    }, 60_000);

    it('UNKNOW is settled by the broker checking back: to commit (delivered) or to rollback (not)', async () => {
      const topic = uniq('TxCheckT');
      await kit.createTopic(topic, 4);
      const checked: string[] = [];
      const p = await producer({
        executeLocalTransaction: () => LocalTransactionState.UNKNOW,
        checkLocalTransaction: (msg) => {
          const body = msg.body?.toString() ?? '';
          checked.push(body);
          return body === 'checked-commit'
            ? LocalTransactionState.COMMIT_MESSAGE
            : LocalTransactionState.ROLLBACK_MESSAGE;
        },
      });
      const toCommit = await p.sendMessageInTransaction({ topic, body: Buffer.from('checked-commit') });
      const toRollback = await p.sendMessageInTransaction({ topic, body: Buffer.from('checked-rollback') });
      expect([toCommit.localTransactionState, toRollback.localTransactionState]).toEqual(['UNKNOW', 'UNKNOW']);
      // Nothing is delivered before the broker has asked about it.
      const asked = [...checked];
      for (const body of (await delivered(topic)).keys()) expect(asked).toContain(body);

      let got = new Map<string, MessageExt>();
      await waitFor(async () => (got = await delivered(topic)).has('checked-commit'), 30_000);
      expect(got.get('checked-commit')?.msgId).toBe(toCommit.msgId);
      expect(checked).toContain('checked-commit');
      await waitFor(() => checked.includes('checked-rollback'), 30_000);
      // The rollback answer is a oneway END_TRANSACTION; a commit sent after it is delivered while it is not.
      const marker = await producer({
        executeLocalTransaction: () => LocalTransactionState.COMMIT_MESSAGE,
        checkLocalTransaction: () => LocalTransactionState.ROLLBACK_MESSAGE,
      });
      await marker.sendMessageInTransaction({ topic, body: Buffer.from('marker') });
      await waitFor(async () => (got = await delivered(topic)).has('marker'), 20_000);
      expect([...got.keys()].sort()).toEqual(['checked-commit', 'marker']);
    }, 90_000);
  },
);
