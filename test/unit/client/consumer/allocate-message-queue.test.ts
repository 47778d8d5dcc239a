import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import {
  AllocateMessageQueueAveragely,
  AllocateMessageQueueAveragelyByCircle,
  AllocateMessageQueueConsistentHash,
  IllegalArgumentError,
  consistentHashMd5,
  messageQueueToString,
  type AllocateMessageQueueStrategy,
} from '../../../../src/client/consumer/allocate-message-queue.js';
import { md5Hex } from '../../../../src/common/md5.js';
import type { MessageQueue } from '../../../../src/common/message.js';
import { vectorPath } from '../../../support/vectors.js';

interface AllocateCase {
  strategy: 'AVG' | 'AVG_BY_CIRCLE' | 'CONSISTENT_HASH';
  virtualNodeCnt?: number;
  consumerGroup: string;
  currentCID: string | null;
  mqAll: MessageQueue[] | null;
  cidAll: (string | null)[] | null;
  result: MessageQueue[] | 'error';
  error?: string;
  group: string;
}

const data = JSON.parse(readFileSync(vectorPath('allocate-sample.json'), 'utf8')) as {
  cases: AllocateCase[];
  consistentHashMd5Vectors: { key: string; hash: number }[];
};

function strategyOf(c: AllocateCase): AllocateMessageQueueStrategy {
  switch (c.strategy) {
    case 'AVG':
      return new AllocateMessageQueueAveragely();
    case 'AVG_BY_CIRCLE':
      return new AllocateMessageQueueAveragelyByCircle();
    case 'CONSISTENT_HASH':
      return new AllocateMessageQueueConsistentHash(c.virtualNodeCnt);
  }
}

const mq = (queueId: number, topic = 'T', brokerName = 'b'): MessageQueue => ({ topic, brokerName, queueId });
const mqs = (n: number): MessageQueue[] => Array.from({ length: n }, (_, i) => mq(i));
const ids = (r: MessageQueue[]): number[] => r.map((q) => q.queueId);

describe('allocation vectors (RocketMQ: AllocateMessageQueue* results)', () => {
  it.each(data.cases.map((c, i) => [`${i} ${c.strategy} ${c.group}`, c] as const))('%s', (_n, c) => {
    const run = (): MessageQueue[] => strategyOf(c).allocate(c.consumerGroup, c.currentCID, c.mqAll, c.cidAll);
    if (c.result === 'error') {
      const message = (c.error ?? '').replace(/^[A-Za-z]+: /, '');
      expect(run).toThrow(IllegalArgumentError);
      expect(run).toThrow(message);
    } else {
      expect(run()).toEqual(c.result);
    }
  });
});

describe('consistent-hash MD5 (RocketMQ: ConsistentHashRouter.MD5Hash)', () => {
  it.each(data.consistentHashMd5Vectors.map((v) => [JSON.stringify(v.key), v] as const))('%s', (_n, v) => {
    expect(consistentHashMd5(v.key)).toBe(v.hash);
  });

  it('pure md5 equals node:crypto for many lengths', () => {
    for (let len = 0; len < 300; len++) {
      const buf = Buffer.alloc(len, 0);
      for (let i = 0; i < len; i++) buf[i] = (i * 31 + len) & 0xff;
      expect(md5Hex(buf)).toBe(createHash('md5').update(buf).digest('hex'));
    }
    const s = Buffer.from('MessageQueue [topic=日本, brokerName=b, queueId=3]', 'utf8');
    expect(md5Hex(s)).toBe(createHash('md5').update(s).digest('hex'));
  });

  it('hashes an unpaired surrogate as Java does (written as ?)', () => {
    expect(consistentHashMd5('a\uD800b')).toBe(consistentHashMd5('a?b'));
  });

  it('queue key is Java MessageQueue.toString()', () => {
    expect(messageQueueToString(mq(3, 'TopicA', 'broker-a'))).toBe(
      'MessageQueue [topic=TopicA, brokerName=broker-a, queueId=3]',
    );
  });
});

