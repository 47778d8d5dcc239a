/**
 * Requests the broker sends to a client over the client's own remoting connection and whose answer it
 * waits for (RocketMQ: Broker2Client.callClient), e.g. GET_CONSUMER_RUNNING_INFO forwarded from mqadmin to
 * the consumer. Answers are matched by opaque; a call not answered within its timeout, or whose
 * connection closes first, is settled as such, and nothing is kept for it afterwards.
 */
import type { RemotingCommand, RemotingCommandInput } from '../../remoting/remoting-command.js';
import type { RemotingConnection } from './remoting-connection.js';
import { nextOpaque } from './response-frame.js';

/** Why a call to a client did not get an answer. */
export class ClientCallError extends Error {
  constructor(
    readonly kind: 'timeout' | 'closed',
    message: string,
  ) {
    super(message);
  }
}

interface Pending {
  connection: RemotingConnection;
  resolve(command: RemotingCommand): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
  stopWatching(): void;
}

export class ClientInvoker {
  private readonly pending = new Map<number, Pending>();

  /** Sends `request` (its opaque is set here) and resolves with the client's answer. */
  call(
    connection: RemotingConnection,
    request: Omit<RemotingCommandInput, 'opaque'>,
    timeoutMs: number,
  ): Promise<RemotingCommand> {
    const opaque = nextOpaque();
    return new Promise<RemotingCommand>((resolve, reject) => {
      const settle = (): void => {
        const p = this.pending.get(opaque);
        if (!p) return;
        this.pending.delete(opaque);
        clearTimeout(p.timer);
        p.stopWatching();
      };
      const timer = setTimeout(() => {
        settle();
        reject(
          new ClientCallError(
            'timeout',
            `wait response on the channel <${connection.remoteAddress}> timeout, ${timeoutMs}(ms)`,
          ),
        );
      }, timeoutMs);
      const stopWatching = connection.onGone(() => {
        settle();
        reject(new ClientCallError('closed', `the channel <${connection.remoteAddress}> closed`));
      });
      this.pending.set(opaque, {
        connection,
        resolve: (c) => {
          settle();
          resolve(c);
        },
        reject,
        timer,
        stopWatching,
      });
      connection.sendOneway({ ...request, opaque, flag: 0 });
    });
  }

  /** A client's answer: settles the call waiting for its opaque (from that connection only). */
  onResponse(command: RemotingCommand, connection: RemotingConnection): void {
    const p = this.pending.get(command.opaque);
    if (p && p.connection === connection) p.resolve(command);
  }

  /** Fails every call still waiting (broker shutdown). */
  close(): void {
    for (const [opaque, p] of this.pending) {
      this.pending.delete(opaque);
      clearTimeout(p.timer);
      p.stopWatching();
      p.reject(new ClientCallError('closed', 'the broker is shutting down'));
    }
  }
}
