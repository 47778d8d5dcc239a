import { ConsumerManager } from '../../../src/broker/consumer-manager.js';
import type { BrokerSubscriptionData, ConsumerRegistration } from '../../../src/broker/broker-context.js';
import { ManualClock } from '../../support/manual-clock.js';

const sub = (topic: string, subVersion = 1, subString = '*', expressionType = 'TAG'): BrokerSubscriptionData => ({
  topic,
  subString,
  tagsSet: [],
  codeSet: [],
  subVersion,
  expressionType,
  classFilterMode: false,
});

const reg = (clientId: string, over: Partial<ConsumerRegistration> = {}): ConsumerRegistration => ({
  clientId,
  remoteAddress: '127.0.0.1:5000',
  consumeType: 'CONSUME_PASSIVELY',
  messageModel: 'CLUSTERING',
  consumeFromWhere: 'CONSUME_FROM_LAST_OFFSET',
  subscriptions: [sub('T'), sub('%RETRY%g')],
  ...over,
});

function setup(options: { expire?: number; grace?: number } = {}) {
  const clock = new ManualClock();
  const registered: string[] = [];
  const removed: string[] = [];
  const cm = new ConsumerManager({
    clock,
    channelExpiredTimeoutMs: options.expire ?? 120_000,
    watchRenewGraceMs: options.grace ?? 3000,
    scanIntervalMs: 1000,
    consumerFilterManager: {
      register: (g) => registered.push(g),
      unRegister: (g) => removed.push(g),
    },
  });
  cm.start();
  return { clock, cm, registered, removed };
}

