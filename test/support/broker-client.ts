/**
 * A tiny client of the broker's HTTP wire (docs/protocol.md) for tests: frames a command, posts it and
 * parses the answer. Not the SDK's transport: it follows the document, so the tests check the wire.
 */
import { Agent, request } from 'undici';
import { messageProperties2String } from '../../src/common/codec/index.js';
import { buildPullSysFlag, decodeFrame, encodeFrame } from '../../src/protocol/index.js';

export interface CommandAnswer {
  /** HTTP status. */
  status: number;
  /** Response code (HTTP 200 only). */
  code: number;
  remark: string | undefined;
  header: Record<string, unknown>;
  body: Buffer;
  /** The JSON body of a non-200 answer. */
  error?: { error: string; field?: string; message: string };
}

export interface RawAnswer {
  status: number;
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

export class TestBrokerClient {
  readonly address: string;
  private readonly token: string | undefined;
  private readonly agent: Agent;

  constructor(address: string, options: { token?: string; connections?: number } = {}) {
    this.address = address;
    this.token = options.token;
    this.agent = new Agent({ connections: options.connections ?? 32, headersTimeout: 120_000, bodyTimeout: 120_000 });
  }

  async raw(
    path: string,
    init: { method?: string; body?: Buffer; headers?: Record<string, string>; signal?: AbortSignal } = {},
  ): Promise<RawAnswer> {
    const headers: Record<string, string> = { 'content-type': 'application/x-rocketmq-command', ...init.headers };
    if (this.token !== undefined && headers.authorization === undefined) headers.authorization = `Bearer ${this.token}`;
    const res = await request(this.address + path, {
      method: (init.method ?? 'POST') as 'POST',
      body: init.body,
      headers,
      dispatcher: this.agent,
      signal: init.signal,
    });
    const body = Buffer.from(await res.body.arrayBuffer());
    return { status: res.statusCode, body, headers: res.headers };
  }

  /** Sends a command (by name or code) with a header object and an optional body. */
  async call(
    command: string | number,
    header: Record<string, unknown>,
    body?: Buffer,
    options: { signal?: AbortSignal } = {},
  ): Promise<CommandAnswer> {
    const res = await this.raw(`/v1/${command}`, { body: encodeFrame(header, body), signal: options.signal });
    return parseAnswer(res);
  }

  async close(): Promise<void> {
    await this.agent.close();
  }

  // ---- conveniences -------------------------------------------------------------------------

  send(
    topic: string,
    body: Buffer | string,
    options: {
      tags?: string;
      keys?: string;
      properties?: Record<string, string>;
      queueId?: number;
      reconsumeTimes?: number;
      maxReconsumeTimes?: number;
    } = {},
  ): Promise<CommandAnswer> {
    const props: Record<string, string> = { ...options.properties };
    if (options.tags !== undefined) props.TAGS = options.tags;
    if (options.keys !== undefined) props.KEYS = options.keys;
    return this.call(
      'SEND_MESSAGE',
      {
        producerGroup: 'test-producer',
        topic,
        defaultTopic: 'TBW102',
        defaultTopicQueueNums: 4,
        queueId: options.queueId ?? 0,
        sysFlag: 0,
        bornTimestamp: Date.now(),
        flag: 0,
        properties: messageProperties2String(props),
        ...(options.reconsumeTimes !== undefined ? { reconsumeTimes: options.reconsumeTimes } : {}),
        ...(options.maxReconsumeTimes !== undefined ? { maxReconsumeTimes: options.maxReconsumeTimes } : {}),
      },
      typeof body === 'string' ? Buffer.from(body) : body,
    );
  }

  pull(
    p: {
      group: string;
      topic: string;
      queueId?: number;
      offset?: number;
      maxMsgNums?: number;
      subscription?: string;
      expressionType?: string;
      suspend?: boolean;
      suspendTimeoutMillis?: number;
      commitOffset?: number;
      useSubscriptionFlag?: boolean;
      subVersion?: number;
      /** The command: PULL_MESSAGE (default), LITE_PULL_MESSAGE or a request code. */
      code?: number | string;
    },
    options: { signal?: AbortSignal } = {},
  ): Promise<CommandAnswer> {
    const withSub = p.useSubscriptionFlag ?? true;
    return this.call(
      p.code ?? 'PULL_MESSAGE',
      {
        consumerGroup: p.group,
        topic: p.topic,
        queueId: p.queueId ?? 0,
        queueOffset: p.offset ?? 0,
        maxMsgNums: p.maxMsgNums ?? 32,
        sysFlag: buildPullSysFlag(p.commitOffset !== undefined, p.suspend ?? false, withSub),
        commitOffset: p.commitOffset ?? 0,
        suspendTimeoutMillis: p.suspendTimeoutMillis ?? 0,
        subVersion: p.subVersion ?? 0,
        ...(withSub ? { subscription: p.subscription ?? '*' } : {}),
        ...(p.expressionType !== undefined ? { expressionType: p.expressionType } : {}),
      },
      undefined,
      options,
    );
  }
}

export function parseAnswer(res: RawAnswer): CommandAnswer {
  if (res.status !== 200) {
    const error = JSON.parse(res.body.toString('utf8')) as CommandAnswer['error'];
    return { status: res.status, code: -1, remark: undefined, header: {}, body: Buffer.alloc(0), error };
  }
  const frame = decodeFrame(res.body);
  const head = frame.header as { code: number; remark?: string; header: Record<string, unknown> };
  return {
    status: 200,
    code: head.code,
    remark: head.remark,
    header: head.header,
    body: frame.body ?? Buffer.alloc(0),
  };
}

let counter = 0;
/** A unique, valid topic or group name. */
export function uniqueName(prefix: string): string {
  counter += 1;
  return `${prefix}_${process.pid}_${Date.now().toString(36)}_${counter}`;
}
