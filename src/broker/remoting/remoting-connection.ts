/**
 * One remoting (TCP) client connection as the processors see it (ConnectionInfo), with what the
 * listener keeps on it: the clients that heartbeated on it, the requests in flight, the bytes it holds
 * against its budget (frames arriving, requests not yet answered, answers not yet handed to the OS),
 * and why it is not being read.
 */
import type { Socket } from 'node:net';
import { nextTick } from 'node:process';
import type { Logger } from '../../common/logger.js';
import {
  encodeRemotingCommand,
  type RemotingCommandInput,
  type SerializeType,
} from '../../remoting/remoting-command.js';
import { withoutStack } from '../../common/errors.js';
import { RemotingDecodeError } from '../../remoting/remoting-decode-error.js';
import { releasePullBody } from '../../store/index.js';
import { ClientConnection } from '../client-connection.js';
import type { ConnectionBudget } from './byte-budget.js';
import type { FrameIntake, Reservation } from './frame-intake.js';

/** Requests of one connection being worked on (not held) before its next frames are left in the socket. */
const MAX_WORKING = 64;
/** Room the broker-wide budget must have again before a connection whose answer it refused is read again. */
const STARVED_WAKE_BYTES = 1024 * 1024;

export class RemotingConnection extends ClientConnection {
  /** Client ids that sent a heartbeat on this connection, with their consumer and producer groups. */
  readonly clients = new Map<string, { consumerGroups: Set<string>; producerGroups: Set<string> }>();
  /** Peer IP (no port), for the per-address connection limit. */
  readonly peerIp: string;
  readonly budget: ConnectionBudget;
  /** Set by the listener once the socket is read through it. */
  intake: FrameIntake | undefined;
  /** Requests being handled. */
  inFlight = 0;
  /** Answer bytes written and not yet handed to the OS. */
  queuedAnswerBytes = 0;
  /** Whether a complete request has arrived (a connection that never sent one is the first evicted). */
  sentRequest = false;
  readonly openedAt: number;
  /** When bytes last came or an answer last left (the idle timeout counts from it). */
  lastActiveAt: number;
  /** When the frame being read began to arrive, and its bytes so far (for the minimum data rate). */
  frameStartedAt = 0;
  frameBytes = 0;
  /** The frame being read waits for room in the budget. */
  waitingForBudget = false;
  /** Frames are left for the next turn of the event loop (this connection had its share of this one). */
  yielding = false;
  /** An answer was refused for the budget: not read until it has room again (or this connection drains). */
  starved = false;
  /** A bad frame came: no more reading; closes once the requests read before it are answered. */
  closingSince = 0;
  /** Since when the listener has stopped reading this connection (0 while it reads), and the last time it drained some. */
  pausedSince = 0;
  lastDrainAt = 0;
  readonly #socket: Socket;
  readonly #logger: Logger;
  readonly #onDrained: (c: RemotingConnection) => void;
  readonly #onLessWork: (c: RemotingConnection) => void;
  #corked = false;
  readonly #uncork = (): void => {
    this.#corked = false;
    this.#socket.uncork();
  };

  constructor(
    socket: Socket,
    budget: ConnectionBudget,
    logger: Logger,
    now: number,
    onDrained: (c: RemotingConnection) => void,
    onLessWork: (c: RemotingConnection) => void,
  ) {
    super(`${socket.remoteAddress ?? 'unknown'}:${socket.remotePort ?? 0}`);
    this.peerIp = socket.remoteAddress ?? 'unknown';
    this.#socket = socket;
    this.budget = budget;
    this.#logger = logger;
    this.openedAt = now;
    this.lastActiveAt = now;
    this.#onDrained = onDrained;
    this.#onLessWork = onLessWork;
  }

  /** A call was suspended (no longer work): a connection not read for its work may be read again. */
  protected override heldChanged(delta: 1 | -1): void {
    if (delta === 1 && this.pausedSince) this.#onLessWork(this);
  }

  get socket(): Socket {
    return this.#socket;
  }

  /**
   * Whether its frames must wait in the socket because of what it already holds: its budget (or the
   * broker's) is spent, it does not read its answers, or it has many requests being worked on (held
   * pulls are in flight but are no work).
   */
  get saturated(): boolean {
    return this.budget.over || this.#socket.writableNeedDrain || this.inFlight - this.heldCalls >= MAX_WORKING;
  }

  /**
   * Why an answer with a body of `bytes` may not be queued now, or undefined. A connection with nothing
   * queued may always take one answer within its budget.
   */
  answerRefusal(bytes: number): string | undefined {
    const b = this.budget;
    if (this.queuedAnswerBytes > 0 && this.queuedAnswerBytes + bytes > b.limit) {
      return `this connection has ${this.queuedAnswerBytes} answer bytes waiting to be read (remotingMaxBufferedBytesPerConnection ${b.limit})`;
    }
    if (!b.shared.fits(bytes, b.used)) {
      return `the broker holds ${b.shared.used} bytes for its clients (maxBufferedBytes ${b.shared.limit})`;
    }
    return undefined;
  }

  /**
   * The budget's word on a frame of `bytes` whose length just came: taken ('ok'); 'wait' while this
   * connection's budget or the broker's has no room for it (`waitingForBudget`); or a refusal of a frame
   * larger than either limit.
   */
  reserveFrame(bytes: number): Reservation {
    const b = this.budget;
    if (bytes > b.limit || bytes > b.shared.limit) {
      const limit = Math.min(b.limit, b.shared.limit);
      return withoutStack(
        () =>
          new RemotingDecodeError(
            `frame of ${bytes} bytes is larger than the connection's byte budget of ${limit} (remotingMaxBufferedBytesPerConnection)`,
            0,
          ),
      );
    }
    this.waitingForBudget = !b.fits(bytes);
    if (this.waitingForBudget) return 'wait';
    b.take(bytes);
    return 'ok';
  }

  /**
   * Whether this connection, whose answer the budget refused, must still wait: until its own answers are
   * read and the broker's budget has room for more than a few (else each of its next requests would cost
   * the same work for the same refusal). Clears the mark when it need not.
   */
  stillStarved(): boolean {
    if (!this.starved) return false;
    if (this.queuedAnswerBytes > 0 || !this.budget.shared.fits(STARVED_WAKE_BYTES, Infinity)) return true;
    this.starved = false;
    return false;
  }

  /** Reads the socket or not, by what it holds, why it waits, and whether it is closing. */
  updateReading(): void {
    const socket = this.#socket;
    if (socket.destroyed) return;
    if (this.closingSince > 0 || this.waitingForBudget || this.yielding || this.starved || this.saturated) {
      if (!this.pausedSince) {
        this.pausedSince = Date.now();
        this.lastDrainAt = this.pausedSince;
        socket.pause();
      }
    } else if (this.pausedSince) {
      this.pausedSince = 0;
      // Time spent not being read does not count against the frame's data rate.
      this.frameStartedAt = Date.now();
      this.frameBytes = 0;
      socket.resume();
    }
  }

  /** Whether a server-initiated notice may be queued now: the client reads what it is sent. */
  get reading(): boolean {
    const s = this.#socket;
    return !this.gone && !s.destroyed && !s.writableNeedDrain && !this.budget.over;
  }

  /**
   * Writes a frame (`head`, followed by `body` when the frame's body is given apart) unless the connection
   * is gone; its bytes count against the budget until the socket has handed them to the OS. With
   * `releaseBody`, nothing but this write holds the body: a pull body's memory is handed back for reuse
   * then. Writes of one event-loop turn leave in one system call (the socket is corked for the turn).
   */
  write(head: Buffer, body?: Uint8Array | null, releaseBody = false): void {
    const socket = this.#socket;
    if (this.gone || socket.destroyed || socket.writableEnded) {
      if (releaseBody && body) releasePullBody(body);
      return;
    }
    if (!this.#corked) {
      this.#corked = true;
      socket.cork();
      nextTick(this.#uncork);
    }
    const bytes = head.length + (body?.length ?? 0);
    this.queuedAnswerBytes += bytes;
    this.budget.take(bytes);
    const done = (): void => {
      this.queuedAnswerBytes -= bytes;
      this.budget.release(bytes);
      if (releaseBody && body) releasePullBody(body);
      this.#onDrained(this);
    };
    if (body && body.length > 0) {
      socket.write(head);
      socket.write(body, done);
    } else {
      socket.write(head, done);
    }
  }

  /** Sends a server-initiated oneway request (e.g. NOTIFY_CONSUMER_IDS_CHANGED); never throws. */
  sendOneway(command: RemotingCommandInput, serializeType: SerializeType = 'JSON'): void {
    try {
      this.write(encodeRemotingCommand(command, { serializeType }));
    } catch (e) {
      this.#logger.warn({ err: e, code: command.code, remote: this.remoteAddress }, 'oneway request not sent');
    }
  }

  /** Closes the socket (the listener's 'close' handler releases what waits). */
  destroy(): void {
    this.#socket.destroy();
  }
}
