/**
 * A small RocketMQ remoting client for the listener's tests: writes frames with the project's codec
 * (`encodeRemotingCommand`), splits what comes back by the 4-byte length, and matches responses to
 * requests by `opaque`. Server-initiated requests (NOTIFY_CONSUMER_IDS_CHANGED) are kept in `pushed`.
 */
import net from 'node:net';
import {
  decodeRemotingCommand,
  encodeRemotingCommand,
  frameSerializeType,
  isResponse,
  type RemotingCommand,
  type SerializeType,
} from '../../src/remoting/remoting-command.js';

export interface ReceivedCommand extends RemotingCommand {
  serializeType: SerializeType | null;
}

export class RemotingTestClient {
  readonly pushed: ReceivedCommand[] = [];
  /** Every response in arrival order. */
  readonly responses: ReceivedCommand[] = [];
  private readonly socket: net.Socket;
  private buffered = Buffer.alloc(0);
  private readonly waiting = new Map<number, (c: ReceivedCommand) => void>();
  private nextOpaque = 1;
  readonly closed: Promise<void>;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => this.onData(d));
    socket.on('error', () => undefined);
    this.closed = new Promise((resolve) => socket.on('close', () => resolve()));
  }

  static connect(address: string): Promise<RemotingTestClient> {
    const i = address.lastIndexOf(':');
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host: address.slice(0, i), port: Number(address.slice(i + 1)) });
      socket.once('connect', () => resolve(new RemotingTestClient(socket)));
      socket.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.socket.destroyed;
  }

  private onData(d: Buffer): void {
    this.buffered = Buffer.concat([this.buffered, d]);
    while (this.buffered.length >= 4) {
      const n = this.buffered.readInt32BE(0);
      if (this.buffered.length < 4 + n) return;
      const frame = this.buffered.subarray(4, 4 + n);
      this.buffered = this.buffered.subarray(4 + n);
      const cmd: ReceivedCommand = { ...decodeRemotingCommand(frame), serializeType: frameSerializeType(frame) };
      if (!isResponse(cmd.flag)) {
        this.pushed.push(cmd);
        continue;
      }
      this.responses.push(cmd);
      const w = this.waiting.get(cmd.opaque);
      this.waiting.delete(cmd.opaque);
      w?.(cmd);
    }
  }

  /** Writes raw bytes (for malformed frames). */
  writeRaw(bytes: Buffer): void {
    this.socket.write(bytes);
  }

  /** Sends a request; resolves with its response (never for a oneway request: use `sendOneway`). */
  request(
    code: number,
    extFields: Record<string, string> | null,
    options: { body?: Buffer; serializeType?: SerializeType; version?: number; opaque?: number } = {},
  ): Promise<ReceivedCommand> {
    const opaque = options.opaque ?? this.nextOpaque++;
    const answer = new Promise<ReceivedCommand>((resolve) => this.waiting.set(opaque, resolve));
    this.socket.write(
      encodeRemotingCommand(
        { code, opaque, flag: 0, version: options.version ?? 409, extFields, body: options.body ?? null },
        { serializeType: options.serializeType ?? 'JSON' },
      ),
    );
    return answer;
  }

  sendOneway(code: number, extFields: Record<string, string>): void {
    this.socket.write(encodeRemotingCommand({ code, opaque: this.nextOpaque++, flag: 2, version: 409, extFields }));
  }

  close(): Promise<void> {
    this.socket.destroy();
    return this.closed;
  }
}

/**
 * A HEART_BEAT body (RocketMQ's HeartbeatData as JSON): `clientID` consuming `topic` with `*` in
 * `consumerGroup` (none when null), and producing in `producerGroup` when given.
 */
export const heartbeatBody = (
  clientID: string,
  consumerGroup: string | null,
  topic: string,
  producerGroup?: string,
): Buffer =>
  Buffer.from(
    JSON.stringify({
      clientID,
      consumerDataSet: consumerGroup
        ? [
            {
              groupName: consumerGroup,
              consumeType: 'CONSUME_PASSIVELY',
              messageModel: 'CLUSTERING',
              consumeFromWhere: 'CONSUME_FROM_FIRST_OFFSET',
              subscriptionDataSet: [
                {
                  topic,
                  subString: '*',
                  tagsSet: [],
                  codeSet: [],
                  subVersion: 1,
                  expressionType: 'TAG',
                  classFilterMode: false,
                },
              ],
              unitMode: false,
            },
          ]
        : [],
      producerDataSet: producerGroup ? [{ groupName: producerGroup }] : [],
    }),
  );