describe('ConsumerManager registration (RocketMQ: registerConsumer / ConsumerGroupInfo)', () => {
  test('a heartbeat registers the client; members are listed in join order', () => {
    const { cm, registered } = setup();
    expect(cm.getConsumerGroupInfo('g')).toBeUndefined();
    expect(cm.registerConsumer('g', reg('c2'))).toBe(true);
    expect(cm.registerConsumer('g', reg('c1'))).toBe(true);
    const info = cm.getConsumerGroupInfo('g');
    expect(info?.getAllClientIds()).toEqual(['c2', 'c1']);
    expect(info?.messageModel).toBe('CLUSTERING');
    expect(info?.findSubscriptionData('T')?.subString).toBe('*');
    expect(registered).toEqual(['g', 'g']);
    cm.shutdown();
  });

  test('RocketMQ: the version moves on a join, not on a mere heartbeat renewal', () => {
    const { cm, clock } = setup();
    expect(cm.getVersion('g')).toBe(0);
    cm.registerConsumer('g', reg('c1'));
    const v1 = cm.getVersion('g');
    expect(v1).toBeGreaterThan(0);
    clock.advance(10);
    expect(cm.registerConsumer('g', reg('c1'))).toBe(false);
    expect(cm.getVersion('g')).toBe(v1);
    cm.registerConsumer('g', reg('c2'));
    expect(cm.getVersion('g')).toBeGreaterThan(v1);
    cm.shutdown();
  });

  test('RocketMQ 5: a change of the group topic set moves the version; a newer expression of a known topic does not', () => {
    const { cm } = setup();
    cm.registerConsumer('g', reg('c1'));
    const v1 = cm.getVersion('g');
    // newer subVersion, different expression: replaced, no news
    expect(cm.registerConsumer('g', reg('c1', { subscriptions: [sub('T', 2, 'a'), sub('%RETRY%g')] }))).toBe(false);
    expect(cm.getVersion('g')).toBe(v1);
    expect(cm.getConsumerGroupInfo('g')?.findSubscriptionData('T')?.subString).toBe('a');
    // older subVersion: ignored
    cm.registerConsumer('g', reg('c1', { subscriptions: [sub('T', 1, 'old'), sub('%RETRY%g')] }));
    expect(cm.getConsumerGroupInfo('g')?.findSubscriptionData('T')?.subString).toBe('a');
    // topic added
    expect(cm.registerConsumer('g', reg('c1', { subscriptions: [sub('T', 2, 'a'), sub('U'), sub('%RETRY%g')] }))).toBe(
      true,
    );
    const v2 = cm.getVersion('g');
    expect(v2).toBeGreaterThan(v1);
    // topic removed
    cm.registerConsumer('g', reg('c1', { subscriptions: [sub('U'), sub('%RETRY%g')] }));
    expect(cm.getVersion('g')).toBeGreaterThan(v2);
    expect(cm.getConsumerGroupInfo('g')?.findSubscriptionData('T')).toBeUndefined();
    cm.shutdown();
  });

  test('RocketMQ: a heartbeat without subscriptions (V2 withoutSub) keeps the group subscription table', () => {
    const { cm, registered } = setup();
    cm.registerConsumer('g', reg('c1'));
    const v = cm.getVersion('g');
    expect(cm.registerConsumer('g', reg('c1', { subscriptions: [], withoutSub: true }))).toBe(false);
    expect(cm.getConsumerGroupInfo('g')?.findSubscriptionData('T')).toBeDefined();
    expect(cm.getVersion('g')).toBe(v);
    expect(registered).toEqual(['g']);
    cm.shutdown();
  });

  test('unregister removes the member, moves the version, and removes an empty group', () => {
    const { cm, removed } = setup();
    cm.registerConsumer('g', reg('c1'));
    cm.registerConsumer('g', reg('c2'));
    const v = cm.getVersion('g');
    expect(cm.unregisterConsumer('g', 'c1')).toBe(true);
    expect(cm.getVersion('g')).toBeGreaterThan(v);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c2']);
    expect(cm.unregisterConsumer('g', 'nobody')).toBe(false);
    expect(cm.unregisterConsumer('g', 'c2')).toBe(true);
    expect(cm.getConsumerGroupInfo('g')).toBeUndefined();
    expect(removed).toEqual(['g']);
    expect(cm.unregisterConsumer('g', 'c2')).toBe(false);
    cm.shutdown();
  });

  test('RocketMQ: BROADCASTING groups get no membership news', () => {
    const { cm, clock } = setup({ expire: 5000 });
    cm.registerConsumer('b', reg('c1', { messageModel: 'BROADCASTING' }));
    cm.registerConsumer('b', reg('c2', { messageModel: 'BROADCASTING' }));
    expect(cm.getVersion('b')).toBe(0);
    cm.unregisterConsumer('b', 'c1');
    clock.advance(6000);
    expect(cm.getConsumerGroupInfo('b')).toBeUndefined();
    expect(cm.getVersion('b')).toBe(0);
    cm.shutdown();
  });

  test('notifyConsumerIdsChangedEnable=false silences joins and leaves, but an eviction is still announced', () => {
    const { cm, clock } = setup({ expire: 5000 });
    cm.registerConsumer('g', reg('c1'), false);
    cm.registerConsumer('g', reg('c2'), false);
    cm.unregisterConsumer('g', 'c2', false);
    expect(cm.getVersion('g')).toBe(0);
    clock.advance(6000);
    expect(cm.getConsumerGroupInfo('g')).toBeUndefined();
    expect(cm.getVersion('g')).toBeGreaterThan(0);
    cm.shutdown();
  });

  test('versions keep growing across group removal and re-creation', () => {
    const { cm } = setup();
    const seen: number[] = [];
    for (let i = 0; i < 5; i++) {
      cm.registerConsumer('g', reg('c1'));
      seen.push(cm.getVersion('g'));
      cm.unregisterConsumer('g', 'c1');
      seen.push(cm.getVersion('g'));
    }
    for (let i = 1; i < seen.length; i++) expect(seen[i]).toBeGreaterThan(seen[i - 1] as number);
    cm.shutdown();
  });
});

