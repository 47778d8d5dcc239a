import { RebalanceService } from '../../../../src/client/instance/rebalance-service.js';
import type { MQConsumerInner } from '../../../../src/client/instance/mq-consumer-inner.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { ManualClock, flush } from '../../../support/manual-clock.js';

function inner(result: () => Promise<void | boolean>): MQConsumerInner {
  return {
    groupName: () => 'g',
    messageModel: () => 'CLUSTERING',
    consumeType: () => 'CONSUME_PASSIVELY',
    consumeFromWhere: () => 'CONSUME_FROM_LAST_OFFSET',
    subscriptions: () => [],
    doRebalance: result,
    persistConsumerOffset: async () => undefined,
    updateTopicSubscribeInfo: () => undefined,
  };
}

function setup(result: () => Promise<void | boolean> = async () => undefined) {
  const clock = new ManualClock();
  const runs: number[] = [];
  const c = inner(async () => {
    runs.push(clock.now());
    return result();
  });
  const svc = new RebalanceService(() => [c], { rebalanceIntervalMs: 20_000, clock, logger: silentLogger });
  return { clock, runs, svc, t0: clock.now() };
}

test('RocketMQ: wakes every 20 s', async () => {
  const { clock, runs, svc, t0 } = setup();
  svc.start();
  await clock.advanceAsync(59_999);
  expect(runs.map((t) => t - t0)).toEqual([20_000, 40_000]);
  await svc.shutdown();
  expect(clock.pendingTimers).toBe(0);
});

test('membership news runs a pass at once, but never less than 100 ms after the previous pass', async () => {
  const { clock, runs, svc, t0 } = setup();
  svc.start();
  svc.wakeup();
  await clock.advanceAsync(0);
  expect(runs.map((t) => t - t0)).toEqual([0]);
  await clock.advanceAsync(20);
  svc.wakeup();
  svc.wakeup();
  await clock.advanceAsync(79);
  expect(runs).toHaveLength(1);
  await clock.advanceAsync(1);
  expect(runs.map((t) => t - t0)).toEqual([0, 100]);
  // The period restarts after a pass.
  await clock.advanceAsync(20_000);
  expect(runs.map((t) => t - t0)).toEqual([0, 100, 20_100]);
  await svc.shutdown();
});

test('RocketMQ: after an unbalanced pass the next comes after 1 s; a failing consumer counts as unbalanced', async () => {
  let answer: () => Promise<void | boolean> = async () => false;
  const { clock, runs, svc, t0 } = setup(() => answer());
  svc.start();
  svc.wakeup();
  await clock.advanceAsync(1000);
  expect(runs.map((t) => t - t0)).toEqual([0, 1000]);
  answer = async () => {
    throw new Error('boom');
  };
  await clock.advanceAsync(1000);
  expect(runs).toHaveLength(3);
  answer = async () => undefined;
  await clock.advanceAsync(1000);
  await clock.advanceAsync(19_999);
  expect(runs).toHaveLength(4);
  await svc.shutdown();
});

test('a consumer that has just started (wakeup(true)) is not held back by the pass before it', async () => {
  const { clock, runs, svc, t0 } = setup();
  svc.start();
  svc.wakeup();
  await clock.advanceAsync(0);
  await clock.advanceAsync(40);
  svc.wakeup(true);
  await clock.advanceAsync(0);
  expect(runs.map((t) => t - t0)).toEqual([0, 40]);
  // Membership news right after it still waits for the news interval.
  svc.wakeup();
  await clock.advanceAsync(99);
  expect(runs).toHaveLength(2);
  await clock.advanceAsync(1);
  expect(runs.map((t) => t - t0)).toEqual([0, 40, 140]);
  await svc.shutdown();
});

test('wakeup(true) during a pass runs the next pass as soon as that one ends', async () => {
  let release!: () => void;
  let calls = 0;
  const { clock, svc } = setup(() => {
    calls++;
    return calls === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
  });
  svc.start();
  svc.wakeup();
  await clock.advanceAsync(0);
  svc.wakeup(true);
  release();
  await flush();
  await clock.advanceAsync(0);
  expect(calls).toBe(2);
  await svc.shutdown();
});

test('news during a short pass runs the next pass 100 ms after that pass started', async () => {
  let release!: () => void;
  const { clock, runs, svc, t0 } = setup(() =>
    runs.length === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve(),
  );
  svc.start();
  svc.wakeup();
  await clock.advanceAsync(10);
  svc.wakeup();
  await clock.advanceAsync(20);
  release();
  await flush();
  await clock.advanceAsync(69);
  expect(runs).toHaveLength(1);
  await clock.advanceAsync(1);
  expect(runs.map((t) => t - t0)).toEqual([0, 100]);
  await svc.shutdown();
});

test('passes never overlap: a wakeup during a pass runs one more pass after it', async () => {
  let release!: () => void;
  let calls = 0;
  const { clock, svc } = setup(() => {
    calls++;
    return calls === 1 ? new Promise<void>((r) => (release = r)) : Promise.resolve();
  });
  svc.start();
  svc.wakeup();
  await clock.advanceAsync(0);
  expect(calls).toBe(1);
  svc.wakeup();
  await clock.advanceAsync(5000);
  expect(calls).toBe(1);
  // The pass took longer than the news interval: the next one runs as soon as it ends.
  release();
  await flush();
  await clock.advanceAsync(0);
  expect(calls).toBe(2);
  await svc.shutdown();
  svc.wakeup();
  await clock.advanceAsync(60_000);
  expect(calls).toBe(2);
  expect(clock.pendingTimers).toBe(0);
});
