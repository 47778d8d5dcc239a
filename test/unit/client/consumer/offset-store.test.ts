import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { LocalFileOffsetStore } from '../../../../src/client/consumer/local-file-offset-store.js';
import { ReadOffsetType } from '../../../../src/client/consumer/offset-store.js';
import {
  OFFSET_CALL_CONCURRENCY,
  RemoteBrokerOffsetStore,
  UNCHANGED_OFFSET_RESEND_MS,
} from '../../../../src/client/consumer/remote-broker-offset-store.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { messageQueueKey, type MessageQueue } from '../../../../src/common/message.js';
import { MQClientAPI } from '../../../../src/client/instance/mq-client-api.js';
import { computePullFromWhere } from '../../../../src/client/consumer/compute-pull-from-where.js';
import { ConsumeFromWhere } from '../../../../src/client/consumer/consumer-constants.js';
import { ResponseCode } from '../../../../src/protocol/index.js';
import type { RemotingClient } from '../../../../src/remoting/remoting-client.js';
import { mqOf } from '../helpers.js';

function remote(broker = new Map<string, number>(), failQuery = false) {
  const updates: [number, number][] = [];
  const store = new RemoteBrokerOffsetStore(
    {
      queryConsumerOffset: async (mq: MessageQueue) => {
        if (failQuery) throw new Error('down');
        return broker.get(messageQueueKey(mq)) ?? -1;
      },
      updateConsumerOffset: async (mq: MessageQueue, offset: number) => {
        updates.push([mq.queueId, offset]);
        broker.set(messageQueueKey(mq), offset);
      },
    },
    silentLogger,
  );
  return { store, updates, broker };
}

