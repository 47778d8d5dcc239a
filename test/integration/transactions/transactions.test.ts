/**
 * Transactional messages end to end: our TransactionProducer on our broker, over HTTP and TCP. A commit
 * is delivered once, a rollback never; an UNKNOW is settled by the broker's check-back (TCP: the only
 * transport with broker-initiated requests), also when the producer that sent it is gone and another
 * member of its group answers, and across a broker restart. Bad END_TRANSACTION calls are answered with
 * RocketMQ's code and a remark, and change nothing.
 */
import { rmSync } from 'node:fs';
import { decodeMessage, messageProperties2String, MessageSysFlag } from '../../../src/common/codec/index.js';
import type { MessageExt } from '../../../src/common/message.js';
import type { Broker } from '../../../src/broker/index.js';
import {
  LocalTransactionState,
  TransactionProducer,
  type TransactionListener,
  type TransactionProducerOptions,
} from '../../../src/index.js';
import { startBroker, tempStorePath, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';

const QUIET = { transactionTimeOut: 0, transactionCheckInterval: 50 };

/** Every message stored on the topic's queues (what a consumer of the topic can read). */
async function delivered(broker: Broker, topic: string): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  for (let q = 0; q < 8; q++) {
    const max = broker.store.getMaxOffsetInQueue(topic, q);
    if (max === 0) continue;
    const r = await broker.store.getMessage('t', topic, q, 0, 100, null);
    for (const b of r.messages) out.push(decodeMessage(b, 0).message);
  }
  return out;
}

const listener = (
  execute: LocalTransactionState,
  check: LocalTransactionState = LocalTransactionState.UNKNOW,
  checked: MessageExt[] = [],
): TransactionListener => ({
  executeLocalTransaction: () => execute,
  checkLocalTransaction: async (m) => {
    checked.push(m);
    return check;
  },
});

function producerOn(
  fx: BrokerFixture,
  transport: 'http' | 'tcp',
  group: string,
  transactionListener: TransactionListener,
  extra: Partial<TransactionProducerOptions> = {},
): TransactionProducer {
  const where =
    transport === 'http' ? { endpoints: fx.broker.address } : { namesrvAddr: fx.broker.remotingAddress ?? '' };
  return new TransactionProducer({ producerGroup: group, ...where, transactionListener, ...extra });
}

describe.each(['http', 'tcp'] as const)('transactions over %s', (transport) => {
  let fx: BrokerFixture;
  const producers: TransactionProducer[] = [];
  beforeEach(async () => {
    fx = await startBroker({ remotingPort: 0, ...QUIET, transactionCheckInterval: 3_600_000 });
  });
  afterEach(async () => {
    await Promise.all(producers.splice(0).map((p) => p.shutdown()));
    await fx.close();
  });

  it('a committed message is delivered once, without TRAN_MSG', async () => {
    const p = producerOn(fx, transport, 'tx-commit', listener(LocalTransactionState.COMMIT_MESSAGE));
    producers.push(p);
    await p.start();
    let seenArg: unknown;
    p.transactionListener.executeLocalTransaction = (_m, arg) => {
      seenArg = arg;
      return LocalTransactionState.COMMIT_MESSAGE;
    };
    const r = await p.sendMessageInTransaction({ topic: 'TxCommit', body: Buffer.from('paid'), tags: 'A' }, 42);
    expect(r).toMatchObject({ sendStatus: 'SEND_OK', localTransactionState: 'COMMIT_MESSAGE' });
    expect(r.transactionId).toBe(r.msgId);
    expect(seenArg).toBe(42);
    await waitFor(async () => (await delivered(fx.broker, 'TxCommit')).length === 1);
    const [m] = await delivered(fx.broker, 'TxCommit');
    expect(m?.body?.toString()).toBe('paid');
    expect(m?.properties?.TRAN_MSG).toBeUndefined();
    expect(m?.properties?.REAL_TOPIC).toBeUndefined();
    expect(m?.properties?.PGROUP).toBe('tx-commit');
    expect(m?.properties?.UNIQ_KEY).toBe(r.msgId);
    expect((m?.sysFlag ?? 0) & MessageSysFlag.TRANSACTION_MASK).toBe(MessageSysFlag.TRANSACTION_COMMIT_TYPE);
    expect(fx.broker.transactionalMessageService.pendingCount).toBe(0);
  });

  it('a rolled-back message is never delivered', async () => {
    const p = producerOn(fx, transport, 'tx-rollback', listener(LocalTransactionState.ROLLBACK_MESSAGE));
    producers.push(p);
    await p.start();
    const r = await p.sendMessageInTransaction({ topic: 'TxRollback', body: Buffer.from('x') });
    expect(r.localTransactionState).toBe('ROLLBACK_MESSAGE');
    await waitFor(() => fx.broker.transactionalMessageService.pendingCount === 0);
    await fx.broker.transactionalMessageService.check();
    expect(await delivered(fx.broker, 'TxRollback')).toHaveLength(0);
    expect(fx.broker.store.getMaxOffsetInQueue('RMQ_SYS_TRANS_OP_HALF_TOPIC', 0)).toBe(1);
  });

  it('a half message is invisible until decided; a listener that throws leaves it UNKNOW', async () => {
    const p = producerOn(fx, transport, 'tx-throw', {
      executeLocalTransaction: () => {
        throw new Error('db down');
      },
      checkLocalTransaction: () => LocalTransactionState.UNKNOW,
    });
    producers.push(p);
    await p.start();
    const r = await p.sendMessageInTransaction({ topic: 'TxThrow', body: Buffer.from('x') });
    expect(r.localTransactionState).toBe('UNKNOW');
    expect(fx.broker.transactionalMessageService.pendingCount).toBe(1);
    expect(await delivered(fx.broker, 'TxThrow')).toHaveLength(0);
    expect(fx.broker.store.getMaxOffsetInQueue('RMQ_SYS_TRANS_HALF_TOPIC', 0)).toBe(1);
  });
});

