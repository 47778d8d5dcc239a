/**
 * Fakes for the client-core unit tests: a RemotingClient answering from a handler (unit tests only;
 * integration tests use the real broker over HTTP), and a hand-driven clock.
 */
import type { RemotingRequest, RemotingResponse } from '../../../src/protocol/command.js';
import type { InvokeOptions, RemotingClient } from '../../../src/remoting/remoting-client.js';
import type { TopicRouteData } from '../../../src/protocol/index.js';

export interface Call {
  addr: string;
  request: RemotingRequest;
  opts: InvokeOptions;
}

export type Handler = (
  addr: string,
  request: RemotingRequest,
  opts: InvokeOptions,
) => RemotingResponse | Promise<RemotingResponse>;

export class FakeRemotingClient implements RemotingClient {
  readonly calls: Call[] = [];
  closed = 0;
  constructor(public handler: Handler) {}
  async invoke(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<RemotingResponse> {
    this.calls.push({ addr, request, opts });
    return this.handler(addr, request, opts);
  }
  invokeOneway(addr: string, request: RemotingRequest, opts: InvokeOptions): void {
    this.invoke(addr, request, opts).catch(() => undefined);
  }
  async close(): Promise<void> {
    this.closed++;
  }
  callsOf(code: number): Call[] {
    return this.calls.filter((c) => c.request.code === code);
  }
}

export const ok = (header: Record<string, unknown> = {}, body?: Buffer): RemotingResponse => ({
  code: 0,
  header,
  body,
});
export const json = (v: unknown): Buffer => Buffer.from(JSON.stringify(v));

/** A route with one queue data per broker `name → address`. */
export function routeOf(brokers: Record<string, string>, queues = 4, perm = 6): TopicRouteData {
  return {
    brokerDatas: Object.entries(brokers).map(([brokerName, addr]) => ({
      cluster: 'DefaultCluster',
      brokerName,
      brokerAddrs: { '0': addr },
    })),
    queueDatas: Object.keys(brokers).map((brokerName) => ({
      brokerName,
      readQueueNums: queues,
      writeQueueNums: queues,
      perm,
      topicSysFlag: 0,
    })),
  };
}

/** A hand-driven clock: timers fire only when `advance` passes them. */
export class TestClock {
  t = 1_700_000_000_000;
  #seq = 0;
  readonly #timers = new Map<number, { at: number; fn: () => void; every?: number }>();
  now = (): number => this.t;
  setTimeout = (fn: () => void, ms: number) => {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.t + ms, fn });
    return id as unknown as ReturnType<typeof setTimeout>;
  };
  clearTimeout = (h: unknown): void => {
    this.#timers.delete(h as number);
  };
  setInterval = (fn: () => void, ms: number) => {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.t + ms, fn, every: ms });
    return id as unknown as ReturnType<typeof setTimeout>;
  };
  clearInterval = (h: unknown): void => {
    this.#timers.delete(h as number);
  };
  get pendingTimers(): number {
    return this.#timers.size;
  }
  /** Moves time forward, firing due timers in order; yields to promises between timers. */
  async advance(ms: number): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void; every?: number }] | undefined;
      for (const e of this.#timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.t = next[1].at;
      if (next[1].every) next[1].at += next[1].every;
      else this.#timers.delete(next[0]);
      next[1].fn();
      await flush();
    }
    this.t = end;
    await flush();
  }
}

/** Lets queued promise callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await Promise.resolve();
}