describe('RemoteBrokerOffsetStore (RocketMQ: RemoteBrokerOffsetStore)', () => {
  const q0 = mqOf(0);
  const q1 = mqOf(1);

  it('increaseOnly never moves backwards; a plain update overwrites', () => {
    const { store } = remote();
    store.updateOffset(q0, 10, true);
    store.updateOffset(q0, 5, true);
    expect(store.readOffsetFromMemory(q0)).toBe(10);
    store.updateOffset(q0, 5, false);
    expect(store.readOffsetFromMemory(q0)).toBe(5);
  });

  it('a frozen offset ignores updates until removed', () => {
    const { store } = remote();
    store.updateAndFreezeOffset(q0, 7);
    store.updateOffset(q0, 100, true);
    expect(store.readOffsetFromMemory(q0)).toBe(7);
    store.removeOffset(q0);
    expect(store.readOffsetFromMemory(q0)).toBe(-1);
    store.updateOffset(q0, 100, true);
    expect(store.readOffsetFromMemory(q0)).toBe(100);
  });

  it('readOffset: MEMORY gives -1 when unknown; STORE asks the broker, caches, gives -1 on not found and -2 on error', async () => {
    const { store, broker } = remote();
    await expect(store.readOffset(q0, ReadOffsetType.READ_FROM_MEMORY)).resolves.toBe(-1);
    await expect(store.readOffset(q0, ReadOffsetType.READ_FROM_STORE)).resolves.toBe(-1);
    broker.set(messageQueueKey(q0), 33);
    await expect(store.readOffset(q0, ReadOffsetType.READ_FROM_STORE)).resolves.toBe(33);
    await expect(store.readOffset(q0, ReadOffsetType.READ_FROM_MEMORY)).resolves.toBe(33);
    store.updateOffset(q0, 40, true);
    await expect(store.readOffset(q0, ReadOffsetType.MEMORY_FIRST_THEN_STORE)).resolves.toBe(40);
    const failing = remote(new Map(), true);
    await expect(failing.store.readOffset(q0, ReadOffsetType.READ_FROM_STORE)).resolves.toBe(-2);
  });

  it('persistAll sends the offsets of the given queues and forgets the others', async () => {
    const { store, updates } = remote();
    store.updateOffset(q0, 1, true);
    store.updateOffset(q1, 2, true);
    await store.persistAll([q0]);
    expect(updates).toEqual([[0, 1]]);
    expect(store.readOffsetFromMemory(q1)).toBe(-1);
    // A forgotten queue starts afresh: its old offset (2) does not come back through a later update.
    store.updateOffset(q1, 1, true);
    expect(store.readOffsetFromMemory(q1)).toBe(1);
  });

  it('persistAll and persist send oneway and skip unchanged offsets; flushAll and flush await the broker', async () => {
    const calls: [number, number, boolean][] = [];
    let now = 1000;
    const store = new RemoteBrokerOffsetStore(
      {
        queryConsumerOffset: async () => -1,
        updateConsumerOffset: async (mq, offset, oneway) => void calls.push([mq.queueId, offset, oneway]),
      },
      silentLogger,
      () => {},
      () => {},
      () => now,
    );
    store.updateOffset(q0, 5, true);
    store.updateOffset(q1, 7, true);
    await store.persistAll([q0, q1]);
    expect(calls).toEqual([
      [0, 5, true],
      [1, 7, true],
    ]);
    // Nothing moved: the periodic write sends nothing; q1 moves and is the only one sent.
    store.updateOffset(q1, 8, true);
    await store.persistAll([q0, q1]);
    expect(calls.slice(2)).toEqual([[1, 8, true]]);
    // An unchanged offset is sent again once UNCHANGED_OFFSET_RESEND_MS has passed.
    now += UNCHANGED_OFFSET_RESEND_MS;
    await store.persistAll([q0]);
    expect(calls.slice(3)).toEqual([[0, 5, true]]);
    // persist (queue removal) and the awaited variants always send.
    await store.persist(q0);
    await store.flush(q0);
    await store.flushAll([q0]);
    expect(calls.slice(4)).toEqual([
      [0, 5, true],
      [0, 5, false],
      [0, 5, false],
    ]);
  });

  it(`offset reads and flushed writes run at most ${OFFSET_CALL_CONCURRENCY} at a time`, async () => {
    let active = 0;
    let peak = 0;
    const slow = async <T>(v: T): Promise<T> => {
      active++;
      peak = Math.max(peak, active);
      await new Promise((r) => setImmediate(r));
      active--;
      return v;
    };
    const store = new RemoteBrokerOffsetStore(
      { queryConsumerOffset: () => slow(3), updateConsumerOffset: () => slow(undefined) },
      silentLogger,
    );
    const queues = Array.from({ length: 200 }, (_, i) => mqOf(i));
    const read = await Promise.all(queues.map((q) => store.readOffset(q, ReadOffsetType.READ_FROM_STORE)));
    expect(read.every((o) => o === 3)).toBe(true);
    expect(peak).toBe(OFFSET_CALL_CONCURRENCY);
    peak = 0;
    await store.flushAll(queues);
    expect(peak).toBe(OFFSET_CALL_CONCURRENCY);
  });

  it('a flushed write waits for the oneway writes of its queue still on their way (none lands after it)', async () => {
    const landed: [number, number][] = [];
    const pending: (() => void)[] = [];
    const store = new RemoteBrokerOffsetStore(
      {
        queryConsumerOffset: async () => -1,
        // A oneway write is answered only when the test says so (an HTTP request on a slow connection).
        updateConsumerOffset: (mq, offset, oneway) =>
          oneway
            ? new Promise<void>((resolve) => pending.push(() => (landed.push([mq.queueId, offset]), resolve())))
            : Promise.resolve(void landed.push([mq.queueId, offset])),
      },
      silentLogger,
    );
    store.updateOffset(q0, 5, true);
    store.updateOffset(q1, 3, true);
    const periodic = store.persistAll([q0, q1]);
    store.updateOffset(q0, 9, true);
    let flushed = false;
    const final = store.flush(q0).then(() => (flushed = true));
    // q1's write is unrelated and does not hold q0's flush back; q0's older write does.
    await new Promise((r) => setImmediate(r));
    expect(flushed).toBe(false);
    pending[1]?.();
    await new Promise((r) => setImmediate(r));
    expect(flushed).toBe(false);
    pending[0]?.();
    await final;
    await periodic;
    expect(landed).toEqual([
      [1, 3],
      [0, 5],
      [0, 9],
    ]);
  });

  it('a failed update is logged, not thrown', async () => {
    const errors: unknown[] = [];
    const store = new RemoteBrokerOffsetStore(
      {
        queryConsumerOffset: async () => -1,
        updateConsumerOffset: async () => {
          throw new Error('down');
        },
      },
      silentLogger,
      () => {},
      (_mq, err) => errors.push(err),
    );
    store.updateOffset(q0, 1, true);
    await expect(store.persist(q0)).resolves.toBeUndefined();
    expect(errors).toHaveLength(1);
  });

  it('flush and flushAll say which offsets the broker did not take', async () => {
    const store = new RemoteBrokerOffsetStore(
      {
        queryConsumerOffset: async () => -1,
        updateConsumerOffset: async (mq) => {
          if (mq.queueId === 1) throw new Error('timed out');
        },
      },
      silentLogger,
    );
    store.updateOffset(q0, 4, true);
    store.updateOffset(q1, 6, true);
    await expect(store.flush(q0)).resolves.toBe(true);
    await expect(store.flush(q1)).resolves.toBe(false);
    await expect(store.flushAll([q0, q1])).resolves.toEqual([q1]);
    // Nothing cached for the queue: nothing to write, nothing failed.
    await expect(store.flush(mqOf(7))).resolves.toBe(true);
  });
});

