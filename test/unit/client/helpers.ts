import type { MessageExt, MessageQueue } from '../../../src/common/message.js';

export const mqOf = (queueId: number, topic = 'T', brokerName = 'b'): MessageQueue => ({ topic, brokerName, queueId });

/** A MessageExt with just what the consumer side reads. */
export function msgAt(queueOffset: number, bodyBytes = 10, extra: Partial<MessageExt> = {}): MessageExt {
  return {
    topic: 'T',
    flag: 0,
    body: Buffer.alloc(bodyBytes),
    properties: null,
    queueId: 0,
    queueOffset,
    commitLogOffset: 1000 + queueOffset,
    sysFlag: 0,
    bornTimestamp: 0,
    bornHost: { ip: '127.0.0.1', port: 1 },
    storeTimestamp: 0,
    storeHost: { ip: '127.0.0.1', port: 2 },
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    bodyCRC: 0,
    storeSize: 100,
    msgId: `id-${queueOffset}`,
    ...extra,
  };
}

/** A hand-driven clock: timers fire only when `advance` passes them. */
export class ManualClock {
  t = 1_000_000;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void; every?: number }>();
  now = (): number => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn });
    return id as unknown as ReturnType<typeof setTimeout>;
  };
  clearTimeout = (h: unknown): void => {
    this.timers.delete(h as number);
  };
  setInterval = (fn: () => void, ms: number) => {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + ms, fn, every: ms });
    return id as unknown as ReturnType<typeof setTimeout>;
  };
  clearInterval = (h: unknown): void => {
    this.timers.delete(h as number);
  };
  get pendingTimers(): number {
    return this.timers.size;
  }
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void; every?: number }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.t = next[1].at;
      if (next[1].every) next[1].at += next[1].every;
      else this.timers.delete(next[0]);
      next[1].fn();
    }
    this.t = end;
  }
}
