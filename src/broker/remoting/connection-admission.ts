/**
 * Who may hold a remoting connection: a global and a per-address limit, and the connections that have
 * not sent a complete request yet, oldest first. At a limit, the oldest such connection (of the same
 * address, past the per-address limit) makes room, so a flood of idle connections never locks out a
 * client that talks; `overdue` finds those that waited too long for a first request, and
 * `closeVerdict` those that hold memory without draining it or trickle a frame.
 */
import type { RemotingConnection } from './remoting-connection.js';
import type { Counter } from './remoting-server-options.js';

export interface AdmissionLimits {
  maxConnections: number;
  maxConnectionsPerAddress: number;
}

/** Whether a connection from an address may open, and the connection to close to make room for it. */
export type Admission = { admit: false } | { admit: true; evict: RemotingConnection | undefined };

export class ConnectionAdmission {
  /** Connections that have not sent a complete request yet, oldest first (the first evicted). */
  readonly #fresh = new Set<RemotingConnection>();
  readonly #perAddress = new Map<string, number>();

  constructor(private readonly limits: AdmissionLimits) {}

  /** The word on a new connection from `ip` while `open` connections are open. */
  admit(ip: string, open: number): Admission {
    const { maxConnections, maxConnectionsPerAddress } = this.limits;
    const fromIp = this.#perAddress.get(ip) ?? 0;
    const overAddress = fromIp >= maxConnectionsPerAddress;
    if (!overAddress && open < maxConnections) return { admit: true, evict: undefined };
    for (const c of this.#fresh) {
      // Past the per-address limit only that address's own connections make room.
      if (overAddress && c.peerIp !== ip) continue;
      return { admit: true, evict: c };
    }
    return { admit: false };
  }

  opened(connection: RemotingConnection): void {
    this.#fresh.add(connection);
    this.#perAddress.set(connection.peerIp, (this.#perAddress.get(connection.peerIp) ?? 0) + 1);
  }

  /** `connection` sent its first complete request. */
  requested(connection: RemotingConnection): void {
    this.#fresh.delete(connection);
  }

  closed(connection: RemotingConnection): void {
    this.#fresh.delete(connection);
    const n = (this.#perAddress.get(connection.peerIp) ?? 1) - 1;
    if (n <= 0) this.#perAddress.delete(connection.peerIp);
    else this.#perAddress.set(connection.peerIp, n);
  }

  /** Connections open `timeoutMs` or longer without a complete request, oldest first. */
  *overdue(now: number, timeoutMs: number): Generator<RemotingConnection> {
    for (const c of this.#fresh) {
      if (now - c.openedAt < timeoutMs) return;
      yield c;
    }
  }
}

/** How long a frame may arrive before its data rate is judged, ms. */
export const FRAME_RATE_GRACE_MS = 2000;

/** Why the listener closes a connection it holds, for its counter and its (rate-limited) warning. */
export interface CloseVerdict {
  counter: Counter;
  fields: Record<string, unknown>;
  message: string;
}

export const NO_REQUEST: Omit<CloseVerdict, 'fields'> = {
  counter: 'closedNoRequest',
  message: 'remoting connection sent no request in time, closed',
};

/**
 * Whether a connection may be kept: one over its byte budget must drain within `drainTimeoutMs`, a
 * frame in progress must arrive at `minFrameBytesPerSecond` once it has had FRAME_RATE_GRACE_MS, and a
 * connection with no traffic and nothing in flight is kept `idleTimeoutMs` (RocketMQ warns on an idle
 * close too). The listener checks this periodically rather than with a timer per socket, which Node
 * re-arms on every read and write.
 */
export function closeVerdict(
  c: RemotingConnection,
  now: number,
  limits: { drainTimeoutMs: number; minFrameBytesPerSecond: number; idleTimeoutMs: number },
): CloseVerdict | undefined {
  if (c.pausedSince) {
    if (now - c.lastDrainAt <= limits.drainTimeoutMs) return undefined;
    return {
      counter: 'closedUndrained',
      fields: { remote: c.remoteAddress, heldBytes: c.budget.used },
      message: 'remoting connection over its byte budget did not drain in time, closed',
    };
  }
  const elapsed = now - c.frameStartedAt;
  if (
    c.intake?.inProgress &&
    elapsed > FRAME_RATE_GRACE_MS &&
    c.frameBytes < (limits.minFrameBytesPerSecond * elapsed) / 1000
  ) {
    return {
      counter: 'closedSlowFrames',
      fields: { remote: c.remoteAddress, bytes: c.frameBytes, ms: elapsed },
      message: 'remoting frame arriving slower than the minimum data rate, connection closed',
    };
  }
  if (c.inFlight > 0 || now - c.lastActiveAt < limits.idleTimeoutMs) return undefined;
  return {
    counter: 'closedIdle',
    fields: { remote: c.remoteAddress, idleMs: now - c.lastActiveAt },
    message: 'remoting connection with no traffic and nothing in flight, closed as idle',
  };
}