describe('LocalFileOffsetStore (BROADCASTING; written atomically, .bak fallback)', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'rmq-offsets-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('persists and loads offsets; unknown queues read -1', async () => {
    const a = new LocalFileOffsetStore(dir, '10.0.0.1@DEFAULT', 'g', silentLogger);
    a.updateOffset(mqOf(0), 12, true);
    a.updateOffset(mqOf(1), 34, true);
    await a.persistAll([mqOf(0), mqOf(1)]);
    expect(a.filePath).toBe(path.join(dir, '10.0.0.1@DEFAULT', 'g', 'offsets.json'));
    const b = new LocalFileOffsetStore(dir, '10.0.0.1@DEFAULT', 'g', silentLogger);
    await expect(b.readOffset(mqOf(0), ReadOffsetType.READ_FROM_STORE)).resolves.toBe(12);
    await expect(b.readOffset(mqOf(5), ReadOffsetType.READ_FROM_STORE)).resolves.toBe(-1);
    await b.load();
    expect(b.readOffsetFromMemory(mqOf(1))).toBe(34);
  });

  it('keeps a .bak and reads it when the main file is corrupt', async () => {
    const a = new LocalFileOffsetStore(dir, 'c', 'g', silentLogger);
    a.updateOffset(mqOf(0), 1, true);
    await a.persistAll([mqOf(0)]);
    a.updateOffset(mqOf(0), 2, true);
    await a.persistAll([mqOf(0)]);
    expect(JSON.parse(await readFile(`${a.filePath}.bak`, 'utf8'))).toEqual({
      offsets: [{ topic: 'T', brokerName: 'b', queueId: 0, offset: 1 }],
    });
    await writeFile(a.filePath, '{not json');
    const b = new LocalFileOffsetStore(dir, 'c', 'g', silentLogger);
    await expect(b.readOffset(mqOf(0), ReadOffsetType.READ_FROM_STORE)).resolves.toBe(1);
  });

  it('persist(mq) merges one queue into the file', async () => {
    const a = new LocalFileOffsetStore(dir, 'c', 'g', silentLogger);
    a.updateOffset(mqOf(0), 5, true);
    a.updateOffset(mqOf(1), 6, true);
    await a.persistAll([mqOf(0)]);
    await a.persist(mqOf(1));
    const b = new LocalFileOffsetStore(dir, 'c', 'g', silentLogger);
    await b.load();
    expect(b.readOffsetFromMemory(mqOf(0))).toBe(5);
    expect(b.readOffsetFromMemory(mqOf(1))).toBe(6);
  });

  it('path components cannot escape the directory', () => {
    const a = new LocalFileOffsetStore(dir, '../../etc', '..', silentLogger);
    expect(a.filePath.startsWith(dir)).toBe(true);
    expect(path.relative(dir, a.filePath).split(path.sep)).toEqual(['.._.._etc', '__', 'offsets.json']);
  });
});

describe('a store read error is not "no offset" (beyond RocketMQ 4.9.8, which starts a queue over on SYSTEM_BUSY)', () => {
  /** The push consumer's chain: QUERY_CONSUMER_OFFSET answered `code` → offset store → where the queue starts. */
  async function startOffset(code: number): Promise<number> {
    const remoting = {
      invoke: async () => ({ code, remark: 'answered by the test', header: { offset: 7 }, opaque: 0 }),
    } as unknown as RemotingClient;
    const api = new MQClientAPI(remoting, { requestTimeoutMs: 1000 });
    const store = new RemoteBrokerOffsetStore(
      {
        queryConsumerOffset: (mq) =>
          api.queryConsumerOffset('broker', { consumerGroup: 'g', topic: mq.topic, queueId: mq.queueId }),
        updateConsumerOffset: async () => {},
      },
      silentLogger,
    );
    return computePullFromWhere(mqOf(0), {
      consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
      consumeTimestamp: '20240101000000',
      readOffsetFromStore: (mq) => store.readOffset(mq, ReadOffsetType.READ_FROM_STORE),
      maxOffset: async () => 100,
      searchOffset: async () => 0,
    });
  }

  it('QUERY_NOT_FOUND is "no offset": the queue starts where consumeFromWhere says', async () => {
    await expect(startOffset(ResponseCode.QUERY_NOT_FOUND)).resolves.toBe(0);
  });

  it('SUCCESS gives the stored offset', async () => {
    await expect(startOffset(ResponseCode.SUCCESS)).resolves.toBe(7);
  });

  it.each([
    ['SYSTEM_BUSY', ResponseCode.SYSTEM_BUSY],
    ['SYSTEM_ERROR', ResponseCode.SYSTEM_ERROR],
  ])(
    '%s is a read error: the queue is not started this round (no offset guessed, nothing re-consumed)',
    async (_n, code) => {
      await expect(startOffset(code)).rejects.toThrow(/reading the stored offset/);
    },
  );
});
