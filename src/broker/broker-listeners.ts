/**
 * The broker's two listeners, opened before its store (RocketMQ: BrokerController's remoting servers):
 * the HTTP server and, when a remoting port is given, RocketMQ's TCP listener, sharing one byte budget.
 * Until the broker is built they answer SYSTEM_BUSY ("the broker is starting").
 */
import { InvalidArgumentError } from '../common/errors.js';
import { ResponseCode, type RemotingResponse } from '../protocol/index.js';
import type { AclGuard } from './acl/acl-guard.js';
import type { BrokerRequest, ConnectionInfo } from './broker-context.js';
import type { BrokerStatsManager } from './broker-stats-manager.js';
import type { ResolvedBrokerOptions } from './broker-options.js';
import { loadBrokerTls } from './broker-tls.js';
import { ConnectionLimits } from './connection-limits.js';
import { HttpServer } from './http-server.js';
import { RemotingServer } from './remoting-server.js';
import { ByteBudget } from './remoting/byte-budget.js';
import type { RemotingDispatcher } from './remoting/remoting-dispatcher.js';

/** Requests of one remoting connection handled at once before more are answered SYSTEM_BUSY. */
const REMOTING_MAX_IN_FLIGHT_PER_CONNECTION = 10_000;

const UNSPECIFIED = new Set(['0.0.0.0', '::', '[::]']);

function advertisedHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host;
}

const urlHost = (host: string): string => (host.includes(':') && !host.startsWith('[') ? `[${host}]` : host);

/** Where the listeners send what they read, once the broker exists. */
export interface ListenerTarget {
  handle(request: BrokerRequest, connection: ConnectionInfo): Promise<RemotingResponse>;
  readonly dispatcher: RemotingDispatcher | undefined;
  readonly brokerStats: BrokerStatsManager;
}

export interface OpenListeners {
  http: HttpServer;
  limits: ConnectionLimits;
  port: number;
  address: string;
  remoting: RemotingServer | undefined;
  remotingPort: number | undefined;
  remotingAddress: string | undefined;
  /** The IP message ids name (the store host). */
  storeIp: string;
  /** The byte budget both listeners share. */
  budget: ByteBudget;
}

/** Opens the listeners; `target()` is the broker once it is built. Closes what it opened on failure. */
export async function openListeners(
  o: ResolvedBrokerOptions,
  target: () => ListenerTarget | undefined,
  acl?: AclGuard,
): Promise<OpenListeners> {
  // The certificate files are read and checked first: a bad one stops the start before anything binds.
  const tls = loadBrokerTls(o.tls);
  const budget = new ByteBudget(o.maxBufferedBytes);
  const limits = new ConnectionLimits({
    maxConnections: o.maxConnections,
    maxInFlightRequestsPerConnection: o.maxInFlightRequestsPerConnection,
    maxBufferedResponseBytesPerConnection: o.maxBufferedResponseBytesPerConnection,
    logger: o.logger,
  });
  const http = new HttpServer({
    limits,
    budget,
    host: o.host,
    port: o.port,
    maxRequestBodyBytes: o.maxRequestBodyBytes,
    accessToken: o.accessToken,
    tls,
    acl,
    logger: o.logger,
    handle: (request, connection) =>
      target()
        ? target()!.handle(request, connection)
        : Promise.resolve({ code: ResponseCode.SYSTEM_BUSY, header: {}, remark: 'the broker is starting' }),
    onAnswered: (code, responseCode, startedAt) =>
      target()?.brokerStats.metrics.onRpc('http', code, responseCode, performance.now() - startedAt),
  });
  if (o.remotingPort !== undefined && o.accessToken !== undefined && acl === undefined) {
    throw new InvalidArgumentError(
      'remotingPort',
      'the remoting listener has no access control but the ACL, so it cannot be combined with accessToken without aclFile',
    );
  }
  const port = await http.listen();
  const host = advertisedHost(o.host);
  const address = o.advertisedAddress ?? `${tls ? 'https' : 'http'}://${urlHost(host)}:${port}`;
  let remoting: RemotingServer | undefined;
  let remotingPort: number | undefined;
  if (o.remotingPort !== undefined) {
    remoting = new RemotingServer({
      host: o.host,
      port: o.remotingPort,
      maxFrameBytes: o.remotingMaxFrameBytes,
      maxConnections: o.remotingMaxConnections,
      maxInFlightPerConnection: REMOTING_MAX_IN_FLIGHT_PER_CONNECTION,
      idleTimeoutMs: o.remotingIdleTimeoutMs,
      maxConnectionsPerAddress: o.remotingMaxConnectionsPerAddress,
      firstRequestTimeoutMs: o.remotingFirstRequestTimeoutMs,
      minFrameBytesPerSecond: o.remotingMinFrameBytesPerSecond,
      maxBufferedBytesPerConnection: o.remotingMaxBufferedBytesPerConnection,
      budget,
      drainTimeoutMs: o.remotingDrainTimeoutMs,
      tls,
      logger: o.logger,
      onRequest: (command, connection) =>
        target()?.dispatcher
          ? target()!.dispatcher!.onRequest(command, connection)
          : Promise.resolve({
              code: ResponseCode.SYSTEM_BUSY,
              opaque: command.opaque,
              remark: 'the broker is starting',
            }),
      onClose: (connection) => target()?.dispatcher?.onConnectionClosed(connection),
      onResponse: (command, connection) => target()?.dispatcher?.onResponse(command, connection),
      onAnswered: (code, responseCode, startedAt) =>
        target()?.brokerStats.metrics.onRpc('remoting', code, responseCode, performance.now() - startedAt),
    });
    try {
      remotingPort = await remoting.listen();
    } catch (e) {
      await http.close(0);
      throw e;
    }
  }
  const storeIp = UNSPECIFIED.has(o.host) ? '127.0.0.1' : host;
  const remotingAddress = remotingPort === undefined ? undefined : `${storeIp}:${remotingPort}`;
  return { http, limits, port, address, remoting, remotingPort, remotingAddress, storeIp, budget };
}
