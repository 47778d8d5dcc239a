/**
 * The transport a client instance uses: HTTP to the bundled broker (`endpoints`), or RocketMQ's TCP
 * remoting to NameServers and brokers (`namesrvAddr`). Everything above it speaks commands only, and
 * reaches the transport only through the `RemotingClient` interface.
 */
import type { RemotingClient, ServerRequestProcessor } from '../../remoting/remoting-client.js';
import { createTransport } from '../../remoting/transport-factory.js';
import type { ResolvedClientOptions } from './client-options.js';

export type { ServerRequestProcessor } from '../../remoting/remoting-client.js';

/** Creates the transport the options ask for. */
export function createRemotingClient(o: ResolvedClientOptions): RemotingClient {
  if (o.namesrvAddr.length > 0)
    return createTransport({ kind: 'tcp', credentials: o.credentials, tls: o.tls, logger: o.logger, clock: o.clock });
  return createTransport({
    kind: 'http',
    connectionsPerBroker: o.connectionsPerBroker,
    accessToken: o.accessToken,
    credentials: o.credentials,
    tls: o.tls,
    logger: o.logger,
    clock: o.clock,
  });
}

/** A transport that carries requests from the broker to the client (TCP remoting does; HTTP does not). */
export interface ServerRequestHost {
  onServerRequest(code: number, processor: ServerRequestProcessor): () => void;
}

/** The server-request side of `remoting`, when it has one. */
export function serverRequestHost(remoting: RemotingClient): ServerRequestHost | undefined {
  const register = remoting.registerProcessor;
  if (!register) return undefined;
  return { onServerRequest: (code, processor) => register.call(remoting, code, processor) };
}
