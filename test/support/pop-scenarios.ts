/**
 * Two POP push-consumer scenarios that run against the bundled broker and against RocketMQ 5.3.3: a
 * member killed mid-batch (what it held comes back to a survivor after its invisible time), and eight
 * members started together on a four-queue topic (all receive, none twice). Each suite passes how to
 * make a member and how to send; the checks are the same.
 */
import type { MessageExt } from '../../src/common/message.js';
import { MQClientInstance } from '../../src/client/instance/mq-client-instance.js';
import type { PushConsumer } from '../../src/client/consumer/push/push-consumer.js';
import type { PushConsumerOptions } from '../../src/client/consumer/push/push-consumer-options.js';
import { waitFor } from './broker-fixture.js';

export const body = (m: { body?: Buffer | Uint8Array | null | undefined }): string => m.body?.toString() ?? '';

/** Counts deliveries per body. */
export class Seen {
  readonly count = new Map<string, number>();
  add(msgs: MessageExt[]): void {
    for (const m of msgs) this.count.set(body(m), (this.count.get(body(m)) ?? 0) + 1);
  }
  duplicates(): string[] {
    return [...this.count].filter(([, n]) => n > 1).map(([b]) => b);
  }
}

export interface PopScenario {
  /** A new POP push consumer of `group` subscribed to `topic` (not started), with `extra` options. */
  member(extra?: Partial<PushConsumerOptions>): PushConsumer;
  /** Sends `bodies` to the scenario's topic. */
  send(bodies: string[]): Promise<void>;
  /** How long each wait may take, ms. */
  timeoutMs: number;
  /** Resolves true once the broker holds nothing in flight for the group (when the suite can tell). */
  allAcked?: () => boolean | Promise<boolean>;
}

/**
 * A member takes a batch and is killed (its transport closed, listeners still running, nothing
 * acknowledged); a survivor then gets every message, what the dead member held with reconsumeTimes 1.
 */
export async function killedMidBatch(
  s: PopScenario,
  o: { messages: number; invisibleMs: number; survivorInvisibleMs: number },
): Promise<void> {
  const bodies = Array.from({ length: o.messages }, (_, i) => `k${i}`);
  await s.send(bodies);
  const held: MessageExt[] = [];
  const never = new Promise<void>(() => undefined);
  const instanceName = `dying_${process.pid}_${Date.now().toString(36)}`;
  const dying = s.member({ instanceName, popInvisibleTimeMs: o.invisibleMs, popBatchNums: 8 });
  dying.registerMessageListener((msgs) => {
    held.push(...msgs);
    return never;
  });
  await dying.start();
  await waitFor(() => held.length > 0, s.timeoutMs);
  // The kill: the member's transport goes, with its listeners still running and nothing acknowledged.
  const inst = MQClientInstance.acquire({ ...dying.options, instanceName });
  void inst.remoting.close();
  const heldBodies = new Set(held.map(body));
  const seen = new Seen();
  const redelivered: number[] = [];
  const survivor = s.member({ popInvisibleTimeMs: o.survivorInvisibleMs });
  survivor.registerMessageListener((msgs) => {
    seen.add(msgs);
    for (const m of msgs) if (heldBodies.has(body(m))) redelivered.push(m.reconsumeTimes);
  });
  try {
    await survivor.start();
    await waitFor(() => bodies.every((b) => seen.count.has(b)), s.timeoutMs * 2);
    if (s.allAcked) await waitFor(s.allAcked, s.timeoutMs);
    expect(seen.duplicates()).toEqual([]);
    // Every message the killed member held came back, after its invisible time, with reconsumeTimes 1.
    expect(redelivered.length).toBe(heldBodies.size);
    expect(redelivered.every((n) => n === 1)).toBe(true);
  } finally {
    await survivor.shutdown();
    await dying.shutdown({ timeoutMs: 0 });
    await inst.release();
  }
}

/** Eight members started together; `messages` sent once all are ready: every member gets some, none twice. */
export async function eightTogether(
  s: PopScenario,
  o: { messages: number; workMs: number; extra?: Partial<PushConsumerOptions> },
): Promise<void> {
  const seen = new Seen();
  const per = Array.from({ length: 8 }, () => 0);
  const members = per.map((_, i) => {
    // A low flow-control threshold and a little work per message: no member can take everything.
    const c = s.member({ popBatchNums: 4, consumeThreadMax: 2, popThresholdForQueue: 8, ...o.extra });
    c.registerMessageListener(async (msgs) => {
      seen.add(msgs);
      per[i]! += msgs.length;
      await new Promise((r) => setTimeout(r, o.workMs));
    });
    return c;
  });
  try {
    await Promise.all(members.map((c) => c.start()));
    await Promise.all(members.map((c) => c.ready));
    const bodies = Array.from({ length: o.messages }, (_, i) => `e${i}`);
    await s.send(bodies);
    await waitFor(() => bodies.every((b) => seen.count.has(b)), s.timeoutMs * 2);
    if (s.allAcked) await waitFor(s.allAcked, s.timeoutMs);
    expect(seen.duplicates()).toEqual([]);
    expect(per.filter((n) => n === 0)).toEqual([]);
  } finally {
    await Promise.all(members.map((c) => c.shutdown()));
  }
}
