/**
 * PullRequestHoldService (RocketMQ's suspend-and-notify of held pulls) with a manual clock.
 */
import { silentLogger } from '../../../src/common/logger.js';
import { PullRequestHoldService, type HeldPullRequest } from '../../../src/broker/pull-request-hold-service.js';
import type { MessageFilter } from '../../../src/store/index.js';
import { ManualClock } from '../../support/manual-clock.js';

const TAG_A = 2598919; // "TagA".hashCode()

const tagFilter = (code: number): MessageFilter => ({
  isMatchedByConsumeQueue: (t) => t === null || t === code,
  isMatchedByCommitLog: () => true,
});

function setup(opts: { longPollingEnable?: boolean; maxOffset?: number } = {}) {
  const clock = new ManualClock();
  let max = opts.maxOffset ?? 5;
  const service = new PullRequestHoldService({
    maxOffsetInQueue: () => max,
    longPollingEnable: opts.longPollingEnable ?? true,
    shortPollingTimeMills: 1000,
    checkIntervalMs: 5000,
    clock,
    logger: silentLogger,
  });
  service.start();
  const events: string[] = [];
  const hold = (name: string, extra: Partial<HeldPullRequest> = {}): AbortController => {
    const ac = new AbortController();
    service.suspendPullRequest({
      topic: 'T',
      queueId: 0,
      pullFromThisOffset: 5,
      suspendTimestamp: clock.now(),
      timeoutMillis: 15_000,
      filter: tagFilter(TAG_A),
      client: {
        get gone() {
          return ac.signal.aborted;
        },
        onGone(listener: () => void) {
          ac.signal.addEventListener('abort', listener, { once: true });
          return () => ac.signal.removeEventListener('abort', listener);
        },
      },
      wake: () => events.push(`${name}:wake`),
      drop: () => events.push(`${name}:drop`),
      ...extra,
    });
    return ac;
  };
  return { clock, service, events, hold, setMax: (n: number) => (max = n) };
}

describe('PullRequestHoldService', () => {
  test('RocketMQ: a suspended pull wakes on arrival of a matching message, at once', () => {
    const s = setup();
    s.hold('p');
    expect(s.service.size).toBe(1);
    s.setMax(6);
    s.service.onMessageArriving('T', 0, 6, TAG_A, { TAGS: 'TagA' });
    expect(s.events).toEqual(['p:wake']);
    expect(s.service.size).toBe(0);
  });

  test('RocketMQ: a new message whose tag does not match does not wake the request', () => {
    const s = setup();
    s.hold('p');
    s.setMax(6);
    s.service.onMessageArriving('T', 0, 6, 12345, null);
    s.service.onMessageArriving('T', 1, 6, TAG_A, null);
    s.service.onMessageArriving('U', 0, 6, TAG_A, null);
    expect(s.events).toEqual([]);
    expect(s.service.size).toBe(1);
  });

  test('an arrival below the request offset does not wake it', () => {
    const s = setup();
    s.hold('p', { pullFromThisOffset: 10 });
    s.service.onMessageArriving('T', 0, 6, TAG_A, null);
    expect(s.events).toEqual([]);
  });

  test('the commit-log stage of the filter is applied to the properties on arrival', () => {
    const s = setup();
    s.hold('p', {
      filter: { isMatchedByConsumeQueue: () => true, isMatchedByCommitLog: (_r, p) => p?.n === '9' },
    });
    s.setMax(6);
    s.service.onMessageArriving('T', 0, 6, 0, { n: '1' });
    expect(s.events).toEqual([]);
    s.service.onMessageArriving('T', 0, 7, 0, { n: '9' });
    expect(s.events).toEqual(['p:wake']);
  });

  test('timed out: woken at its suspend timeout, not earlier', () => {
    const s = setup();
    s.hold('p', { timeoutMillis: 15_000 });
    s.clock.advance(14_999);
    expect(s.events).toEqual([]);
    s.clock.advance(1);
    expect(s.events).toEqual(['p:wake']);
  });

  test('RocketMQ: the 5 s check wakes a request when the queue grew, whatever the message', () => {
    const s = setup();
    s.hold('p');
    s.setMax(6); // grew without an announcement that matched
    s.clock.advance(4_999);
    expect(s.events).toEqual([]);
    s.clock.advance(1);
    expect(s.events).toEqual(['p:wake']);
  });

  test('a queue that already grew when the request is suspended answers it at once', () => {
    const s = setup({ maxOffset: 7 });
    s.hold('p');
    expect(s.events).toEqual(['p:wake']);
    expect(s.service.size).toBe(0);
  });

  test('a request whose client went away is dropped, silently, and never woken', () => {
    const s = setup();
    const ac = s.hold('p');
    ac.abort();
    expect(s.events).toEqual(['p:drop']);
    s.setMax(6);
    s.service.onMessageArriving('T', 0, 6, TAG_A, null);
    s.clock.advance(20_000);
    expect(s.events).toEqual(['p:drop']);
    expect(s.clock.pendingTimers).toBe(1); // only the service's periodic check
  });

  test('with long polling off, arrivals do not wake; the request waits its polling time', () => {
    const s = setup({ longPollingEnable: false });
    s.hold('p', { timeoutMillis: 1000 });
    s.setMax(6);
    s.service.onMessageArriving('T', 0, 6, TAG_A, null);
    expect(s.events).toEqual([]);
    s.clock.advance(1000);
    expect(s.events).toEqual(['p:wake']);
  });

  test('shutdown answers every held request and clears every timer', () => {
    const s = setup();
    s.hold('a');
    s.hold('b', { queueId: 3 });
    s.service.shutdown();
    expect(s.events.sort()).toEqual(['a:wake', 'b:wake']);
    expect(s.clock.pendingTimers).toBe(0);
    s.hold('c');
    expect(s.events).toContain('c:wake');
  });

  test('a filter that throws is treated as a match (the re-run decides)', () => {
    const s = setup();
    s.hold('p', {
      filter: {
        isMatchedByConsumeQueue: () => {
          throw new Error('boom');
        },
        isMatchedByCommitLog: () => true,
      },
    });
    s.setMax(6);
    s.service.onMessageArriving('T', 0, 6, 1, null);
    expect(s.events).toEqual(['p:wake']);
  });
});
