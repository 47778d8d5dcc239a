/**
 * Raw HTTP/1.1 over a TCP socket, for attacks an HTTP client library would not make: many requests
 * pipelined on one connection, answers read late or never, connections opened and left open.
 */
import net from 'node:net';
import { buildPullSysFlag, decodeFrame, encodeFrame } from '../../../src/protocol/index.js';

/** One request of the broker's HTTP wire, as bytes. */
export function requestBytes(command: string | number, header: Record<string, unknown>, body?: Buffer): Buffer {
  const frame = encodeFrame(header, body);
  const head =
    `POST /v1/${command} HTTP/1.1\r\nHost: broker\r\nContent-Type: application/x-rocketmq-command\r\n` +
    `Content-Length: ${frame.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), frame]);
}

/** A PULL_MESSAGE header (subscription `*`, suspended when `suspendTimeoutMillis` > 0). */
export function pullHeader(group: string, topic: string, suspendTimeoutMillis = 0, queueOffset = 0) {
  return {
    consumerGroup: group,
    topic,
    queueId: 0,
    queueOffset,
    maxMsgNums: 32,
    sysFlag: buildPullSysFlag(false, suspendTimeoutMillis > 0, true),
    commitOffset: 0,
    suspendTimeoutMillis,
    subVersion: 0,
    subscription: '*',
  };
}

/** Opens a TCP connection to the broker's HTTP address. */
export function connect(address: string): Promise<net.Socket> {
  const url = new URL(address);
  return new Promise((resolve, reject) => {
    const s = net.connect({ host: url.hostname, port: Number(url.port) }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
  });
}

export interface RawResponse {
  status: number;
  /** The response code of a 200 answer, -1 otherwise. */
  code: number;
  remark: string | undefined;
  bodyBytes: number;
}

/** Reads `n` HTTP answers from `socket` (which must not have been read before), parsing each frame. */
export function readResponses(socket: net.Socket, n: number, timeoutMs = 20_000): Promise<RawResponse[]> {
  return new Promise((resolve, reject) => {
    let buf: Buffer = Buffer.alloc(0);
    const out: RawResponse[] = [];
    const timer = setTimeout(
      () => finish(new Error(`only ${out.length} of ${n} answers in ${timeoutMs} ms`)),
      timeoutMs,
    );
    const finish = (err?: Error): void => {
      clearTimeout(timer);
      socket.off('data', onData);
      socket.off('close', onClose);
      if (err) reject(err);
      else resolve(out);
    };
    const onClose = (): void => finish(new Error(`connection closed after ${out.length} of ${n} answers`));
    const onData = (chunk: Buffer): void => {
      buf = buf.length === 0 ? chunk : Buffer.concat([buf, chunk]);
      for (;;) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.toString('latin1', 0, end);
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 0);
        const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
        if (buf.length < end + 4 + length) return;
        const body = buf.subarray(end + 4, end + 4 + length);
        buf = buf.subarray(end + 4 + length);
        let code = -1;
        let remark: string | undefined;
        if (status === 200) {
          const frame = decodeFrame(Buffer.from(body));
          const h = frame.header as { code: number; remark?: string };
          code = h.code;
          remark = h.remark;
        }
        out.push({ status, code, remark, bodyBytes: length });
        if (out.length === n) return finish();
      }
    };
    socket.on('data', onData);
    socket.on('close', onClose);
    socket.resume();
  });
}
