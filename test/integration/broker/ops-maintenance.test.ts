/**
 * mqadmin's hand-triggered maintenance over the broker's TCP remoting port: DELETE_EXPIRED_COMMITLOG runs
 * retention now, CLEAN_EXPIRED_CONSUMEQUEUE deletes the consume queues whose messages are all gone,
 * CLEAN_UNUSED_TOPIC deletes the consume queues of topics without a config; and RESUME_CHECK_HALF_MESSAGE
 * puts a half message given up after too many checks back, so its check-back resumes and a commit
 * delivers it once. Each on a broker of its own (small commit-log segments kept for no time; manual
 * transaction checks).
 */
import { decodeMessage, messageProperties2String, MessageSysFlag } from '../../../src/common/codec/index.js';
import type { MessageExt } from '../../../src/common/message.js';
import { rmSync } from 'node:fs';
import { Broker } from '../../../src/broker/index.js';
import { LocalTransactionState, TransactionProducer } from '../../../src/index.js';
import { RequestCode } from '../../../src/protocol/request-code.js';
import { ResponseCode } from '../../../src/protocol/response-code.js';
import { uniqueName } from '../../support/broker-client.js';
import { startBroker, tempStorePath, waitFor, type BrokerFixture } from '../../support/broker-fixture.js';
import { RemotingTestClient } from '../../support/remoting-test-client.js';

/** Every message stored on the topic's queues. */
async function stored(broker: Broker, topic: string): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  for (let q = 0; q < 8; q++) {
    if (broker.store.getMaxOffsetInQueue(topic, q) === 0) continue;
    const r = await broker.store.getMessage('t', topic, q, broker.store.getMinOffsetInQueue(topic, q), 100, null);
    for (const b of r.messages) out.push(decodeMessage(b, 0).message);
  }
  return out;
}

describe('store maintenance', () => {
  let fx: BrokerFixture;
  let c: RemotingTestClient;
  beforeAll(async () => {
    fx = await startBroker({ remotingPort: 0, store: { mappedFileSizeCommitLog: 4096, fileReservedTimeHours: 0 } });
    c = await RemotingTestClient.connect(fx.broker.remotingAddress as string);
  });
  afterAll(async () => {
    await c?.close();
    await fx?.close();
  });

  test('DELETE_EXPIRED_COMMITLOG deletes expired segments now; CLEAN_EXPIRED_CONSUMEQUEUE then deletes the queues left with nothing', async () => {
    const old = uniqueName('OldT');
    const live = uniqueName('LiveT');
    const body = Buffer.alloc(600, 7);
    // A half message, in the oldest segment too: the transaction topics keep their queues (their progress).
    const half = await fx.client.call(
      'SEND_MESSAGE',
      {
        producerGroup: 'pg',
        topic: old,
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: 4,
        queueId: 0,
        sysFlag: MessageSysFlag.TRANSACTION_PREPARED_TYPE,
        bornTimestamp: Date.now(),
        flag: 0,
        properties: messageProperties2String({ TRAN_MSG: 'true', PGROUP: 'pg' }),
      },
      body,
    );
    expect(half.code).toBe(ResponseCode.SUCCESS);
    expect(fx.broker.store.getMaxOffsetInQueue('RMQ_SYS_TRANS_HALF_TOPIC', 0)).toBe(1);
    for (let i = 0; i < 3; i++) expect((await fx.client.send(old, body)).code).toBe(ResponseCode.SUCCESS);
    for (let i = 0; i < 30; i++) expect((await fx.client.send(live, body)).code).toBe(ResponseCode.SUCCESS);
    const store = fx.broker.store;
    expect(store.getCommitLogMinOffset()).toBe(0);
    // Segments count as expired once their last write is in the past (fileReservedTimeHours 0).
    await waitFor(async () => {
      const r = await c.request(RequestCode.DELETE_EXPIRED_COMMITLOG, {});
      expect([r.code, r.remark]).toEqual([ResponseCode.SUCCESS, null]);
      return store.getCommitLogMinOffset() > 0;
    }, 20_000);
    // The old topic's messages are all gone, but its queue still says where it ended.
    expect(store.getMaxOffsetInQueue(old, 0)).toBe(3);
    expect(store.getMinOffsetInQueue(live, 0)).toBeGreaterThan(0);
    const liveMax = store.getMaxOffsetInQueue(live, 0);

    const r = await c.request(RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, {});
    expect([r.code, r.remark]).toEqual([ResponseCode.SUCCESS, null]);
    expect(store.getMaxOffsetInQueue(old, 0)).toBe(0);
    expect(store.getMaxOffsetInQueue(live, 0)).toBe(liveMax);
    expect(store.getMaxOffsetInQueue('RMQ_SYS_TRANS_HALF_TOPIC', 0)).toBe(1);
    // The deleted queue starts again at offset 0, as on RocketMQ.
    const again = await fx.client.send(old, 'again');
    expect(again.header.queueOffset).toBe(0);
  }, 60_000);

  test('CLEAN_UNUSED_TOPIC deletes the consume queues of topics without a config, and only those', async () => {
    const unused = uniqueName('UnusedT');
    const used = uniqueName('UsedT');
    await fx.client.send(unused, 'x');
    await fx.client.send(used, 'x');
    expect(fx.broker.topicConfigManager.deleteTopicConfig(unused)).toBe(true);
    expect(fx.broker.store.getMaxOffsetInQueue(unused, 0)).toBe(1);
    const r = await c.request(RequestCode.CLEAN_UNUSED_TOPIC, {});
    expect([r.code, r.remark]).toEqual([ResponseCode.SUCCESS, null]);
    expect(fx.broker.store.getMaxOffsetInQueue(unused, 0)).toBe(0);
    expect(fx.broker.store.getMaxOffsetInQueue(used, 0)).toBe(1);
    expect(fx.broker.store.getMaxOffsetInQueue('SCHEDULE_TOPIC_XXXX', 0)).toBeGreaterThanOrEqual(0);
  });
});

