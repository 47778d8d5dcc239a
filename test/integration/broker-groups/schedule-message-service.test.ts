import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ScheduleMessageService } from '../../../src/broker/schedule-message-service.js';
import { messageTimeUp } from '../../../src/broker/schedule-rules.js';
import { decodeMessages } from '../../../src/common/codec/index.js';
import type { MessageExt } from '../../../src/common/message.js';
import { MessageStore, type MessageToStore } from '../../../src/store/index.js';

const dirs: string[] = [];
const closers: (() => Promise<void>)[] = [];

afterEach(async () => {
  for (const c of closers.splice(0).reverse()) await c();
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});

function tmpDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'rmq-schedule-'));
  dirs.push(d);
  return d;
}

async function open(storePath: string, messageDelayLevel: string, idleCheckMs?: number) {
  const store = await MessageStore.open({ storePath, mappedFileSizeCommitLog: 64 * 1024 });
  const service = new ScheduleMessageService({
    store,
    progressFile: path.join(storePath, 'config', 'delayOffset.json'),
    messageDelayLevel,
    ...(idleCheckMs === undefined ? {} : { idleCheckMs }),
  });
  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    await service.shutdown();
    await store.shutdown();
  };
  closers.push(close);
  return { store, service, close };
}

let seq = 0;
function message(topic: string, delay: number, body = `m${++seq}`): MessageToStore {
  return {
    topic,
    queueId: 1,
    flag: 0,
    body: Buffer.from(body),
    properties: { DELAY: String(delay), UNIQ_KEY: `U${seq}`, TAGS: 'tagA' },
    sysFlag: 0,
    bornTimestamp: Date.now(),
    bornHost: { ip: '10.1.2.3', port: 4567 },
    reconsumeTimes: 2,
    preparedTransactionOffset: 0,
  };
}

async function readQueue(store: MessageStore, topic: string, queueId: number): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  let offset = 0;
  for (;;) {
    const r = await store.getMessage('g', topic, queueId, offset, 32, null);
    if (r.status !== 'FOUND') return out;
    for (const b of r.messages) out.push(...decodeMessages(b));
    offset = r.nextBeginOffset;
  }
}

async function waitFor<T>(fn: () => Promise<T | undefined>, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('ScheduleMessageService against a real MessageStore', () => {
  test('delivers a delayed message to its real topic when due, rebuilt as RocketMQ does', async () => {
    const { store, service } = await open(tmpDir(), '100ms 300ms');
    await service.start();
    const m = service.transformDelayedMessage(message('RealTopic', 2));
    expect(m.topic).toBe('SCHEDULE_TOPIC_XXXX');
    const put = await store.putMessage(m);
    expect(put.status).toBe('PUT_OK');
    const delivered = await waitFor(async () => {
      const q = await readQueue(store, 'RealTopic', 1);
      return q.length > 0 ? q : undefined;
    });
    expect(Date.now() - put.storeTimestamp).toBeGreaterThanOrEqual(290);
    expect(delivered).toHaveLength(1);
    const d = delivered[0] as MessageExt;
    expect(d.body?.toString()).toBe(`m${seq}`);
    expect(d.reconsumeTimes).toBe(2);
    expect(d.bornHost).toEqual({ ip: '10.1.2.3', port: 4567 });
    // RocketMQ 4.9.8 stores the properties string it had before clearing DELAY: DELAY stays, WAIT is not set.
    expect(d.properties).toMatchObject({ REAL_TOPIC: 'RealTopic', REAL_QID: '1', TAGS: 'tagA', DELAY: '2' });
    expect(d.properties?.WAIT).toBeUndefined();
    await waitFor(async () => (service.getOffset(2) === 1 ? true : undefined));
  });

  test('delivers in order per level and wakes at once for a new delayed message (not on the idle re-check)', async () => {
    const { store, service } = await open(tmpDir(), '100ms 200ms', 60_000);
    await service.start();
    await new Promise((r) => setTimeout(r, 50)); // the level tasks find their queues empty and go idle
    const t0 = Date.now();
    for (let i = 0; i < 5; i++) await store.putMessage(service.transformDelayedMessage(message('Wake', 1, `w${i}`)));
    const got = await waitFor(async () => {
      const q = await readQueue(store, 'Wake', 1);
      return q.length === 5 ? q : undefined;
    });
    expect(Date.now() - t0).toBeLessThan(3000);
    expect(got.map((m) => m.body?.toString())).toEqual(['w0', 'w1', 'w2', 'w3', 'w4']);
  });

  test('a delayed message survives a restart and is delivered exactly once', async () => {
    const dir = tmpDir();
    const first = await open(dir, '100ms 700ms');
    await first.service.start();
    // one delivered before the restart, one still pending across it
    await first.store.putMessage(first.service.transformDelayedMessage(message('Restart', 1, 'early')));
    await waitFor(async () => ((await readQueue(first.store, 'Restart', 1)).length === 1 ? true : undefined));
    await first.store.putMessage(first.service.transformDelayedMessage(message('Restart', 2, 'late')));
    await first.close();
    const saved = JSON.parse(fs.readFileSync(path.join(dir, 'config', 'delayOffset.json'), 'utf8'));
    expect(saved.offsetTable['1']).toBe(1);
    expect(saved.offsetTable['2']).toBe(0);

    const second = await open(dir, '100ms 700ms');
    await second.service.start();
    const got = await waitFor(async () => {
      const q = await readQueue(second.store, 'Restart', 1);
      return q.length >= 2 ? q : undefined;
    });
    await new Promise((r) => setTimeout(r, 300));
    const after = await readQueue(second.store, 'Restart', 1);
    expect(after.map((m) => m.body?.toString())).toEqual(['early', 'late']);
    expect(got).toHaveLength(2);
  });

  test('a batch interrupted by a crash between the puts and the progress is finished without duplicates', async () => {
    const dir = tmpDir();
    const a = await open(dir, '100ms');
    // three due messages on level 1, the service not started (as if it crashed mid-batch)
    for (const b of ['c0', 'c1', 'c2'])
      await a.store.putMessage(a.service.transformDelayedMessage(message('Crash', 1, b)));
    const scheduled = await readQueue(a.store, 'SCHEDULE_TOPIC_XXXX', 0);
    expect(scheduled).toHaveLength(3);
    // the crashed run had put the first one already
    const copy = messageTimeUp(scheduled[0] as MessageExt);
    expect(copy).not.toBeNull();
    await a.store.putMessage(copy as MessageToStore);
    await a.store.shutdown();
    fs.mkdirSync(path.join(dir, 'config'), { recursive: true });
    fs.writeFileSync(
      path.join(dir, 'config', 'delayOffset.json'),
      JSON.stringify({
        offsetTable: { '1': 0 },
        inflight: { '1': { from: 0, to: 3, floors: [{ topic: 'Crash', queueId: 1, offset: 0 }] } },
      }),
    );
    const b = await open(dir, '100ms');
    await b.service.start();
    expect(b.service.getOffset(1)).toBe(3);
    const got = await readQueue(b.store, 'Crash', 1);
    expect(got.map((m) => m.body?.toString())).toEqual(['c0', 'c1', 'c2']);
    const saved = JSON.parse(fs.readFileSync(path.join(dir, 'config', 'delayOffset.json'), 'utf8'));
    expect(saved.inflight).toEqual({});
  });
});
