/**
 * The broker's RocketMQ remoting listener (RocketMQ: NettyRemotingServer), on node:net only: a thin
 * shell that splits a connection's bytes into RocketMQ frames, hands each request to `onRequest`, and
 * writes the answer back with the request's `opaque`, the response flag and the request's header
 * serialization (JSON or ROCKETMQ).
 *
 * - Many requests run at once on one connection: a held pull does not delay the calls behind it.
 *   Past `maxInFlightPerConnection` a request is answered SYSTEM_BUSY, as RocketMQ does when its
 *   executor queue is full. A oneway request (flag bit 1) is run and never answered.
 * - Memory is bounded in bytes (byte-budget.ts): a frame is reserved in full when its length arrives
 *   (or refused, when larger than a connection's budget), a request stays charged until answered, and
 *   an answer until the OS has taken it. A connection past its budget, or while the broker's is spent,
 *   is not read; one that does not drain within `drainTimeoutMs` is closed. An answer with a body that
 *   would pass the budget is replaced by SYSTEM_BUSY (the client pulls again).
 * - A frame that cannot be read (a lying length, a length above `maxFrameBytes`, an unknown serialize
 *   type, a header that does not parse) stops the reading of that connection: the requests read before
 *   it are answered, then the connection is closed, with the reason logged; the others go on.
 * - When a connection closes, everything it had waiting is released (held pulls are dropped) and
 *   `onClose` runs (the broker forgets the clients that heartbeated on it).
 * - Reading is shared: past a short share of an event-loop turn, a connection with more frames waits for
 *   a later turn (TurnShare), and one whose answer the budget refused is not read until there is room.
 * - Fairness: at most `maxConnections` connections and `maxConnectionsPerAddress` from one IP; at the
 *   limit, the oldest connection that never sent a complete request makes room for the new one. A
 *   connection with no complete request within `firstRequestTimeoutMs`, or a frame arriving slower than
 *   `minFrameBytesPerSecond`, is closed; so is one with no traffic and nothing in flight for
 *   `idleTimeoutMs` (RocketMQ: serverChannelMaxIdleTimeSeconds).
 */
import type { AddressInfo, Socket } from 'node:net';
import { ResponseCode } from '../protocol/index.js';
import {
  decodeRemotingCommand,
  frameSerializeType,
  isOneway,
  isResponse,
  type RemotingCommand,
  type RemotingCommandInput,
  type SerializeType,
} from '../remoting/remoting-command.js';
import { releasePullBody } from '../store/index.js';
import { ConnectionBudget } from './remoting/byte-budget.js';
import { RareLog } from './rare-log.js';
import {
  ConnectionAdmission,
  FRAME_RATE_GRACE_MS,
  NO_REQUEST,
  closeVerdict,
  type CloseVerdict,
} from './remoting/connection-admission.js';
import { noteBytesRead } from './idle-memory-reclaim.js';
import { FrameIntake, slotUntilAnswered } from './remoting/frame-intake.js';
import { RemotingConnection } from './remoting/remoting-connection.js';
import { RemotingIntake } from './remoting/tls-intake.js';
import { TurnShare } from './remoting/turn-share.js';
import type { Counter, RemotingListenerStats, RemotingServerOptions } from './remoting/remoting-server-options.js';
import { answerFrame } from './remoting/response-frame.js';

// The response encoder stays reachable here for the benchmark that compares builds.
export { encodeResponseParts } from './remoting/response-frame.js';

/** RocketMQ: the remark of a request refused because the server is overloaded. */
const OVERLOAD_REMARK = '[OVERLOAD]system busy, start flow control for a while';
/** After a bad frame, the requests read before it get this long to be answered before the connection closes. */
const CLOSE_GRACE_MS = 5000;
/** Frames of one connection read in one turn of the event loop before the others get theirs. */
const FRAMES_PER_TURN = 32;
/** Reading time of one turn of the event loop past which connections with more frames wait for the next, ms. */
const TURN_BUDGET_MS = 2;