describe('WATCH_CONSUMER_IDS (ConsumerManager.watch)', () => {
  test('answers at once when the client knows another version', async () => {
    const { cm } = setup();
    cm.registerConsumer('g', reg('c1'));
    await expect(cm.watch('g', 'c1', -1, 30_000)).resolves.toEqual({ version: cm.getVersion('g'), clientIds: ['c1'] });
    await expect(cm.watch('unknown', 'c1', -1, 30_000)).resolves.toEqual({ version: 0, clientIds: [] });
    expect(cm.waiterCount('g')).toBe(0);
    cm.shutdown();
  });

  test('holds until the version moves, then answers every waiter of the group at once', async () => {
    const { cm } = setup();
    cm.registerConsumer('g', reg('c1'));
    cm.registerConsumer('h', reg('c1'));
    const v = cm.getVersion('g');
    const answers: unknown[] = [];
    const w1 = cm.watch('g', 'c1', v, 30_000).then((s) => answers.push(s));
    const w2 = cm.watch('g', 'c9', v, 30_000).then((s) => answers.push(s));
    const other = cm.watch('h', 'c1', cm.getVersion('h'), 30_000);
    await Promise.resolve();
    expect(answers).toHaveLength(0);
    expect(cm.waiterCount('g')).toBe(2);
    cm.registerConsumer('g', reg('c2'));
    await Promise.all([w1, w2]);
    const expected = { version: cm.getVersion('g'), clientIds: ['c1', 'c2'] };
    expect(answers).toEqual([expected, expected]);
    expect(cm.waiterCount('h')).toBe(1);
    cm.shutdown();
    await expect(other).resolves.toEqual({ version: cm.getVersion('h'), clientIds: ['c1'] });
  });

  test('a held watch times out with the unchanged snapshot', async () => {
    const { cm, clock } = setup();
    cm.registerConsumer('g', reg('c1'));
    const v = cm.getVersion('g');
    const w = cm.watch('g', 'c1', v, 5000);
    clock.advance(4999);
    expect(cm.waiterCount('g')).toBe(1);
    clock.advance(1);
    await expect(w).resolves.toEqual({ version: v, clientIds: ['c1'] });
    expect(cm.waiterCount('g')).toBe(0);
    cm.shutdown();
  });

  test('a waiter whose client aborted is dropped', async () => {
    const { cm } = setup();
    cm.registerConsumer('g', reg('c1'));
    const ac = new AbortController();
    const w = cm.watch('g', 'c1', cm.getVersion('g'), 30_000, ac.signal);
    expect(cm.waiterCount('g')).toBe(1);
    ac.abort();
    await expect(w).resolves.toBeNull();
    expect(cm.waiterCount('g')).toBe(0);
    const aborted = new AbortController();
    aborted.abort();
    await expect(cm.watch('g', 'c1', cm.getVersion('g'), 30_000, aborted.signal)).resolves.toBeNull();
    cm.shutdown();
  });

  test('shutdown answers held watches and clears its timers', async () => {
    const { cm, clock } = setup();
    cm.registerConsumer('g', reg('c1'));
    const w = cm.watch('g', 'c1', cm.getVersion('g'), 30_000);
    cm.shutdown();
    cm.shutdown();
    await expect(w).resolves.toEqual({ version: cm.getVersion('g'), clientIds: ['c1'] });
    expect(clock.pendingTimers).toBe(0);
  });
});