describe('check-back over tcp', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of cleanup.splice(0).reverse()) await c();
  });

  it('an UNKNOW is settled by checkLocalTransaction, once', async () => {
    const fx = await startBroker({ remotingPort: 0, ...QUIET });
    cleanup.push(() => fx.close());
    const checked: MessageExt[] = [];
    const p = producerOn(
      fx,
      'tcp',
      'tx-check',
      listener(LocalTransactionState.UNKNOW, LocalTransactionState.COMMIT_MESSAGE, checked),
    );
    cleanup.push(() => p.shutdown());
    await p.start();
    const r = await p.sendMessageInTransaction({ topic: 'TxCheck', body: Buffer.from('late') });
    expect(r.localTransactionState).toBe('UNKNOW');
    await waitFor(async () => (await delivered(fx.broker, 'TxCheck')).length === 1, 10_000);
    expect(checked[0]?.topic).toBe('TxCheck');
    expect(checked[0]?.transactionId).toBe(r.msgId);
    await fx.broker.transactionalMessageService.check();
    await fx.broker.transactionalMessageService.check();
    expect(await delivered(fx.broker, 'TxCheck')).toHaveLength(1);
    expect(fx.broker.transactionalMessageService.pendingCount).toBe(0);
  });

  it('a producer gone before deciding: another member of its group answers the check', async () => {
    const fx = await startBroker({ remotingPort: 0, ...QUIET, transactionCheckInterval: 3_600_000 });
    cleanup.push(() => fx.close());
    const a = producerOn(fx, 'tcp', 'tx-group', listener(LocalTransactionState.UNKNOW), { instanceName: 'a' });
    const checkedByB: MessageExt[] = [];
    const b = producerOn(
      fx,
      'tcp',
      'tx-group',
      listener(LocalTransactionState.UNKNOW, LocalTransactionState.COMMIT_MESSAGE, checkedByB),
      { instanceName: 'b' },
    );
    cleanup.push(() => b.shutdown());
    await a.start();
    await b.start();
    await a.sendMessageInTransaction({ topic: 'TxGroup', body: Buffer.from('orphan') });
    await a.shutdown();
    await waitFor(async () => {
      await fx.broker.transactionalMessageService.check();
      return (await delivered(fx.broker, 'TxGroup')).length === 1;
    }, 10_000);
    // The test asks the broker to check again while an answer may still be on its way, so B may be
    // asked more than once; every check is about the orphan, and it is delivered once.
    expect(checkedByB.length).toBeGreaterThanOrEqual(1);
    expect(new Set(checkedByB.map((m) => m.body?.toString()))).toEqual(new Set(['orphan']));
    await fx.broker.transactionalMessageService.check();
    expect(await delivered(fx.broker, 'TxGroup')).toHaveLength(1);
  });

  it('a broker restart: resolved halves stay resolved, a pending one is checked again', async () => {
    const storePath = tempStorePath();
    cleanup.push(async () => rmSync(storePath, { recursive: true, force: true }));
    const opts = { storePath, remotingPort: 0, ...QUIET, transactionCheckInterval: 3_600_000 };
    const fx1 = await startBroker(opts);
    const p1 = producerOn(fx1, 'tcp', 'tx-restart', listener(LocalTransactionState.COMMIT_MESSAGE));
    await p1.start();
    await p1.sendMessageInTransaction({ topic: 'TxRestart', body: Buffer.from('one') });
    p1.transactionListener.executeLocalTransaction = () => LocalTransactionState.ROLLBACK_MESSAGE;
    await p1.sendMessageInTransaction({ topic: 'TxRestart', body: Buffer.from('never') });
    p1.transactionListener.executeLocalTransaction = () => LocalTransactionState.UNKNOW;
    const pending = await p1.sendMessageInTransaction({ topic: 'TxRestart', body: Buffer.from('two') });
    await waitFor(async () => (await delivered(fx1.broker, 'TxRestart')).length === 1);
    await waitFor(() => fx1.broker.transactionalMessageService.pendingCount === 1);
    await p1.shutdown();
    await fx1.broker.shutdown();

    const fx2 = await startBroker(opts);
    cleanup.push(() => fx2.close());
    expect(fx2.broker.transactionalMessageService.pendingCount).toBe(1);
    const checked: MessageExt[] = [];
    const p2 = producerOn(
      fx2,
      'tcp',
      'tx-restart',
      listener(LocalTransactionState.UNKNOW, LocalTransactionState.COMMIT_MESSAGE, checked),
    );
    cleanup.push(() => p2.shutdown());
    await p2.start();
    await waitFor(async () => {
      await fx2.broker.transactionalMessageService.check();
      return (await delivered(fx2.broker, 'TxRestart')).length === 2;
    }, 10_000);
    // Checked only about the pending one (perhaps more than once, while its answer was on its way).
    expect(new Set(checked.map((m) => m.transactionId))).toEqual(new Set([pending.msgId]));
    await fx2.broker.transactionalMessageService.check();
    const bodies = (await delivered(fx2.broker, 'TxRestart')).map((m) => m.body?.toString()).sort();
    expect(bodies).toEqual(['one', 'two']);
  });
});