export class RemotingServer {
  private readonly intake: RemotingIntake;
  private readonly options: RemotingServerOptions;
  private readonly connections = new Set<RemotingConnection>();
  private readonly admission: ConnectionAdmission;
  /** Connections whose next frame waits for room in the broker-wide budget. */
  private readonly waiting = new Set<RemotingConnection>();
  /** Connections that stopped being read after a bad frame and close once answered. */
  private readonly closingConnections = new Set<RemotingConnection>();
  private readonly unsubscribeBudget: () => void;
  private readonly sweeper: ReturnType<typeof setInterval>;
  private readonly counters: Record<Counter, number> = {
    refusedFrames: 0,
    busyAnswers: 0,
    closedNoRequest: 0,
    evictedConnections: 0,
    closedSlowFrames: 0,
    closedUndrained: 0,
    closedIdle: 0,
    refusedConnections: 0,
  };
  private peakConnectionBytes = 0;
  private readonly rareLog: RareLog;
  private active = 0;
  private idleWaiters: Array<() => void> = [];
  private closing: Promise<void> | undefined;
  private readonly turns = new TurnShare<RemotingConnection>(TURN_BUDGET_MS, (c) => {
    c.yielding = false;
    this.pump(c, true);
  });

  constructor(options: RemotingServerOptions) {
    this.options = options;
    this.admission = new ConnectionAdmission(options);
    this.rareLog = new RareLog(options.logger);
    this.intake = new RemotingIntake(options, this.rareLog, (socket) => this.onConnection(socket));
    this.unsubscribeBudget = options.budget.whenFree(() => {
      for (const c of [...this.waiting]) if (!c.stillStarved()) this.pump(c);
    });
    const { firstRequestTimeoutMs: first, drainTimeoutMs: drain, idleTimeoutMs: idle } = options;
    const every = Math.max(20, Math.min(1000, first / 4, drain / 4, idle / 4, FRAME_RATE_GRACE_MS / 2));
    this.sweeper = setInterval(() => this.sweep(), every);
    this.sweeper.unref();
  }

  /** Number of open connections. */
  get connectionCount(): number {
    return this.connections.size;
  }

  /** Open connections (for server-initiated requests). */
  allConnections(): Iterable<RemotingConnection> {
    return this.connections;
  }

  stats(): RemotingListenerStats {
    let buffered = 0;
    let max = 0;
    let notReading = 0;
    for (const c of this.connections) {
      if (c.pausedSince) notReading++;
      buffered += c.budget.used;
      max = Math.max(max, c.budget.used);
      this.peakConnectionBytes = Math.max(this.peakConnectionBytes, c.budget.peak);
    }
    return {
      connections: this.connections.size,
      notReading,
      bufferedBytes: buffered,
      maxConnectionBytes: max,
      peakConnectionBytes: this.peakConnectionBytes,
      budgetUsedBytes: this.options.budget.used,
      budgetPeakBytes: this.options.budget.peak,
      ...this.counters,
    };
  }

