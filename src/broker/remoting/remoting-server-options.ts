/**
 * The remoting listener's options and the counters it exposes (remoting-server.ts).
 */
import type { Logger } from '../../common/logger.js';
import type { RemotingCommand, RemotingCommandInput } from '../../remoting/remoting-command.js';
import type { BrokerTls } from '../broker-tls.js';
import type { ByteBudget } from './byte-budget.js';
import type { RemotingConnection } from './remoting-connection.js';

export interface RemotingServerOptions {
  host: string;
  port: number;
  /** Largest frame accepted, bytes (length prefix included). */
  maxFrameBytes: number;
  maxConnections: number;
  /** Connections from one IP address at most (below `maxConnections`). */
  maxConnectionsPerAddress: number;
  /** Requests of one connection being handled at once before new ones are answered SYSTEM_BUSY. */
  maxInFlightPerConnection: number;
  /** A connection idle this long with nothing in flight is closed, ms. */
  idleTimeoutMs: number;
  /** A connection that has not sent one complete request this long after opening is closed, ms. */
  firstRequestTimeoutMs: number;
  /** A frame in progress must arrive at least this fast, bytes per second (after a short grace). */
  minFrameBytesPerSecond: number;
  /** Bytes one connection may hold (frames arriving, requests not answered, answers not sent). */
  maxBufferedBytesPerConnection: number;
  /** The broker-wide budget those bytes are also counted against (shared with the HTTP listener). */
  budget: ByteBudget;
  /** A connection not read because of its budget, that drains nothing for this long, is closed, ms. */
  drainTimeoutMs: number;
  /**
   * TLS on this port (RocketMQ's `tls.server.mode` permissive or enforcing); plain only when absent. A
   * handshake has `firstRequestTimeoutMs` to finish.
   */
  tls?: BrokerTls | undefined;
  logger: Logger;
  /**
   * Answers one request: the response (its opaque, flag and serialization are set here), or null for
   * none. Must not throw; a rejection is answered SYSTEM_ERROR.
   */
  onRequest(command: RemotingCommand, connection: RemotingConnection): Promise<RemotingCommandInput | null>;
  /** Called once when a connection has closed, after its waiting calls were released. */
  onClose?(connection: RemotingConnection): void;
  /** A client's answer to a request the broker sent it (GET_CONSUMER_RUNNING_INFO forwarded to a consumer). */
  onResponse?(command: RemotingCommand, connection: RemotingConnection): void;
  /** Told of each answered request: its code, the answer's code and when it began (performance.now()). */
  onAnswered?(requestCode: number, responseCode: number, startedAt: number): void;
}

/** What the listener holds and what its bounds did, since start (for tests and tools). */
export interface RemotingListenerStats {
  connections: number;
  /** Connections the listener does not read now (their budget, unread answers, a refused answer, their turn). */
  notReading: number;
  /** Bytes the listener's connections hold now, and the most one connection holds now. */
  bufferedBytes: number;
  maxConnectionBytes: number;
  /** The most one connection ever held. */
  peakConnectionBytes: number;
  /** The broker-wide budget now and at its highest (both listeners). */
  budgetUsedBytes: number;
  budgetPeakBytes: number;
  /** Frames refused when their length came (larger than a connection's budget or `maxFrameBytes`). */
  refusedFrames: number;
  /** Requests or answers replaced by SYSTEM_BUSY because of the byte budgets or the in-flight bound. */
  busyAnswers: number;
  /** Connections closed: never sent a request in time, evicted to make room, too slow, did not drain, idle. */
  closedNoRequest: number;
  evictedConnections: number;
  closedSlowFrames: number;
  closedUndrained: number;
  closedIdle: number;
  /** New connections refused at once (limits reached, nothing to evict). */
  refusedConnections: number;
}

/** The stats that count events since start. */
export type Counter = Exclude<
  keyof RemotingListenerStats,
  | 'connections'
  | 'notReading'
  | 'bufferedBytes'
  | 'maxConnectionBytes'
  | 'peakConnectionBytes'
  | 'budgetUsedBytes'
  | 'budgetPeakBytes'
>;
