/**
 * The transport a client instance uses: HTTP to the bundled broker (`endpoints`), or RocketMQ's TCP
 * remoting to NameServers and brokers (`namesrvAddr`). Everything above it speaks commands only.
 */
import type { RemotingRequest, RemotingResponse } from '../../protocol/command.js';
import { HttpRemotingClient } from '../../remoting/http-remoting-client.js';
import type { RemotingClient } from '../../remoting/remoting-client.js';
import { TcpRemotingClient, type ServerRequest } from '../../remoting/tcp-remoting-client.js';
import type { ResolvedClientOptions } from './client-options.js';

/** Creates the transport the options ask for. */
export function createRemotingClient(o: ResolvedClientOptions): RemotingClient {
  if (o.namesrvAddr.length > 0) return new TcpRemotingClient({ logger: o.logger, clock: o.clock });
  return new HttpRemotingClient({
    connectionsPerBroker: o.connectionsPerBroker,
    accessToken: o.accessToken,
    logger: o.logger,
    clock: o.clock,
  });
}

/** Serves one request a broker sent; `undefined` for no answer. */
export type ServerRequestProcessor = (request: RemotingRequest, addr: string) => Promise<RemotingResponse | undefined>;

/** A transport that carries requests from the broker to the client (TCP remoting does; HTTP does not). */
export interface ServerRequestHost {
  onServerRequest(code: number, processor: ServerRequestProcessor): () => void;
}

/** The server-request side of `remoting`, when it has one. */
export function serverRequestHost(remoting: RemotingClient): ServerRequestHost | undefined {
  if (!(remoting instanceof TcpRemotingClient)) return undefined;
  return {
    onServerRequest: (code, processor) =>
      remoting.onServerRequest(code, async (req: ServerRequest) => {
        const res = await processor(
          { code: req.code, header: { ...(req.extFields ?? {}) }, body: req.body ?? undefined },
          req.addr,
        );
        if (!res) return undefined;
        return { code: res.code, remark: res.remark ?? null, body: res.body ?? null };
      }),
  };
}
