/**
 * A small real TCP server speaking RocketMQ remoting frames, built on the project's codec: each
 * request frame goes to `handle`, whose answer (if any) is written back as a response with the
 * request's opaque. Tests use it to play a broker or NameServer, including a misbehaving one
 * (`socket` gives raw access to every accepted connection).
 */
import net from 'node:net';
import {
  FrameReader,
  decodeRemotingCommand,
  encodeRemotingCommand,
  isResponse,
  markResponse,
  type RemotingCommand,
  type RemotingCommandInput,
  type SerializeType,
} from '../../src/remoting/index.js';

export interface TestServerAnswer {
  code: number;
  remark?: string | null;
  extFields?: Record<string, string> | null;
  body?: Buffer | null;
  /** Header serialization of the answer. Default 'JSON'. */
  serializeType?: SerializeType;
}

export type TestServerHandler = (
  cmd: RemotingCommand,
  socket: net.Socket,
) => TestServerAnswer | undefined | Promise<TestServerAnswer | undefined>;

export class RemotingTestServer {
  readonly server: net.Server;
  readonly sockets = new Set<net.Socket>();
  /** Every request received, in order. */
  readonly received: RemotingCommand[] = [];
  /** Responses received from clients (answers to requests this server sent). */
  readonly responses: RemotingCommand[] = [];
  handle: TestServerHandler;

  private constructor(handle: TestServerHandler) {
    this.handle = handle;
    this.server = net.createServer((socket) => this.#accept(socket));
  }

  static async start(handle: TestServerHandler, port = 0): Promise<RemotingTestServer> {
    const s = new RemotingTestServer(handle);
    await new Promise<void>((resolve, reject) => {
      s.server.once('error', reject);
      s.server.listen(port, '127.0.0.1', () => resolve());
    });
    return s;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  get addr(): string {
    return `127.0.0.1:${this.port}`;
  }

  #accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.on('close', () => this.sockets.delete(socket));
    socket.on('error', () => undefined);
    const reader = new FrameReader();
    socket.on('data', (chunk: Buffer) => {
      for (const frame of reader.push(chunk)) {
        const cmd = decodeRemotingCommand(frame);
        if (isResponse(cmd.flag)) {
          this.responses.push(cmd);
          continue;
        }
        this.received.push(cmd);
        void Promise.resolve(this.handle(cmd, socket)).then((answer) => {
          if (!answer || socket.destroyed) return;
          socket.write(
            encodeRemotingCommand(
              {
                code: answer.code,
                opaque: cmd.opaque,
                flag: markResponse(0),
                version: 479,
                remark: answer.remark ?? null,
                extFields: answer.extFields ?? null,
                body: answer.body ?? null,
              },
              { serializeType: answer.serializeType ?? 'JSON' },
            ),
          );
        });
      }
    });
  }

  /** Sends a request from the server to every connected client. */
  sendToClients(cmd: RemotingCommandInput, serializeType: SerializeType = 'JSON'): void {
    for (const s of this.sockets) s.write(encodeRemotingCommand(cmd, { serializeType }));
  }

  /** Closes the listener and destroys every connection. */
  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Resolves when `cond()` holds, polling; rejects after `timeoutMs`. */
export async function waitFor(cond: () => boolean, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resolves when `check()` resolves true, trying again every 20 ms (a rejection counts as false). */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 5000, what = 'condition'): Promise<void> {
  const start = Date.now();
  while (!(await check().catch(() => false))) {
    if (Date.now() - start > timeoutMs) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