describe('END_TRANSACTION refusals', () => {
  let fx: BrokerFixture;
  beforeEach(async () => {
    fx = await startBroker({ transactionCheckInterval: 3_600_000 });
  });
  afterEach(() => fx.close());

  const half = async (group: string): Promise<{ queueOffset: number; commitLogOffset: number }> => {
    const props = { TRAN_MSG: 'true', PGROUP: group, UNIQ_KEY: `K${Math.random()}` };
    const a = await fx.client.call(
      'SEND_MESSAGE',
      {
        producerGroup: group,
        topic: 'TxBad',
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: 4,
        queueId: 1,
        sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE,
        bornTimestamp: Date.now(),
        flag: 0,
        properties: messageProperties2String(props),
      },
      Buffer.from('b'),
    );
    expect(a.code).toBe(0);
    const h = a.header as { queueOffset: number; msgId: string; queueId: number };
    expect(h.queueId).toBe(1);
    const { decodeMessageId } = await import('../../../src/common/codec/index.js');
    return { queueOffset: Number(h.queueOffset), commitLogOffset: decodeMessageId(h.msgId).offset };
  };
  const end = (group: string, o: { queueOffset: number; commitLogOffset: number }, type: number) =>
    fx.client.call('END_TRANSACTION', {
      producerGroup: group,
      tranStateTableOffset: o.queueOffset,
      commitLogOffset: o.commitLogOffset,
      commitOrRollback: type,
      msgId: 'm',
    });

  it('answers SYSTEM_ERROR with a remark naming the problem, and delivers nothing twice', async () => {
    const o = await half('g1');
    expect(await end('g2', o, 8)).toMatchObject({ code: 1, remark: 'The producer group wrong' });
    expect(await end('g1', { ...o, queueOffset: o.queueOffset + 5 }, 8)).toMatchObject({
      code: 1,
      remark: 'The transaction state table offset wrong',
    });
    expect(await end('g1', { ...o, commitLogOffset: o.commitLogOffset + 123_456 }, 8)).toMatchObject({
      code: 1,
      remark: 'Find prepared transaction message failed',
    });
    expect((await end('g1', o, 5)).code).toBe(1);
    expect(await delivered(fx.broker, 'TxBad')).toHaveLength(0);
    expect((await end('g1', o, 8)).code).toBe(0);
    expect(await end('g1', o, 8)).toMatchObject({ code: 1, remark: expect.stringMatching(/already committed/) });
    expect(await end('g1', o, 12)).toMatchObject({ code: 1, remark: expect.stringMatching(/already committed/) });
    const msgs = await delivered(fx.broker, 'TxBad');
    expect(msgs).toHaveLength(1);
    expect(msgs[0]?.queueId).toBe(1);
    // The committed message's own offsets are not a half message.
    const real = msgs[0] as MessageExt;
    expect(await end('g1', { queueOffset: real.queueOffset, commitLogOffset: real.commitLogOffset }, 8)).toMatchObject({
      code: 1,
      remark: expect.stringMatching(/not a half message/),
    });
    // A prepared sysFlag without TRAN_MSG is refused rather than stored out of sight.
    const bare = await fx.client.call(
      'SEND_MESSAGE',
      {
        producerGroup: 'g1',
        topic: 'TxBad',
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: 4,
        queueId: 0,
        sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE,
        bornTimestamp: Date.now(),
        flag: 0,
        properties: '',
      },
      Buffer.from('b'),
    );
    expect(bare.code).toBe(13);
  });

  it('rejectTransactionMessage refuses a transactional send with NO_PERMISSION', async () => {
    await fx.close();
    fx = await startBroker({ rejectTransactionMessage: true });
    const a = await fx.client.send('TxBad', 'b', { properties: { TRAN_MSG: 'true', PGROUP: 'g' } });
    expect(a).toMatchObject({ code: 16, remark: expect.stringMatching(/sending transaction message is forbidden/) });
  });
});
