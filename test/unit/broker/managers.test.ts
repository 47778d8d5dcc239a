/**
 * TopicConfigManager, SubscriptionGroupManager and ConsumerOffsetManager (RocketMQ's rules), with
 * their persistence.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLogger } from '../../../src/common/logger.js';
import { ConsumerOffsetManager } from '../../../src/broker/consumer-offset-manager.js';
import { SubscriptionGroupManager } from '../../../src/broker/subscription-group-manager.js';
import { TopicConfigManager } from '../../../src/broker/topic-config-manager.js';
import { resolveBrokerOptions } from '../../../src/broker/broker-options.js';
import { pullResponseCode } from '../../../src/broker/processors/pull-message.js';
import { ResponseCode } from '../../../src/protocol/index.js';
import { ManualClock } from '../../support/manual-clock.js';
import { waitFor } from '../../support/broker-fixture.js';

let dir: string;
/** Managers whose background writes must end before the directory goes (else they recreate it). */
let managers: Array<{ persist(): Promise<void> }> = [];
const tracked = <M extends { persist(): Promise<void> }>(m: M): M => {
  managers.push(m);
  return m;
};
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rmq-mgr-'));
});
afterEach(async () => {
  // persist() is queued behind every earlier write of the same file, so this waits for all of them.
  await Promise.all(managers.map((m) => m.persist().catch(() => undefined)));
  managers = [];
  rmSync(dir, { recursive: true, force: true });
});

const topics = (autoCreateTopicEnable = true) =>
  tracked(
    new TopicConfigManager({
      storePath: dir,
      brokerName: 'broker-a',
      clusterName: 'DefaultCluster',
      autoCreateTopicEnable,
      defaultTopicQueueNums: 8,
      scheduleTopicQueueNums: 18,
      logger: silentLogger,
    }),
  );

describe('TopicConfigManager', () => {
  test('RocketMQ: TBW102 has 8 queues and INHERIT; a topic created from it gets min(client, 8) queues without INHERIT', () => {
    const m = topics();
    expect(m.selectTopicConfig('TBW102')).toMatchObject({ readQueueNums: 8, writeQueueNums: 8, perm: 7 });
    expect(m.createTopicInSendMessageMethod('A', 'TBW102', 4, 0)).toMatchObject({
      readQueueNums: 4,
      writeQueueNums: 4,
      perm: 6,
    });
    expect(m.createTopicInSendMessageMethod('B', 'TBW102', 16, 0)).toMatchObject({ readQueueNums: 8, perm: 6 });
    expect(m.selectTopicConfig('SCHEDULE_TOPIC_XXXX')?.readQueueNums).toBe(18);
  });

  test('no creation from a template without INHERIT, from a missing template, or with auto-creation off', () => {
    const m = topics();
    expect(m.createTopicInSendMessageMethod('A', 'OFFSET_MOVED_EVENT', 4, 0)).toBeUndefined();
    expect(m.createTopicInSendMessageMethod('A', 'Nope', 4, 0)).toBeUndefined();
    expect(m.createTopicInSendMessageMethod('../x', 'TBW102', 4, 0)).toBeUndefined();
    const off = topics(false);
    expect(off.selectTopicConfig('TBW102')).toBeUndefined();
    expect(off.createTopicInSendMessageMethod('A', 'TBW102', 4, 0)).toBeUndefined();
  });

  test('topics persist and load back', async () => {
    const m = topics();
    m.createTopicIfAbsent('%RETRY%g', 1, 6);
    m.updateTopicConfig({
      topicName: 'X',
      readQueueNums: 2,
      writeQueueNums: 3,
      perm: 4,
      topicFilterType: 'MULTI_TAG',
      topicSysFlag: 0,
      order: false,
    });
    await m.persist();
    const again = topics();
    expect(again.selectTopicConfig('X')).toMatchObject({
      readQueueNums: 2,
      writeQueueNums: 3,
      perm: 4,
      topicFilterType: 'MULTI_TAG',
    });
    expect(again.selectTopicConfig('%RETRY%g')).toBeDefined();
  });
});

describe('SubscriptionGroupManager', () => {
  test('auto-creates valid groups with RocketMQ defaults; never invalid names', async () => {
    const m = tracked(
      new SubscriptionGroupManager({ storePath: dir, autoCreateSubscriptionGroup: true, logger: silentLogger }),
    );
    expect(m.findSubscriptionGroupConfig('g1')).toMatchObject({
      groupName: 'g1',
      consumeEnable: true,
      retryQueueNums: 1,
      retryMaxTimes: 16,
    });
    expect(m.findSubscriptionGroupConfig('../g')).toBeUndefined();
    expect(m.containsSubscriptionGroup('../g')).toBe(false);
    await m.persist();
    const again = new SubscriptionGroupManager({
      storePath: dir,
      autoCreateSubscriptionGroup: false,
      logger: silentLogger,
    });
    expect(again.containsSubscriptionGroup('g1')).toBe(true);
    expect(again.findSubscriptionGroupConfig('g2')).toBeUndefined();
  });
});

