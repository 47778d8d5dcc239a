/**
 * TLS on the remoting port (RocketMQ: NettyRemotingServer's TlsModeHandler): the first byte a new
 * connection sends tells a TLS handshake (0x16, a handshake record) from RocketMQ's plain framing. A
 * handshake goes through a TLS server that never listens itself and comes back as a TLSSocket once
 * secure; a plain connection is served as it is in `permissive` mode and closed in `enforcing` mode.
 * Refusals and failed handshakes are logged rarely (a scanner must not flood the log) and never throw.
 */
import net, { type Socket } from 'node:net';
import tls from 'node:tls';
import type { BrokerTls } from '../broker-tls.js';
import type { RareLog } from '../rare-log.js';

/** The first byte of a TLS handshake record. */
const TLS_HANDSHAKE = 0x16;

export interface TlsIntakeOptions {
  tls: BrokerTls;
  /** How long a new connection may take to send its first byte and finish its handshake, ms. */
  handshakeTimeoutMs: number;
  rareLog: RareLog;
  /** A connection ready for RocketMQ frames: plain, or TLS once secure. */
  onSocket(socket: Socket): void;
}

export class TlsIntake {
  readonly #o: TlsIntakeOptions;
  readonly #server: tls.Server;
  /**
   * Raw connections not handed on as they are: waiting for their first byte, or carrying TLS (the
   * TLSSocket above them is the listener's; destroying the raw one at close() ends both).
   */
  readonly #pending = new Set<Socket>();
  /** Plain connections closed by `enforcing` mode, and handshakes that failed, since start. */
  refusedPlain = 0;
  failedHandshakes = 0;

  constructor(options: TlsIntakeOptions) {
    this.#o = options;
    this.#server = tls.createServer({
      cert: options.tls.cert,
      key: options.tls.key,
      handshakeTimeout: options.handshakeTimeoutMs,
    });
    this.#server.on('secureConnection', (socket: tls.TLSSocket) => options.onSocket(socket));
    this.#server.on('tlsClientError', (err: NodeJS.ErrnoException, socket: tls.TLSSocket) => {
      this.failedHandshakes++;
      options.rareLog.warn(
        'tls-handshake',
        { remote: socket.remoteAddress, err: err.message, failed: this.failedHandshakes },
        'remoting TLS handshake failed; connection closed',
      );
      socket.destroy();
    });
  }

  /** Takes a new connection: waits for its first byte, then serves it as TLS or plain, or closes it. */
  accept(socket: Socket): void {
    const o = this.#o;
    this.#pending.add(socket);
    const ignore = (): void => undefined;
    socket.on('error', ignore);
    socket.once('close', () => this.#pending.delete(socket));
    socket.setTimeout(o.handshakeTimeoutMs, () => socket.destroy());
    socket.once('data', (chunk: Buffer) => {
      socket.pause();
      socket.setTimeout(0);
      socket.off('error', ignore);
      socket.unshift(chunk);
      if (chunk[0] === TLS_HANDSHAKE) {
        // The TLS server wraps the socket (the byte put back is read first) and emits secureConnection.
        socket.on('error', ignore);
        this.#server.emit('connection', socket);
        return;
      }
      this.#pending.delete(socket);
      if (o.tls.mode === 'permissive') {
        o.onSocket(socket);
        socket.resume();
        return;
      }
      this.refusedPlain++;
      o.rareLog.warn(
        'tls-plain',
        { remote: socket.remoteAddress, refused: this.refusedPlain },
        'plain (non-TLS) connection on a TLS-only remoting port closed',
      );
      socket.destroy();
    });
  }

  /** Destroys the connections still waiting for their first byte or their handshake. */
  close(): void {
    for (const s of this.#pending) s.destroy();
    this.#pending.clear();
  }
}

/** The remoting port's server: connections go to `onSocket` directly, or through a TlsIntake when TLS is on. */
export class RemotingIntake {
  readonly server: net.Server;
  readonly tls: TlsIntake | undefined;

  constructor(
    options: { tls?: BrokerTls | undefined; firstRequestTimeoutMs: number },
    rareLog: RareLog,
    onSocket: (socket: Socket) => void,
  ) {
    const tlsIntake = options.tls
      ? new TlsIntake({ tls: options.tls, handshakeTimeoutMs: options.firstRequestTimeoutMs, rareLog, onSocket })
      : undefined;
    this.tls = tlsIntake;
    this.server = net.createServer({ noDelay: true, keepAlive: true }, (socket) =>
      tlsIntake ? tlsIntake.accept(socket) : onSocket(socket),
    );
  }

  /** Stops accepting and drops the connections that have not become remoting connections; resolves once closed. */
  stop(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.tls?.close();
    return closed;
  }
}
