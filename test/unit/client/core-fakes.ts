/**
 * Fakes for the client-core unit tests: a RemotingClient answering from a handler (unit tests only;
 * integration tests use the real broker over HTTP). The hand-driven clock is test/support/manual-clock.ts.
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
  invokeOneway(addr: string, request: RemotingRequest, opts: InvokeOptions): Promise<void> {
    return this.invoke(addr, request, opts).then(
      () => undefined,
      () => undefined,
    );
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