describe('ConsumerOffsetManager', () => {
  const make = (clock = new ManualClock()) =>
    new ConsumerOffsetManager({ storePath: dir, flushConsumerOffsetIntervalMs: 5000, clock, logger: silentLogger });

  test('commit/query: plain overwrite; -1 when none; the pull table falls back to the committed offset', () => {
    const m = make();
    expect(m.queryOffset('g', 'T', 0)).toBe(-1);
    m.commitOffset('c', 'g', 'T', 0, 10);
    m.commitOffset('c', 'g', 'T', 0, 4);
    expect(m.queryOffset('g', 'T', 0)).toBe(4);
    expect(m.queryPullOffset('g', 'T', 0)).toBe(4);
    m.commitPullOffset('g', 'T', 0, 12);
    expect(m.queryPullOffset('g', 'T', 0)).toBe(12);
    expect(m.queryOffset('g', 'T', 0)).toBe(4);
  });

  test("a pull's offset (increaseOnly) never moves the committed offset back; an update does", () => {
    const m = make();
    m.commitOffset('c', 'g', 'T', 0, 5, true);
    expect(m.queryOffset('g', 'T', 0)).toBe(5);
    m.commitOffset('c', 'g', 'T', 0, 248);
    // A pull sent before the consumer's final update, arriving after it.
    m.commitOffset('c', 'g', 'T', 0, 245, true);
    expect(m.queryOffset('g', 'T', 0)).toBe(248);
    m.commitOffset('c', 'g', 'T', 0, 250, true);
    expect(m.queryOffset('g', 'T', 0)).toBe(250);
    m.commitOffset('c', 'g', 'T', 0, 100);
    expect(m.queryOffset('g', 'T', 0)).toBe(100);
  });

  test('persisted every 5 s when changed and at shutdown; loaded on start', async () => {
    const clock = new ManualClock();
    const m = make(clock);
    m.start();
    m.commitOffset('c', 'g', 'T', 1, 7);
    clock.advance(5000);
    // The timer's write runs in the background: a fresh manager sees the offset once it has landed.
    await waitFor(() => make().queryOffset('g', 'T', 1) === 7, 10_000);
    m.commitOffset('c', 'g', '%RETRY%g', 0, 3);
    await m.shutdown();
    expect(clock.pendingTimers).toBe(0);
    const again = make();
    expect(again.queryOffset('g', '%RETRY%g', 0)).toBe(3);
    expect([...again.offsetsOfGroup('g').keys()].sort()).toEqual(['%RETRY%g', 'T']);
  });
});

describe('broker options', () => {
  test('RocketMQ defaults, with property filtering on', () => {
    const o = resolveBrokerOptions({ storePath: dir });
    expect(o).toMatchObject({
      host: '127.0.0.1',
      port: 8081,
      brokerName: 'broker-a',
      defaultTopicQueueNums: 8,
      enablePropertyFilter: true,
      brokerPermission: 6,
    });
  });

  test('a bad option names the field', () => {
    expect(() => resolveBrokerOptions({ storePath: dir, port: 70000 })).toThrow(/port/);
    expect(() => resolveBrokerOptions({ storePath: dir, brokerName: 'a/b' })).toThrow(/brokerName/);
    expect(() => resolveBrokerOptions({ storePath: '' })).toThrow(/storePath/);
  });
});

describe('pullResponseCode (composeResponseHeader)', () => {
  test.each([
    ['FOUND', 5, ResponseCode.SUCCESS],
    ['NO_MATCHED_MESSAGE', 5, ResponseCode.PULL_RETRY_IMMEDIATELY],
    ['MESSAGE_WAS_REMOVING', 5, ResponseCode.PULL_RETRY_IMMEDIATELY],
    ['NO_MESSAGE_IN_QUEUE', 0, ResponseCode.PULL_NOT_FOUND],
    ['NO_MESSAGE_IN_QUEUE', 3, ResponseCode.PULL_OFFSET_MOVED],
    ['NO_MATCHED_LOGIC_QUEUE', 0, ResponseCode.PULL_NOT_FOUND],
    ['NO_MATCHED_LOGIC_QUEUE', 1, ResponseCode.PULL_OFFSET_MOVED],
    ['OFFSET_FOUND_NULL', 5, ResponseCode.PULL_NOT_FOUND],
    ['OFFSET_OVERFLOW_ONE', 5, ResponseCode.PULL_NOT_FOUND],
    ['OFFSET_OVERFLOW_BADLY', 5, ResponseCode.PULL_OFFSET_MOVED],
    ['OFFSET_TOO_SMALL', 5, ResponseCode.PULL_OFFSET_MOVED],
    ['OFFSET_RESET', 5, ResponseCode.PULL_OFFSET_MOVED],
  ] as const)('%s at offset %d → %d', (status, offset, code) => {
    expect(pullResponseCode(status, offset)).toBe(code);
  });
});