describe('liveness (RocketMQ: scanNotActiveChannel, channelExpiredTimeout)', () => {
  test('a member silent for channelExpiredTimeoutMs is evicted and its departure announced', async () => {
    const { cm, clock } = setup({ expire: 10_000 });
    cm.registerConsumer('g', reg('c1'));
    cm.registerConsumer('g', reg('c2'));
    const v = cm.getVersion('g');
    clock.advance(6000);
    cm.registerConsumer('g', reg('c2')); // c2 renews
    const w = cm.watch('g', 'c2', v, 60_000);
    clock.advance(4000); // c1 silent 10 s: not yet (strictly more than the timeout)
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1', 'c2']);
    clock.advance(1000);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c2']);
    await expect(w).resolves.toEqual({ version: cm.getVersion('g'), clientIds: ['c2'] });
    expect(cm.getVersion('g')).toBeGreaterThan(v);
    cm.shutdown();
  });

  test('a member holding an open watch is alive; once the watch ends it must renew within the grace time', async () => {
    const { cm, clock } = setup({ expire: 10_000, grace: 3000 });
    cm.registerConsumer('g', reg('c1'));
    cm.registerConsumer('g', reg('c2'));
    const ac = new AbortController();
    const held = cm.watch('g', 'c1', cm.getVersion('g'), 60_000, ac.signal);
    clock.advance(11_000); // c2 silent past the expiry: evicted
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1']);
    await held; // answered by c2's eviction
    // renewed in time, then held far past the expiry: c1 stays
    const again = cm.watch('g', 'c1', cm.getVersion('g'), 60_000, ac.signal);
    clock.advance(30_000);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1']);
    ac.abort(); // the client's connection closed
    await expect(again).resolves.toBeNull();
    clock.advance(3000);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1']);
    clock.advance(1000); // grace passed, not renewed
    expect(cm.getConsumerGroupInfo('g')).toBeUndefined();
    cm.shutdown();
  });

  test('a heartbeat after a lost watch restarts the grace time; a client that dies after it is still evicted', async () => {
    const { cm, clock } = setup({ expire: 60_000, grace: 3000 });
    cm.registerConsumer('g', reg('c1'));
    cm.registerConsumer('g', reg('c2'));
    const ac = new AbortController();
    const w = cm.watch('g', 'c1', cm.getVersion('g'), 60_000, ac.signal);
    ac.abort();
    await w;
    clock.advance(2000);
    cm.registerConsumer('g', reg('c1')); // alive 2 s after the watch ended: 3 s more to renew
    clock.advance(2000);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1', 'c2']);
    clock.advance(2000); // never renewed (e.g. killed after that heartbeat): evicted long before the expiry
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c2']);
    cm.shutdown();
  });

  test('a heartbeat without subscriptions releases a member from watching (only the expiry applies)', async () => {
    const { cm, clock } = setup({ expire: 60_000, grace: 3000 });
    cm.registerConsumer('g', reg('c1'));
    const ac = new AbortController();
    const w = cm.watch('g', 'c1', cm.getVersion('g'), 60_000, ac.signal);
    ac.abort();
    await w;
    cm.registerConsumer('g', reg('c1', { subscriptions: [] }));
    clock.advance(10_000);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1']);
    clock.advance(51_000);
    expect(cm.getConsumerGroupInfo('g')).toBeUndefined();
    cm.shutdown();
  });

  test('a watch that is answered at once still counts as a renewal, and a client that never watched is only expired', async () => {
    const { cm, clock } = setup({ expire: 30_000, grace: 3000 });
    cm.registerConsumer('g', reg('c1'));
    cm.registerConsumer('g', reg('c2'));
    await cm.watch('g', 'c1', -1, 60_000); // answered at once; c1 must watch again within 3 s
    clock.advance(2000);
    const w = cm.watch('g', 'c1', cm.getVersion('g'), 60_000);
    clock.advance(20_000);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1', 'c2']);
    clock.advance(11_000);
    expect(cm.getConsumerGroupInfo('g')?.getAllClientIds()).toEqual(['c1']);
    await w;
    cm.shutdown();
  });

  test('producers are registered by heartbeat and dropped when silent', () => {
    const { cm, clock } = setup({ expire: 5000 });
    cm.producerManager.registerProducer('pg', 'p1');
    cm.producerManager.registerProducer('pg', 'p2');
    expect(cm.producerManager.getClientIds('pg')).toEqual(['p1', 'p2']);
    expect(cm.producerManager.unregisterProducer('pg', 'p2')).toBe(true);
    clock.advance(6000);
    expect(cm.producerManager.getGroups()).toEqual([]);
    cm.shutdown();
  });
});
