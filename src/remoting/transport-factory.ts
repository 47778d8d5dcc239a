/**
 * Builds a client-side transport: RocketMQ's TCP remoting, to NameServers and brokers, or HTTP, to the
 * bundled broker. The client creates its transports here and then knows them only as `RemotingClient`,
 * so no client code names a concrete transport class.
 */
import { HttpRemotingClient, type HttpRemotingClientOptions } from './http-remoting-client.js';
import type { RemotingClient } from './remoting-client.js';
import { TcpRemotingClient, type TcpRemotingClientOptions } from './tcp-remoting-client.js';

/** Which transport, with that transport's own options. */
export type TransportOptions =
  ({ readonly kind: 'tcp' } & TcpRemotingClientOptions) | ({ readonly kind: 'http' } & HttpRemotingClientOptions);

export function createTransport(options: TransportOptions): RemotingClient {
  return options.kind === 'tcp' ? new TcpRemotingClient(options) : new HttpRemotingClient(options);
}

/** The transports' `credentials` option: the client builds it from its own options. */
export { Credentials, credentialsProblem, type AclCredentials, type CredentialsSource } from './acl-credentials.js';
export type { TlsOptions } from './tls-options.js';
