/**
 * Raw remoting connections for the listener's hardening suites: sockets that never read, frames sent
 * in part, heartbeats by the thousand. 127.0.0.1 only; every socket is tracked so a test closes them all.
 */
import net from 'node:net';
import { RequestCode } from '../../src/protocol/index.js';
import { encodeRemotingCommand } from '../../src/remoting/remoting-command.js';
import { heartbeatBody } from './remoting-test-client.js';

export class RawSockets {
  private readonly sockets = new Set<net.Socket>();

  /** Opens a connection; with `read: false` nothing it is sent is ever read. */
  open(address: string, read = true): Promise<net.Socket> {
    const i = address.lastIndexOf(':');
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)) });
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
      socket.on('error', () => undefined);
      if (!read) socket.pause();
      else socket.resume();
      socket.once('connect', () => resolve(socket));
      socket.once('error', reject);
    });
  }

  /** Resolves once `socket` is closed by the peer (or was already). */
  static closed(socket: net.Socket): Promise<void> {
    if (socket.destroyed || socket.readableEnded) return Promise.resolve();
    socket.resume();
    return new Promise((resolve) => {
      socket.once('close', () => resolve());
      socket.once('end', () => resolve());
    });
  }

  closeAll(): void {
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
  }
}

export const pullFrame = (opaque: number, group: string, topic: string, queueOffset = 0): Buffer =>
  encodeRemotingCommand({
    code: RequestCode.PULL_MESSAGE,
    opaque,
    extFields: {
      consumerGroup: group,
      topic,
      queueId: '0',
      queueOffset: String(queueOffset),
      maxMsgNums: '32',
      sysFlag: '4',
      commitOffset: '0',
      suspendTimeoutMillis: '0',
      subscription: '*',
      subVersion: '0',
      expressionType: 'TAG',
    },
  });

export { heartbeatBody };

export const heartbeatFrame = (opaque: number, clientID: string, group: string, topic: string): Buffer =>
  encodeRemotingCommand({
    code: RequestCode.HEART_BEAT,
    opaque,
    extFields: {},
    body: heartbeatBody(clientID, group, topic),
  });
