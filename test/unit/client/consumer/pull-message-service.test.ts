import { ProcessQueue } from '../../../../src/client/consumer/process-queue.js';
import { PullMessageService } from '../../../../src/client/consumer/pull-message-service.js';
import { createPullRequest } from '../../../../src/client/consumer/pull-request.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { ManualClock } from '../../../support/manual-clock.js';
import { mqOf } from '../helpers.js';

const tick = (): Promise<void> => new Promise((r) => setImmediate(r));

describe('PullMessageService (RocketMQ: PullMessageService)', () => {
  it('runs requests now or later, never a dropped queue, and nothing after shutdown', async () => {
    const clock = new ManualClock();
    const pulled: number[] = [];
    const svc = new PullMessageService(
      async (r) => {
        pulled.push(r.messageQueue.queueId);
      },
      clock,
      silentLogger,
    );
    const a = createPullRequest('g', mqOf(0), new ProcessQueue(0), 0);
    const b = createPullRequest('g', mqOf(1), new ProcessQueue(0), 0);
    svc.executePullRequestImmediately(a);
    svc.executePullRequestLater(b, 100);
    await tick();
    expect(pulled).toEqual([0]);
    clock.advance(100);
    await tick();
    expect(pulled).toEqual([0, 1]);

    b.processQueue.dropped = true;
    svc.executePullRequestImmediately(b);
    svc.executePullRequestLater(b, 10);
    clock.advance(10);
    await tick();
    expect(pulled).toEqual([0, 1]);

    svc.executePullRequestLater(a, 50);
    svc.executeTaskLater(() => pulled.push(99), 50);
    expect(clock.pendingTimers).toBe(2);
    await svc.shutdown();
    expect(clock.pendingTimers).toBe(0);
    svc.executePullRequestImmediately(a);
    clock.advance(100);
    await tick();
    expect(pulled).toEqual([0, 1]);
  });

  it('a pullMessage that throws unexpectedly is retried after 1000 ms, so the queue never stalls', async () => {
    const clock = new ManualClock();
    let calls = 0;
    const svc = new PullMessageService(
      async () => {
        calls++;
        if (calls === 1) throw new Error('bug');
      },
      clock,
      silentLogger,
    );
    svc.executePullRequestImmediately(createPullRequest('g', mqOf(0), new ProcessQueue(0), 0));
    await tick();
    await tick();
    expect(calls).toBe(1);
    clock.advance(1000);
    await tick();
    expect(calls).toBe(2);
    await svc.shutdown();
  });

  it('startPullRequestNow starts the pull in the same turn, but never for a dropped queue or after shutdown', async () => {
    const clock = new ManualClock();
    const pulled: number[] = [];
    const svc = new PullMessageService(
      async (r) => {
        pulled.push(r.messageQueue.queueId);
      },
      clock,
      silentLogger,
    );
    const a = createPullRequest('g', mqOf(0), new ProcessQueue(0), 0);
    const b = createPullRequest('g', mqOf(1), new ProcessQueue(0), 0);
    svc.startPullRequestNow(a);
    expect(pulled).toEqual([0]); // synchronously, no setImmediate hop
    b.processQueue.dropped = true;
    svc.startPullRequestNow(b);
    await svc.shutdown();
    svc.startPullRequestNow(a);
    await tick();
    expect(pulled).toEqual([0]);
  });
});