  /** Binds; resolves with the bound port. */
  listen(): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (e: Error): void => reject(e);
      this.intake.server.once('error', onError);
      this.intake.server.listen({ port: this.options.port, host: this.options.host }, () => {
        this.intake.server.off('error', onError);
        this.intake.server.on('error', (e) => this.options.logger.error({ err: e }, 'remoting server error'));
        resolve((this.intake.server.address() as AddressInfo).port);
      });
    });
  }

  /** Stops accepting connections; calls in flight go on. */
  stopAccepting(): void {
    this.closing ??= this.intake.stop();
  }

  /** Waits up to `timeoutMs` for calls in flight, then closes every connection. Idempotent. */
  async close(timeoutMs: number): Promise<void> {
    this.stopAccepting();
    if (this.active > 0) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      await new Promise<void>((r) => {
        this.idleWaiters.push(r);
        timer = setTimeout(r, timeoutMs);
      });
      clearTimeout(timer);
    }
    clearInterval(this.sweeper);
    this.unsubscribeBudget();
    for (const c of this.connections) c.destroy();
    for (const c of this.closingConnections) c.destroy();
    await this.closing;
  }

  private onConnection(socket: Socket): void {
    const o = this.options;
    const ip = socket.remoteAddress ?? 'unknown';
    const admission = this.admission.admit(ip, this.connections.size);
    if (admission.admit && admission.evict) {
      const victim = admission.evict;
      this.counters.evictedConnections++;
      this.rareLog.warn(
        'evict',
        { remote: victim.remoteAddress, evicted: this.counters.evictedConnections },
        'remoting connection that never sent a request closed to make room for a new one',
      );
      this.forget(victim);
      victim.destroy();
    }
    if (!admission.admit) {
      this.counters.refusedConnections++;
      this.rareLog.warn(
        'refuse',
        { remote: ip, max: o.maxConnections, maxPerAddress: o.maxConnectionsPerAddress },
        'remoting connection refused: too many connections',
      );
      socket.on('error', () => undefined);
      socket.destroy();
      return;
    }
    const budget = new ConnectionBudget(o.maxBufferedBytesPerConnection, o.budget);
    const connection = new RemotingConnection(
      socket,
      budget,
      o.logger,
      Date.now(),
      (c) => this.drained(c),
      // Not from inside the processor that suspended the call: after it, as any other answer's end.
      (c) => queueMicrotask(() => this.pump(c)),
    );
    connection.intake = new FrameIntake(o.maxFrameBytes, (bytes) => {
      const word = connection.reserveFrame(bytes);
      if (word === 'ok') this.waiting.delete(connection);
      else if (word === 'wait' && !connection.budget.shared.fits(bytes, connection.budget.used))
        this.waiting.add(connection);
      return word;
    });
    this.connections.add(connection);
    this.admission.opened(connection);
    socket.on('data', (chunk: Buffer) => {
      const intake = connection.intake as FrameIntake;
      connection.lastActiveAt = Date.now();
      if (!intake.inProgress) {
        connection.frameStartedAt = connection.lastActiveAt;
        connection.frameBytes = 0;
      }
      connection.frameBytes += chunk.length;
      noteBytesRead(chunk.length);
      intake.push(chunk);
      // A frame still arriving is read a turn's share at a time too (libuv reads 32 chunks a socket a turn).
      if (!connection.yielding && !intake.frameReady && this.turns.spent()) this.waitForLaterTurn(connection);
      this.pump(connection);
    });
    socket.on('drain', () => this.pump(connection));
    socket.on('error', (e: NodeJS.ErrnoException) => {
      if (e.code !== 'ECONNRESET' && e.code !== 'EPIPE')
        o.logger.warn({ err: e, remote: connection.remoteAddress }, 'remoting connection error');
    });
    socket.on('close', () => {
      this.forget(connection);
      this.closingConnections.delete(connection);
      connection.intake?.clear();
      connection.budget.close();
      this.peakConnectionBytes = Math.max(this.peakConnectionBytes, connection.budget.peak);
      connection.markGone();
      try {
        o.onClose?.(connection);
      } catch (e) {
        o.logger.error({ err: e }, 'remoting connection close handler failed');
      }
    });
  }

  /** Takes a closed (or closing) connection out of the listener's books. */
  private forget(connection: RemotingConnection): void {
    if (!this.connections.delete(connection)) return;
    this.admission.closed(connection);
    this.waiting.delete(connection);
    this.turns.forget(connection);
  }

  /**
   * Reads the complete frames `connection` has buffered, as far as its budget allows: at least one, then
   * while the event loop's turn has time left (TurnShare) and at most FRAMES_PER_TURN; the rest wait for a
   * later turn (the socket is not read meanwhile), so that one connection's pipelined requests do not
   * hold up every other connection's. A connection that has not sent a request yet waits even for its
   * first frame once the turn is spent, in a lane of its own (TurnShare): a wave of new connections is
   * answered over several turns, the clients already talking read in between. A connection that does not
   * read its answers, or has many requests being worked on, is not read. `resumed`: from a deferred lane.
   */
  private pump(connection: RemotingConnection, resumed = false): void {
    const intake = connection.intake as FrameIntake;
    let frames = 0;
    while (!connection.closingSince && !connection.gone && !connection.yielding && !connection.starved) {
      if (connection.saturated) break;
      const turnTaken =
        frames > 0
          ? frames === FRAMES_PER_TURN || this.turns.spent()
          : !resumed && !connection.sentRequest && intake.frameReady && this.turns.spent();
      if (turnTaken) {
        this.waitForLaterTurn(connection);
        break;
      }
      frames++;
      let frame: Buffer | null | 'wait';
      try {
        frame = intake.next();
      } catch (e) {
        this.counters.refusedFrames++;
        this.closeAfterAnswers(connection, e);
        break;
      }
      if (frame === null || frame === 'wait') break;
      let slot = intake.takePooled();
      const charged = frame.length + 4;
      if (!intake.inProgress) connection.frameBytes = 0;
      else {
        connection.frameStartedAt = Date.now();
        connection.frameBytes = intake.buffered;
      }
      let command: RemotingCommand;
      const serializeType = frameSerializeType(frame) ?? 'JSON';
      try {
        command = decodeRemotingCommand(frame);
        slot = slotUntilAnswered(command, slot);
      } catch (e) {
        if (slot) releasePullBody(slot);
        connection.budget.release(charged);
        this.closeAfterAnswers(connection, e);
        break;
      }
      if (!connection.sentRequest) {
        connection.sentRequest = true;
        this.admission.requested(connection);
      }
      // A response goes to whoever waits for it; one to a oneway notification finds nobody.
      if (isResponse(command.flag)) {
        connection.budget.release(charged);
        this.options.onResponse?.(command, connection);
        continue;
      }
      this.dispatch(connection, command, serializeType, charged, slot);
    }
    connection.updateReading();
  }

  /** `connection` is not read until a later turn, in the newcomers' lane while it has sent no request. */
  private waitForLaterTurn(connection: RemotingConnection): void {
    connection.yielding = true;
    this.turns.defer(connection, !connection.sentRequest);
  }

  /** An answer of `connection` was handed to the OS: it may be read again, or finish closing. */
  private drained(connection: RemotingConnection): void {
    connection.lastDrainAt = Date.now();
    connection.lastActiveAt = connection.lastDrainAt;
    if (connection.closingSince) {
      this.endIfAnswered(connection);
      return;
    }
    // Frames left unread while the budget was over are read now that some of it came back.
    if (!connection.stillStarved()) this.pump(connection);
  }

  /** Stops reading after a bad frame; the requests read before it are answered, then the connection closes. */
  private closeAfterAnswers(connection: RemotingConnection, e: unknown): void {
    // A flood of bad frames must not become a flood of log lines: the counter has them all.
    this.rareLog.warn(
      'refusedFrame',
      { err: e, remote: connection.remoteAddress, refusedFrames: this.counters.refusedFrames },
      `remoting frame refused, connection closed: ${(e as Error)?.message ?? String(e)}`,
    );
    connection.closingSince = Date.now();
    this.forget(connection);
    this.closingConnections.add(connection);
    connection.intake?.clear();
    connection.updateReading();
    this.endIfAnswered(connection);
  }

  private endIfAnswered(connection: RemotingConnection): void {
    if (connection.inFlight > 0 || connection.queuedAnswerBytes > 0) return;
    const socket = connection.socket;
    if (!socket.writableEnded) socket.end(() => socket.destroy());
  }

  /** Closes a connection the listener will not keep, counted and (rarely) logged. */
  private drop(c: RemotingConnection, verdict: CloseVerdict): void {
    this.counters[verdict.counter]++;
    this.rareLog.warn(verdict.counter, verdict.fields, verdict.message);
    this.forget(c);
    c.destroy();
  }

  /** The periodic checks: no request in time, frames too slow, connections that do not drain, closings that hang. */
  private sweep(): void {
    const o = this.options;
    const now = Date.now();
    for (const c of [...this.admission.overdue(now, o.firstRequestTimeoutMs)])
      this.drop(c, { ...NO_REQUEST, fields: { remote: c.remoteAddress } });
    for (const c of this.connections) {
      const verdict = closeVerdict(c, now, o);
      if (verdict) this.drop(c, verdict);
    }
    // A request read before a bad frame that is still not answered (a held pull) does not keep the connection.
    for (const c of this.closingConnections) {
      if (c.socket.destroyed) this.closingConnections.delete(c);
      else if (now - c.closingSince > CLOSE_GRACE_MS) {
        this.closingConnections.delete(c);
        c.destroy();
      }
    }
  }

  private dispatch(
    connection: RemotingConnection,
    command: RemotingCommand,
    serializeType: SerializeType,
    charged: number,
    slot: Buffer | null,
  ): void {
    if (connection.inFlight >= this.options.maxInFlightPerConnection) {
      connection.budget.release(charged);
      if (slot) releasePullBody(slot);
      this.counters.busyAnswers++;
      this.answer(connection, command, serializeType, {
        code: ResponseCode.SYSTEM_BUSY,
        opaque: command.opaque,
        remark: OVERLOAD_REMARK,
      });
      return;
    }
    connection.inFlight++;
    this.active++;
    void this.run(connection, command, serializeType, charged, slot);
  }

  /**
   * Handles one request and answers it (one method per request, no closures or promise chain of its own);
   * `slot`, the pooled memory its frame was gathered in, goes back to the pool then.
   */
  private async run(
    connection: RemotingConnection,
    command: RemotingCommand,
    serializeType: SerializeType,
    charged: number,
    slot: Buffer | null,
  ) {
    const startedAt = performance.now();
    try {
      let response: RemotingCommandInput | null;
      try {
        response = await this.options.onRequest(command, connection);
      } catch (e) {
        this.options.logger.error({ err: e, code: command.code }, 'remoting request handling failed');
        response = { code: ResponseCode.SYSTEM_ERROR, opaque: command.opaque, remark: 'system error' };
      }
      if (response) this.options.onAnswered?.(command.code, response.code, startedAt);
      // The request's bytes are given back before its answer is charged.
      connection.budget.release(charged);
      charged = 0;
      if (response && !connection.gone) this.answer(connection, command, serializeType, response);
      else if (response?.body) releasePullBody(response.body);
    } finally {
      if (charged) connection.budget.release(charged);
      if (slot) releasePullBody(slot);
      connection.inFlight--;
      if (--this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
      if (connection.closingSince) this.endIfAnswered(connection);
      else this.pump(connection);
    }
  }

  /** Writes the answer to `command` (nothing for a oneway request). */
  private answer(
    connection: RemotingConnection,
    command: RemotingCommand,
    serializeType: SerializeType,
    response: RemotingCommandInput,
  ): void {
    const o = this.options;
    if (isOneway(command.flag)) {
      if (response.body) releasePullBody(response.body);
      return;
    }
    const bodyLength = response.body?.length ?? 0;
    if (bodyLength > 0) {
      const why = connection.answerRefusal(bodyLength);
      if (why !== undefined) {
        releasePullBody(response.body as Uint8Array);
        this.counters.busyAnswers++;
        // Its next requests would meet the same refusal after the same work: none is read until room comes.
        connection.starved = true;
        this.waiting.add(connection);
        this.rareLog.warn(
          'busy',
          { remote: connection.remoteAddress, reason: why },
          'remoting answer refused: byte budget',
        );
        response = { code: ResponseCode.SYSTEM_BUSY, opaque: command.opaque, remark: `${OVERLOAD_REMARK}: ${why}` };
      }
    }
    const frame = answerFrame(response, command, serializeType, o.logger, connection.remoteAddress);
    // Nothing keeps a response's body after it is written (pull bodies are reused then).
    connection.write(frame.head, frame.body, true);
  }
}
