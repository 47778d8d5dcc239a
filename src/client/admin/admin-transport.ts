/**
 * How the AdminClient reaches brokers and NameServers (the part of RocketMQ's MQClientAPIImpl that
 * DefaultMQAdminExtImpl uses): one request to one address, the master brokers of the cluster as the
 * NameServers list them, and the decoding shared by several commands (a fastjson `offsetTable` keyed by
 * MessageQueue). Internal to the admin client.
 */
import { InvalidArgumentError, RocketMQError, StateError } from '../../common/errors.js';
import type { MessageQueue } from '../../common/message.js';
import { topicNameProblem } from '../../common/names.js';
import {
  FastJsonMap,
  RequestCode,
  ResponseCode,
  errorFromResponse,
  parseFastJson,
  type RemotingResponse,
} from '../../protocol/index.js';
import type { RemotingClient } from '../../remoting/remoting-client.js';

export class AdminTransport {
  readonly #remoting: RemotingClient;
  readonly #timeoutMs: number;
  #closed: Promise<void> | undefined;

  constructor(
    remoting: RemotingClient,
    /** The bundled brokers' HTTP addresses (empty when `namesrvAddr` is used). */
    readonly endpoints: readonly string[],
    /** The NameServers (empty when `endpoints` is used). */
    readonly namesrvAddr: readonly string[],
    timeoutMs: number,
  ) {
    this.#remoting = remoting;
    this.#timeoutMs = timeoutMs;
  }

  /** The endpoints, or the master brokers of the cluster as the NameServers list them now. */
  async brokerAddresses(): Promise<string[]> {
    if (this.namesrvAddr.length === 0) return [...this.endpoints];
    const res = await this.nameServerCall(RequestCode.GET_BROKER_CLUSTER_INFO);
    let root: unknown;
    try {
      root = parseFastJson(res.body ? res.body.toString('utf8') : 'null');
    } catch (e) {
      throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: cluster info body', { cause: e });
    }
    const table = (root as { brokerAddrTable?: unknown } | null)?.brokerAddrTable;
    if (table === null || typeof table !== 'object')
      throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: cluster info without brokerAddrTable');
    const masters = new Set<string>();
    for (const data of Object.values(table as Record<string, unknown>)) {
      const addrs = (data as { brokerAddrs?: unknown } | null)?.brokerAddrs;
      const entries =
        addrs instanceof FastJsonMap
          ? addrs.entries
          : addrs !== null && typeof addrs === 'object'
            ? Object.entries(addrs)
            : [];
      for (const [id, addr] of entries) if (String(id) === '0' && typeof addr === 'string') masters.add(addr);
    }
    if (masters.size === 0)
      throw new RocketMQError(
        'ERR_BROKER_NOT_EXIST',
        `the NameServers ${this.namesrvAddr.join(';')} list no master broker`,
        {
          retriable: true,
        },
      );
    return [...masters].sort();
  }

  /** A NameServer request: the next NameServer is tried when one cannot be reached. */
  async nameServerCall(code: number, header: Record<string, unknown> = {}): Promise<RemotingResponse> {
    let lastError: unknown;
    for (const addr of this.namesrvAddr) {
      let res: RemotingResponse;
      try {
        res = await this.invoke(addr, code, header);
      } catch (e) {
        if (e instanceof StateError) throw e;
        lastError = e;
        continue;
      }
      if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
      return res;
    }
    throw lastError;
  }

  /** One request; the caller reads the response code. */
  async invoke(addr: string, code: number, header: Record<string, unknown>): Promise<RemotingResponse> {
    if (this.#closed) throw new StateError('the AdminClient is shut down');
    return this.#remoting.invoke(addr, { code, header }, { timeoutMs: this.#timeoutMs });
  }

  /** One request whose response must be SUCCESS (any other code is thrown as its error). */
  async call(addr: string, code: number, header: Record<string, unknown>): Promise<RemotingResponse> {
    const res = await this.invoke(addr, code, header);
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    return res;
  }

  /** Closes the connections; later requests throw. Idempotent: returns the same promise. */
  close(): Promise<void> {
    this.#closed ??= this.#remoting.close();
    return this.#closed;
  }
}

// ---- decoding and argument checks shared by the commands ----------------------------------------

type MQKey = { topic: string; brokerName: string; queueId: number };

function mqOf(k: unknown): MessageQueue {
  const o = k as Partial<MQKey>;
  if (typeof o?.topic !== 'string' || typeof o.brokerName !== 'string' || typeof o.queueId !== 'number')
    throw new RocketMQError(
      'ERR_BAD_RESPONSE',
      'malformed response: a MessageQueue key is not {topic, brokerName, queueId}',
    );
  return { topic: o.topic, brokerName: o.brokerName, queueId: o.queueId };
}

/** The entries of a fastjson `offsetTable` keyed by MessageQueue. */
export function offsetTableOf(
  res: RemotingResponse,
  what: string,
): { entries: Array<[MessageQueue, unknown]>; root: Record<string, unknown> } {
  let root: unknown;
  try {
    root = parseFastJson(res.body ? res.body.toString('utf8') : 'null');
  } catch (e) {
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${what} body`, { cause: e });
  }
  if (root === null || typeof root !== 'object')
    throw new RocketMQError('ERR_BAD_RESPONSE', `malformed response: ${what} body is not an object`);
  const table = (root as { offsetTable?: unknown }).offsetTable;
  const entries =
    table instanceof FastJsonMap ? table.entries.map(([k, v]): [MessageQueue, unknown] => [mqOf(k), v]) : [];
  return { entries, root: root as Record<string, unknown> };
}

export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
export const byQueue = (a: { mq: MessageQueue }, b: { mq: MessageQueue }): number =>
  a.mq.topic.localeCompare(b.mq.topic) || a.mq.brokerName.localeCompare(b.mq.brokerName) || a.mq.queueId - b.mq.queueId;

export function checkTopic(topic: unknown, field = 'topic'): asserts topic is string {
  const problem = topicNameProblem(topic);
  if (problem) throw new InvalidArgumentError(field, problem);
}

export function checkGroup(group: unknown): asserts group is string {
  if (typeof group !== 'string' || group.trim() === '')
    throw new InvalidArgumentError('group', 'must be a consumer group name');
}