describe('allocation edge cases (RocketMQ: AbstractAllocateMessageQueueStrategy.check)', () => {
  const all = [
    new AllocateMessageQueueAveragely(),
    new AllocateMessageQueueAveragelyByCircle(),
    new AllocateMessageQueueConsistentHash(),
  ];
  it.each(all.map((s) => [s.getName(), s] as const))('%s: checks in RocketMQ order', (_n, s) => {
    expect(() => s.allocate('g', '', null, null)).toThrow('currentCID is empty');
    expect(() => s.allocate('g', null, mqs(1), ['a'])).toThrow('currentCID is empty');
    expect(() => s.allocate('g', undefined, mqs(1), ['a'])).toThrow('currentCID is empty');
    expect(() => s.allocate('g', 'a', [], null)).toThrow('mqAll is null or mqAll empty');
    expect(() => s.allocate('g', 'a', undefined, [])).toThrow('mqAll is null or mqAll empty');
    expect(() => s.allocate('g', 'a', mqs(1), [])).toThrow('cidAll is null or cidAll empty');
    expect(() => s.allocate('g', 'a', mqs(1), null)).toThrow('cidAll is null or cidAll empty');
    try {
      s.allocate('g', '', null, null);
    } catch (e) {
      expect((e as IllegalArgumentError).message).toBe('currentCID is empty');
      expect((e as IllegalArgumentError).code).toBe('ERR_INVALID_ARGUMENT');
    }
  });
  it.each(all.map((s) => [s.getName(), s] as const))('%s: an unknown client id gets nothing', (_n, s) => {
    expect(s.allocate('g', 'x', mqs(8), ['a', 'b'])).toEqual([]);
    expect(s.allocate('g', 'A', mqs(8), ['a'])).toEqual([]);
  });

  it('AVG: 8 queues over 3 consumers gives [0,1,2] [3,4,5] [6,7]; 2 over 3 gives [0] [1] []', () => {
    const s = new AllocateMessageQueueAveragely();
    const cids = ['c0', 'c1', 'c2'];
    expect(cids.map((c) => ids(s.allocate('g', c, mqs(8), cids)))).toEqual([
      [0, 1, 2],
      [3, 4, 5],
      [6, 7],
    ]);
    expect(cids.map((c) => ids(s.allocate('g', c, mqs(2), cids)))).toEqual([[0], [1], []]);
  });

  it('AVG and AVG_BY_CIRCLE: a duplicated cid takes its first position, the later queues go to nobody', () => {
    const cids = ['a', 'b', 'a'];
    expect(ids(new AllocateMessageQueueAveragely().allocate('g', 'a', mqs(6), cids))).toEqual([0, 1]);
    expect(ids(new AllocateMessageQueueAveragely().allocate('g', 'b', mqs(6), cids))).toEqual([2, 3]);
    expect(ids(new AllocateMessageQueueAveragelyByCircle().allocate('g', 'a', mqs(6), cids))).toEqual([0, 3]);
    expect(ids(new AllocateMessageQueueAveragelyByCircle().allocate('g', 'b', mqs(6), cids))).toEqual([1, 4]);
  });

  it('AVG_BY_CIRCLE hands queues out round robin', () => {
    const s = new AllocateMessageQueueAveragelyByCircle();
    expect(ids(s.allocate('g', 'c1', mqs(8), ['c0', 'c1', 'c2']))).toEqual([1, 4, 7]);
  });

  it('CONSISTENT_HASH: every queue goes to exactly one consumer, results in mqAll order', () => {
    const cids = ['c0', 'c1', 'c2', 'c3'];
    const s = new AllocateMessageQueueConsistentHash();
    const parts = cids.map((c) => s.allocate('g', c, mqs(32), cids));
    expect(parts.flat().length).toBe(32);
    for (const p of parts) expect(ids(p)).toEqual([...ids(p)].sort((a, b) => a - b));
  });

  it('CONSISTENT_HASH: virtualNodeCnt 0 gives nothing; negative throws', () => {
    expect(new AllocateMessageQueueConsistentHash(0).allocate('g', 'a', mqs(4), ['a'])).toEqual([]);
    expect(() => new AllocateMessageQueueConsistentHash(-1)).toThrow('illegal virtualNodeCnt :-1');
  });

  it('CONSISTENT_HASH: a repeated cid continues its virtual-node numbering', () => {
    // With cids [a, a] and 1 virtual node, the ring holds a-0 and a-1; with [a] and 2 nodes the same.
    const one = new AllocateMessageQueueConsistentHash(2).allocate('g', 'a', mqs(8), ['a', 'b']);
    const rep = new AllocateMessageQueueConsistentHash(1).allocate('g', 'a', mqs(8), ['a', 'b', 'a', 'b']);
    expect(rep).toEqual(one);
  });
});