describe('RESUME_CHECK_HALF_MESSAGE', () => {
  let fx: BrokerFixture;
  let c: RemotingTestClient;
  let producer: TransactionProducer | undefined;
  beforeAll(async () => {
    fx = await startBroker({
      remotingPort: 0,
      transactionTimeOut: 0,
      transactionCheckInterval: 3_600_000,
      transactionCheckMax: 1,
    });
    c = await RemotingTestClient.connect(fx.broker.remotingAddress as string);
  });
  afterAll(async () => {
    await producer?.shutdown();
    await c?.close();
    await fx?.close();
  });

  test('a half message given up after too many checks is checked again and its commit delivered once; bad ids refused', async () => {
    const topic = uniqueName('ResumeT');
    let decision: LocalTransactionState = LocalTransactionState.UNKNOW;
    let checks = 0;
    producer = new TransactionProducer({
      producerGroup: uniqueName('ResumeP'),
      namesrvAddr: fx.broker.remotingAddress ?? '',
      transactionListener: {
        executeLocalTransaction: () => LocalTransactionState.UNKNOW,
        checkLocalTransaction: () => {
          checks += 1;
          return decision;
        },
      },
    });
    await producer.start();
    const sent = await producer.sendMessageInTransaction({ topic, body: Buffer.from('order-1') }, null);
    expect(sent.localTransactionState).toBe('UNKNOW');
    const tx = fx.broker.transactionalMessageService;
    // First check: asked once, still unknown. Second: checked transactionCheckMax times, given up.
    await tx.check();
    await waitFor(() => checks === 1, 10_000);
    await tx.check();
    expect(tx.pendingCount).toBe(0);
    const [givenUp] = await stored(fx.broker, 'TRANS_CHECK_MAX_TIME_TOPIC');
    expect(givenUp).toBeDefined();
    expect(await stored(fx.broker, topic)).toEqual([]);

    decision = LocalTransactionState.COMMIT_MESSAGE;
    const resume = await c.request(RequestCode.RESUME_CHECK_HALF_MESSAGE, { msgId: givenUp?.offsetMsgId ?? '' });
    expect([resume.code, resume.remark]).toEqual([ResponseCode.SUCCESS, null]);
    expect(tx.pendingCount).toBe(1);
    await tx.check();
    await waitFor(async () => (await stored(fx.broker, topic)).length === 1, 10_000);
    expect(tx.pendingCount).toBe(0);
    expect((await stored(fx.broker, topic))[0]?.body?.toString()).toBe('order-1');

    // Committed now: resuming it again is refused, and nothing more is delivered.
    const twice = await c.request(RequestCode.RESUME_CHECK_HALF_MESSAGE, { msgId: givenUp?.offsetMsgId ?? '' });
    expect(twice.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(twice.remark).toMatch(
      /^Exception was thrown when putting message back to RMQ_SYS_TRANS_HALF_TOPIC\. the transaction of message \S+ was already committed$/,
    );
    await tx.check();
    expect(await stored(fx.broker, topic)).toHaveLength(1);

    const [delivered] = await stored(fx.broker, topic);
    const notHalf = await c.request(RequestCode.RESUME_CHECK_HALF_MESSAGE, { msgId: delivered?.offsetMsgId ?? '' });
    expect(notHalf.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(notHalf.remark).toContain(`the message is in topic ${topic}, not a half message`);
    const far = (delivered?.offsetMsgId ?? '').slice(0, 16) + '00000000FFFFFFFF';
    const missing = await c.request(RequestCode.RESUME_CHECK_HALF_MESSAGE, { msgId: far });
    expect(missing.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(missing.remark).toContain(`No message with the offset id ${far}`);
    const garbled = await c.request(RequestCode.RESUME_CHECK_HALF_MESSAGE, { msgId: 'zz' });
    expect(garbled.code).toBe(ResponseCode.SYSTEM_ERROR);
    const none = await c.request(RequestCode.RESUME_CHECK_HALF_MESSAGE, {});
    expect(none.code).toBe(ResponseCode.SYSTEM_ERROR);
    expect(none.remark).toContain('msgId');
  }, 60_000);

  test('a half message given up before a restart can be resumed after it, and stays pending across the next, behind an older pending one', async () => {
    const storePath = tempStorePath('rmq-resume-');
    const options = {
      storePath,
      port: 0,
      remotingPort: 0,
      transactionTimeOut: 0,
      transactionCheckInterval: 3_600_000,
      transactionCheckMax: 1,
    };
    let broker = await Broker.start(options);
    let p: TransactionProducer | undefined;
    try {
      let checks = 0;
      p = new TransactionProducer({
        producerGroup: uniqueName('RestartP'),
        namesrvAddr: broker.remotingAddress ?? '',
        transactionListener: {
          executeLocalTransaction: () => LocalTransactionState.UNKNOW,
          checkLocalTransaction: () => {
            checks += 1;
            return LocalTransactionState.UNKNOW;
          },
        },
      });
      await p.start();
      const topic = uniqueName('RestartT');
      // An older transaction not checked for an hour keeps the half queue's progress behind the resumed one.
      await p.sendMessageInTransaction(
        { topic, body: Buffer.from('older'), properties: { CHECK_IMMUNITY_TIME_IN_SECONDS: '3600' } },
        null,
      );
      await p.sendMessageInTransaction({ topic, body: Buffer.from('x') }, null);
      await broker.transactionalMessageService.check();
      await waitFor(() => checks === 1, 10_000);
      await broker.transactionalMessageService.check();
      expect(broker.transactionalMessageService.pendingCount).toBe(1);
      await p.shutdown();
      p = undefined;
      const [givenUp] = await stored(broker, 'TRANS_CHECK_MAX_TIME_TOPIC');
      // Given up before a restart: still known as given up (not decided) after it, so it may be resumed.
      await broker.shutdown();
      broker = await Broker.start(options);
      expect(broker.transactionalMessageService.pendingCount).toBe(1);
      const rc = await RemotingTestClient.connect(broker.remotingAddress as string);
      const resume = await rc.request(RequestCode.RESUME_CHECK_HALF_MESSAGE, { msgId: givenUp?.offsetMsgId ?? '' });
      await rc.close();
      expect(resume.code).toBe(ResponseCode.SUCCESS);
      await broker.shutdown();
      broker = await Broker.start(options);
      expect(broker.transactionalMessageService.pendingCount).toBe(2);
    } finally {
      await p?.shutdown();
      await broker.shutdown();
      rmSync(storePath, { recursive: true, force: true });
    }
  }, 60_000);
});
