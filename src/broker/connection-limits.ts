/**
 * Limits the HTTP server applies per connection and to the number of connections, so that a client that
 * pipelines requests without reading the answers, or opens connections without end, cannot make the
 * broker buffer without bound:
 *
 * - at most `maxConnections` open connections: the server closes the ones past it at once;
 * - at most `maxInFlightRequestsPerConnection` requests handled at once per connection (HTTP/1.1
 *   pipelining): a request past it is answered SYSTEM_BUSY without being handled;
 * - while a connection's answers not yet handed to the OS pass `maxBufferedResponseBytesPerConnection`
 *   bytes, its next requests are answered SYSTEM_BUSY too.
 *
 * A SYSTEM_BUSY answer is small, and Node stops reading a connection whose queued answers pass its
 * high-water mark, so refused requests cost a bounded amount too. RocketMQ answers a full request queue
 * the same way ("[REJECTREQUEST]system busy"), and its clients retry such an answer.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from '../common/logger.js';
import { RareLog } from './rare-log.js';

export interface ConnectionLimitsOptions {
  maxConnections: number;
  maxInFlightRequestsPerConnection: number;
  maxBufferedResponseBytesPerConnection: number;
  logger: Logger;
}

interface ConnectionState {
  inFlight: number;
  bufferedBytes: number;
}

/** What the server's counters hold now (for tests and tools). */
export interface ConnectionStats {
  connections: number;
  inFlight: number;
  bufferedBytes: number;
  /** Connections closed at once because `maxConnections` were open, since start. */
  droppedConnections: number;
  /** Requests let through to be handled, since start. */
  admittedRequests: number;
  /** Requests answered SYSTEM_BUSY by these limits, since start. */
  refusedRequests: number;
}

/** Answers of a refused request end with this, so the first part of a remark says why. */
const BUSY_PREFIX = '[REJECTREQUEST]system busy, start flow control for a while: ';

export class ConnectionLimits {
  private readonly options: ConnectionLimitsOptions;
  private readonly states = new Map<Socket, ConnectionState>();
  private dropped = 0;
  private refused = 0;
  private admitted = 0;
  private readonly rareLog: RareLog;

  constructor(options: ConnectionLimitsOptions) {
    this.options = options;
    this.rareLog = new RareLog(options.logger);
  }

  /** Bounds `server`'s connections (Node closes the ones past `maxConnections`) and logs the drops. */
  attach(server: Server): void {
    server.maxConnections = this.options.maxConnections;
    server.on('drop', () => {
      this.dropped++;
      this.rareLog.warn(
        'drop',
        { maxConnections: this.options.maxConnections, droppedConnections: this.dropped },
        'connection refused: maxConnections are open',
      );
    });
  }

  /** Starts counting a new connection. */
  onConnection(socket: Socket): void {
    this.states.set(socket, { inFlight: 0, bufferedBytes: 0 });
    socket.once('close', () => this.states.delete(socket));
  }

  /**
   * Counts a request on `socket` until `res` closes; returns the remark of a SYSTEM_BUSY answer when it
   * must be refused instead (it is then not counted).
   */
  admit(socket: Socket, res: { once(event: 'close', fn: () => void): unknown }): string | undefined {
    const state = this.states.get(socket);
    if (!state) return undefined;
    const o = this.options;
    let why: string | undefined;
    if (state.inFlight >= o.maxInFlightRequestsPerConnection) {
      why = `this connection has ${state.inFlight} requests in flight (maxInFlightRequestsPerConnection); read the answers before sending more`;
    } else if (state.bufferedBytes >= o.maxBufferedResponseBytesPerConnection) {
      why = `this connection has ${state.bufferedBytes} answer bytes waiting to be read (maxBufferedResponseBytesPerConnection)`;
    }
    if (why !== undefined) {
      this.refused++;
      this.rareLog.warn('refuse', { refusedRequests: this.refused, reason: why }, 'request refused: connection limits');
      return BUSY_PREFIX + why;
    }
    state.inFlight++;
    this.admitted++;
    res.once('close', () => state.inFlight--);
    return undefined;
  }

  /** Counts `bytes` of an answer written on `socket` until `res` has handed them to the OS (or closed). */
  countResponse(
    socket: Socket,
    res: { once(event: 'finish' | 'close', fn: () => void): unknown },
    bytes: number,
  ): void {
    const state = this.states.get(socket);
    if (!state) return;
    state.bufferedBytes += bytes;
    let counted = true;
    const release = (): void => {
      if (!counted) return;
      counted = false;
      state.bufferedBytes -= bytes;
    };
    res.once('finish', release);
    res.once('close', release);
  }

  stats(): ConnectionStats {
    let inFlight = 0;
    let bufferedBytes = 0;
    for (const s of this.states.values()) {
      inFlight += s.inFlight;
      bufferedBytes += s.bufferedBytes;
    }
    return {
      connections: this.states.size,
      inFlight,
      bufferedBytes,
      droppedConnections: this.dropped,
      admittedRequests: this.admitted,
      refusedRequests: this.refused,
    };
  }
}
