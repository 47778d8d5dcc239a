import { ConsumerIdsWatcher } from '../../../../src/client/instance/consumer-ids-watcher.js';
import { MQClientAPI } from '../../../../src/client/instance/mq-client-api.js';
import { TransportError } from '../../../../src/common/errors.js';
import { silentLogger } from '../../../../src/common/logger.js';
import { RequestCode } from '../../../../src/protocol/index.js';
import type { InvokeOptions } from '../../../../src/remoting/remoting-client.js';
import { ManualClock, flush } from '../../../support/manual-clock.js';
import { FakeRemotingClient, json, ok } from '../core-fakes.js';

/** A broker stand-in: answers a watch at once when the version differs, else holds it until `bump`. */
class Membership {
  version = 5;
  ids = ['a'];
  fail = false;
  #held: Array<() => void> = [];
  handle = (req: { header: unknown }, opts: InvokeOptions) => {
    if (this.fail) return Promise.reject(new TransportError('down'));
    const h = req.header as { version: number };
    const answer = () => ok({ version: this.version }, json({ consumerIdList: this.ids }));
    if (h.version !== this.version) return Promise.resolve(answer());
    return new Promise<ReturnType<typeof ok>>((resolve, reject) => {
      this.#held.push(() => resolve(answer()));
      opts.signal?.addEventListener('abort', () => reject(new Error('aborted')));
    });
  };
  bump(ids: string[]): void {
    this.version++;
    this.ids = ids;
    for (const w of this.#held.splice(0)) w();
  }
}

function setup() {
  const clock = new ManualClock();
  const m = new Membership();
  const fake = new FakeRemotingClient((_a, r, o) => m.handle(r, o));
  const changes: Array<[string, string, string[]]> = [];
  const notMember: string[] = [];
  const w = new ConsumerIdsWatcher({
    api: new MQClientAPI(fake, { requestTimeoutMs: 3000 }),
    clientId: 'me',
    holdMs: 30_000,
    clock,
    logger: silentLogger,
    onChange: (g, a, ids) => changes.push([g, a, ids]),
    onNotMember: (g) => notMember.push(g),
  });
  return { clock, m, fake, changes, notMember, w };
}

test('one watch per (group, broker); a membership change calls onChange at once', async () => {
  const { m, fake, changes, w } = setup();
  w.sync(['g1', 'g2'], ['http://a:1', 'http://a:1']);
  expect(w.size).toBe(2);
  await flush();
  // First answer (version -1 → 5) is not a change; then the watch is held.
  expect(changes).toEqual([]);
  const watches = fake.callsOf(RequestCode.WATCH_CONSUMER_IDS);
  expect(watches.map((c) => (c.request.header as { version: number }).version)).toEqual([-1, -1, 5, 5]);
  expect(watches[2]!.request.header).toEqual({
    consumerGroup: 'g1',
    clientID: 'me',
    version: 5,
    timeoutMillis: 30_000,
  });
  expect(watches[2]!.opts.timeoutMs).toBeGreaterThan(30_000);
  m.bump(['a', 'b']);
  await flush();
  expect(changes.map(([g, , ids]) => [g, ids])).toEqual([
    ['g1', ['a', 'b']],
    ['g2', ['a', 'b']],
  ]);
  w.sync(['g1'], ['http://a:1']);
  expect(w.size).toBe(1);
  await w.shutdown();
  expect(w.size).toBe(0);
});

test('errors back off (200 ms, doubling) and the first answer after an error counts as a change', async () => {
  const { clock, m, fake, changes, w } = setup();
  m.fail = true;
  w.sync(['g'], ['http://a:1']);
  await flush();
  expect(fake.calls).toHaveLength(1);
  await clock.advanceAsync(199);
  expect(fake.calls).toHaveLength(1);
  await clock.advanceAsync(1);
  expect(fake.calls).toHaveLength(2);
  await clock.advanceAsync(399);
  expect(fake.calls).toHaveLength(2);
  m.fail = false;
  await clock.advanceAsync(1);
  await flush();
  expect(changes).toHaveLength(1);
  await w.shutdown();
  expect(clock.pendingTimers).toBe(0);
});

test('an answer that does not list this client asks for a heartbeat (evicted or not yet registered)', async () => {
  const { m, notMember, w } = setup();
  w.sync(['g'], ['http://a:1']);
  await flush();
  expect(notMember).toEqual(['g']);
  m.bump(['a', 'me']);
  await flush();
  expect(notMember).toEqual(['g']);
  m.bump(['a']);
  await flush();
  expect(notMember).toEqual(['g', 'g']);
  await w.shutdown();
});
