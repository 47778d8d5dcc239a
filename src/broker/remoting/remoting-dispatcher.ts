/**
 * From a RocketMQ remoting request to the broker's processors and back: the translation layer between
 * RocketMQ's wire (extFields strings, SEND_MESSAGE_V2's one-letter keys, name-server bodies) and the
 * broker's commands (typed headers checked by each command's zod schema, the same check as on HTTP).
 * The processors never know which transport carried a call.
 *
 * - A header that does not pass its command's schema is answered SYSTEM_ERROR naming the field (RocketMQ
 *   answers a header it cannot decode with SYSTEM_ERROR and the exception's text).
 * - An unknown code is answered REQUEST_CODE_NOT_SUPPORTED ` request type <code> not supported`.
 * - SEND_MESSAGE_V2 (310), and SEND_BATCH_MESSAGE (320) as the Java client sends it, carry the
 *   SendMessageRequestHeaderV2 one-letter keys; they are read as SEND_MESSAGE / SEND_BATCH_MESSAGE.
 * - Heartbeats remember which clients live on which connection: NOTIFY_CONSUMER_IDS_CHANGED goes to
 *   their connections when their group changes (the newcomer's included: it is on record before its
 *   heartbeat registers it), and a closed connection takes its clients out of their
 *   groups (RocketMQ: ClientHousekeepingService.doChannelCloseEvent). A connection may carry at most
 *   `maxClientIdsPerConnection` client ids; a heartbeat for one more is answered SYSTEM_ERROR.
 * - Notices are coalesced (clients only need to know that something changed): per group, a connection
 *   gets at most one notice per `notifyWindowMs` — the first change is told at once, the changes of the
 *   window in one notice at its end — and none while it is not reading what it is sent.
 */
import type { Logger } from '../../common/logger.js';
import {
  COMMANDS,
  RequestCode,
  ResponseCode,
  type HeartbeatData,
  type RemotingResponse,
  type TopicRouteData,
  type UnregisterClientRequestHeader,
} from '../../protocol/index.js';
import type { RemotingCommand, RemotingCommandInput } from '../../remoting/remoting-command.js';
import type { BrokerRequest, ConnectionInfo } from '../broker-context.js';
import type { ConsumerManager } from '../consumer-manager.js';
import { requestCodeNotSupported, validateRequest } from '../dispatch.js';
import type { RemotingConnection } from './remoting-connection.js';
import { nextOpaque } from './response-frame.js';
import { requestHeaderFromExtFields, responseHeaderToExtFields } from '../../protocol/ext-fields.js';
import { InvalidArgumentError } from '../../common/errors.js';
import type { ClientChannelTable } from '../client-channel-table.js';
import type { AclGuard } from '../acl/acl-guard.js';
import { ClientInvoker } from './client-invoker.js';
import {
  BROKER_REMOTING_VERSION,
  BROKER_VERSION_DESC,
  encodeClusterInfo,
  encodeGroupList,
  encodeKvTable,
  encodeRouteForNameServer,
  wantsStandardJson,
} from './name-server.js';

/** Name-server and tool codes answered by the remoting layer itself. */
export const NameServerRequestCode = Object.freeze({
  GET_BROKER_RUNTIME_INFO: 28,
  GET_BROKER_CLUSTER_INFO: 106,
  QUERY_TOPIC_CONSUME_BY_WHO: 300,
} as const);

/** Java's Long.MAX_VALUE, which RocketMQ's tools send as "no upper bound" (mqadmin queryMsgByKey's end time). */
const JAVA_LONG_MAX = '9223372036854775807';

/**
 * Java's Long.MAX_VALUE read as the largest exact number, which means the same here; any other value past
 * 2^53 is refused by the command's schema, never rounded. `ext` itself when it has no such value (it is
 * only read afterwards).
 */
function withoutUpperBoundSentinel(
  ext: Readonly<Record<string, string | null>>,
): Readonly<Record<string, string | null>> {
  let out: Record<string, string | null> | undefined;
  for (const k in ext) {
    if (ext[k] !== JAVA_LONG_MAX) continue;
    out ??= { ...ext };
    out[k] = String(Number.MAX_SAFE_INTEGER);
  }
  return out ?? ext;
}

/** What the dispatcher needs of the broker. */
export interface DispatcherBroker {
  readonly clusterName: string;
  readonly brokerName: string;
  /** `ip:port` of the remoting listener, as clients are told to reach it. */
  readonly remotingAddress: string;
  readonly consumerManager: ConsumerManager;
  handle(request: BrokerRequest, connection: ConnectionInfo): Promise<RemotingResponse>;
  /** Groups that subscribe to the topic or have offsets on it (QUERY_TOPIC_CONSUME_BY_WHO). */
  topicConsumedBy(topic: string): string[];
  /** The broker's runtime figures for GET_BROKER_RUNTIME_INFO. */
  runtimeInfo(): Record<string, string>;
  /** Whether the group's membership changes are announced (notifyConsumerIdsChangedEnable). */
  notifyEnabled(group: string): boolean;
  /** Where the language and version of heartbeating clients are recorded. */
  readonly clientChannels: ClientChannelTable;
  /** Client ids one connection may heartbeat for (remotingMaxClientIdsPerConnection). */
  readonly maxClientIdsPerConnection: number;
  /** A group's members get at most one notice per this window, ms (notifyConsumerIdsChangedWindowMs). */
  readonly notifyWindowMs: number;
  /** The plain ACL every request passes first, when the broker has one (RocketMQ: the ACL RPC hook). */
  readonly acl?: AclGuard | undefined;
}

/** A group's notice window: open while a notice went out less than the window ago; `dirty` when a change waits. */
interface NoticeWindow {
  timer: ReturnType<typeof setTimeout>;
  dirty: boolean;
}

const response = (code: number, remark: string | null, extFields?: Record<string, string>, body?: Buffer) => ({
  code,
  opaque: 0,
  language: 'JAVA' as const,
  version: BROKER_REMOTING_VERSION,
  remark,
  extFields: extFields ?? null,
  body: body ?? null,
});

export class RemotingDispatcher {
  private readonly broker: DispatcherBroker;
  private readonly logger: Logger;
  /** client id → the connections its heartbeats came on. */
  private readonly clientConnections = new Map<string, Set<RemotingConnection>>();
  /** Requests sent to clients, waiting for their answers. */
  private readonly invoker = new ClientInvoker();
  private readonly windows = new Map<string, NoticeWindow>();
  /** Notices sent and notices not queued to a connection that was not reading, since start. */
  noticesSent = 0;
  noticesSkipped = 0;

  /** Groups whose change waits for the end of their notice window to be announced. */
  get noticesPending(): number {
    let n = 0;
    for (const w of this.windows.values()) if (w.dirty) n++;
    return n;
  }

  constructor(broker: DispatcherBroker, logger: Logger) {
    this.broker = broker;
    this.logger = logger;
  }

  /** Answers one request (null: nothing to send, e.g. for a oneway request the caller drops anyway). */
  async onRequest(command: RemotingCommand, connection: RemotingConnection): Promise<RemotingCommandInput | null> {
    const b = this.broker;
    const refused = b.acl?.checkRemoting(command.code, command.extFields, command.body, connection.remoteAddress);
    if (refused) return response(refused.code, refused.remark);
    switch (command.code) {
      case NameServerRequestCode.GET_BROKER_CLUSTER_INFO:
        return response(ResponseCode.SUCCESS, null, undefined, encodeClusterInfo(b));
      case NameServerRequestCode.QUERY_TOPIC_CONSUME_BY_WHO: {
        const topic = command.extFields?.topic;
        if (!topic) return response(ResponseCode.SYSTEM_ERROR, 'bad header field <topic>: required');
        return response(ResponseCode.SUCCESS, null, undefined, encodeGroupList(b.topicConsumedBy(topic)));
      }
      case NameServerRequestCode.GET_BROKER_RUNTIME_INFO:
        return response(ResponseCode.SUCCESS, null, undefined, encodeKvTable(b.runtimeInfo()));
      default:
        break;
    }
    // SEND_MESSAGE_V2 is SEND_MESSAGE with SendMessageRequestHeaderV2's one-letter keys (read below).
    const code = command.code === RequestCode.SEND_MESSAGE_V2 ? RequestCode.SEND_MESSAGE : command.code;
    const ext = command.extFields ?? {};
    const spec = COMMANDS.get(code);
    if (!spec || code === RequestCode.WATCH_CONSUMER_IDS) {
      this.logger.warn({ code, remote: connection.remoteAddress }, 'remoting request code not supported');
      const r = requestCodeNotSupported(command.code);
      return response(r.code, r.remark ?? null);
    }
    let header: Record<string, unknown>;
    try {
      header = requestHeaderFromExtFields(command.code, withoutUpperBoundSentinel(ext));
    } catch (e) {
      if (!(e instanceof InvalidArgumentError)) throw e;
      return response(ResponseCode.SYSTEM_ERROR, `bad header: ${e.message}`);
    }
    // The header went through the command's schema just above (extFields are read with it).
    const validated = validateRequest(spec, header, command.body ?? undefined, true);
    if (!validated.ok) return response(ResponseCode.SYSTEM_ERROR, `bad ${validated.field}: ${validated.message}`);
    const request = validated.request;
    request.code = code;
    let undoHeartbeat: (() => void) | undefined;
    if (code === RequestCode.HEART_BEAT) {
      const data = request.parsedBody as HeartbeatData;
      const max = b.maxClientIdsPerConnection;
      if (!connection.clients.has(data.clientID) && connection.clients.size >= max) {
        return response(
          ResponseCode.SYSTEM_ERROR,
          `this connection already carries ${connection.clients.size} client ids (remotingMaxClientIdsPerConnection ${max})`,
        );
      }
      undoHeartbeat = this.recordHeartbeat(data, connection);
    }
    let answer: RemotingResponse;
    try {
      answer = await b.handle(request, connection);
    } catch (e) {
      undoHeartbeat?.();
      throw e;
    }
    if (answer.code === ResponseCode.SUCCESS) this.afterSuccess(request, connection, command);
    else undoHeartbeat?.();
    let body = answer.body;
    if (code === RequestCode.GET_ROUTEINFO_BY_TOPIC && answer.code === ResponseCode.SUCCESS && body) {
      const route = JSON.parse(body.toString('utf8')) as TopicRouteData;
      const standard = wantsStandardJson(command.version, ext.acceptStandardJsonOnly);
      body = encodeRouteForNameServer(route, b.remotingAddress, standard);
    }
    return response(answer.code, answer.remark ?? null, responseHeaderToExtFields(code, answer.header ?? {}), body);
  }

  /**
   * Puts the heartbeat's client and groups on record for its connection before the heartbeat registers
   * them, so that the group change it causes is announced to the newcomer too (RocketMQ's
   * DefaultConsumerIdsChangeListener tells every channel of the group, the one that just joined included).
   * Counted at once, so heartbeats in flight together cannot pass the per-connection bound. Returns what
   * takes back the parts this call added, for a heartbeat that is refused.
   */
  private recordHeartbeat(data: HeartbeatData, connection: RemotingConnection): () => void {
    let client = connection.clients.get(data.clientID);
    const newClient = client === undefined;
    if (!client) {
      client = { consumerGroups: new Set(), producerGroups: new Set() };
      connection.clients.set(data.clientID, client);
    }
    const addedGroups = data.consumerDataSet.map((c) => c.groupName).filter((g) => !client.consumerGroups.has(g));
    for (const g of addedGroups) client.consumerGroups.add(g);
    let set = this.clientConnections.get(data.clientID);
    if (!set) this.clientConnections.set(data.clientID, (set = new Set()));
    const newConnection = !set.has(connection);
    set.add(connection);
    return () => {
      if (newClient) connection.clients.delete(data.clientID);
      else for (const g of addedGroups) client.consumerGroups.delete(g);
      if (newConnection) set.delete(connection);
      if (set.size === 0 && this.clientConnections.get(data.clientID) === set) {
        this.clientConnections.delete(data.clientID);
      }
    };
  }

  /** Remembers (or forgets) which clients live on which connection. */
  private afterSuccess(request: BrokerRequest, connection: RemotingConnection, command: RemotingCommand): void {
    if (request.code === RequestCode.HEART_BEAT) {
      const data = request.parsedBody as HeartbeatData;
      // RocketMQ: ClientChannelInfo keeps the language and version of the heartbeat's remoting header.
      this.broker.clientChannels.record(data.clientID, {
        language: command.language ?? 'OTHER',
        version: command.version,
        remoteAddress: connection.remoteAddress,
      });
      let client = connection.clients.get(data.clientID);
      if (!client) {
        client = { consumerGroups: new Set(), producerGroups: new Set() };
        connection.clients.set(data.clientID, client);
      }
      for (const c of data.consumerDataSet) client.consumerGroups.add(c.groupName);
      for (const p of data.producerDataSet) client.producerGroups.add(p.groupName);
      let set = this.clientConnections.get(data.clientID);
      if (!set) this.clientConnections.set(data.clientID, (set = new Set()));
      set.add(connection);
    } else if (request.code === RequestCode.UNREGISTER_CLIENT) {
      const h = request.header as UnregisterClientRequestHeader;
      const client = connection.clients.get(h.clientID);
      if (h.consumerGroup) client?.consumerGroups.delete(h.consumerGroup);
      if (h.producerGroup) client?.producerGroups.delete(h.producerGroup);
    }
  }

  /**
   * RocketMQ: ClientHousekeepingService.doChannelCloseEvent — the clients whose heartbeats came on a
   * closed connection leave their groups (the others are told), unless they have since heartbeated from
   * another connection.
   */
  onConnectionClosed(connection: RemotingConnection): void {
    const cm = this.broker.consumerManager;
    for (const [clientId, client] of connection.clients) {
      const set = this.clientConnections.get(clientId);
      set?.delete(connection);
      if (set && set.size === 0) {
        this.clientConnections.delete(clientId);
        this.broker.clientChannels.forget(clientId);
      }
      for (const group of client.consumerGroups) {
        const channel = cm.getConsumerGroupInfo(group)?.findChannel(clientId);
        if (channel && channel.remoteAddress === connection.remoteAddress) {
          this.logger.info({ group, clientId }, 'remoting connection closed, consumer unregistered');
          cm.unregisterConsumer(group, clientId, this.broker.notifyEnabled(group));
        }
      }
      for (const group of client.producerGroups) {
        if (!set || set.size === 0) cm.producerManager.unregisterProducer(group, clientId);
      }
    }
    connection.clients.clear();
  }

  /**
   * RocketMQ: DefaultConsumerIdsChangeListener — a oneway NOTIFY_CONSUMER_IDS_CHANGED to every member of
   * the group that reached this broker over remoting, coalesced per group within the notice window.
   */
  notifyConsumerIdsChanged(group: string): void {
    const open = this.windows.get(group);
    if (open) {
      open.dirty = true;
      return;
    }
    this.sendNotices(group);
    this.openWindow(group);
  }

  private openWindow(group: string): void {
    const window: NoticeWindow = {
      dirty: false,
      timer: setTimeout(() => {
        this.windows.delete(group);
        if (window.dirty) this.notifyConsumerIdsChanged(group);
      }, this.broker.notifyWindowMs),
    };
    window.timer.unref();
    this.windows.set(group, window);
  }

  /** One notice to each connection that carries a member of `group` and reads what it is sent. */
  private sendNotices(group: string): void {
    const info = this.broker.consumerManager.getConsumerGroupInfo(group);
    if (!info) return;
    const told = new Set<RemotingConnection>();
    for (const clientId of info.getAllClientIds()) {
      const connections = this.clientConnections.get(clientId);
      if (!connections) continue;
      for (const connection of connections) {
        if (told.has(connection) || !connection.clients.get(clientId)?.consumerGroups.has(group)) continue;
        told.add(connection);
        if (!connection.reading) {
          // It does not read its answers: a notice would only queue up (it rebalances on its own timer).
          this.noticesSkipped++;
          continue;
        }
        this.noticesSent++;
        connection.sendOneway({
          code: RequestCode.NOTIFY_CONSUMER_IDS_CHANGED,
          opaque: nextOpaque(),
          flag: 2,
          language: 'JAVA',
          version: BROKER_REMOTING_VERSION,
          extFields: { consumerGroup: group },
        });
      }
    }
  }

  /** A client's answer to a request sent with `callClient`. */
  onResponse(command: RemotingCommand, connection: RemotingConnection): void {
    this.invoker.onResponse(command, connection);
  }

  /**
   * RocketMQ: Broker2Client.callClient — sends a request to the client over a connection its heartbeats
   * came on and waits for the answer; undefined when the client has no live remoting connection.
   */
  callClient(
    clientId: string,
    request: { code: number; extFields: Record<string, string>; body: Buffer | null },
    timeoutMs: number,
  ): Promise<RemotingCommand> | undefined {
    const connection = [...(this.clientConnections.get(clientId) ?? [])].find((c) => !c.gone);
    if (!connection) return undefined;
    return this.invoker.call(
      connection,
      {
        code: request.code,
        language: 'JAVA',
        version: BROKER_REMOTING_VERSION,
        extFields: request.extFields,
        body: request.body,
      },
      timeoutMs,
    );
  }

  /**
   * A oneway request to `clientId` over a connection on which it heartbeated as a member of `group` and
   * which reads what it is sent; false when there is none.
   */
  sendOnewayToConsumer(
    clientId: string,
    group: string,
    request: { code: number; extFields: Record<string, string>; body: Buffer | null },
  ): boolean {
    for (const connection of this.clientConnections.get(clientId) ?? []) {
      if (!connection.reading) continue;
      if (!connection.clients.get(clientId)?.consumerGroups.has(group)) continue;
      connection.sendOneway({
        code: request.code,
        opaque: nextOpaque(),
        flag: 2,
        language: 'JAVA',
        version: BROKER_REMOTING_VERSION,
        extFields: request.extFields,
        body: request.body,
      });
      return true;
    }
    return false;
  }

  /** Fails the calls still waiting for clients and stops the notice windows' timers (broker shutdown). */
  close(): void {
    this.invoker.close();
    for (const w of this.windows.values()) clearTimeout(w.timer);
    this.windows.clear();
  }

  /**
   * RocketMQ: Broker2Client.checkProducerTransactionState — a oneway CHECK_TRANSACTION_STATE to one live
   * member of the producer group (picked at random, as ProducerManager.getAvailableChannel does) that
   * reached this broker over remoting; false when there is none.
   */
  checkProducerTransactionState(group: string, extFields: Record<string, string>, body: Buffer): boolean {
    const ids = this.broker.consumerManager.producerManager.getClientIds(group);
    const start = Math.floor(Math.random() * Math.max(1, ids.length));
    for (let i = 0; i < ids.length; i++) {
      const clientId = ids[(start + i) % ids.length] as string;
      for (const connection of this.clientConnections.get(clientId) ?? []) {
        if (!connection.clients.get(clientId)?.producerGroups.has(group)) continue;
        connection.sendOneway({
          code: RequestCode.CHECK_TRANSACTION_STATE,
          opaque: nextOpaque(),
          flag: 2,
          language: 'JAVA',
          version: BROKER_REMOTING_VERSION,
          extFields,
          body,
        });
        return true;
      }
    }
    return false;
  }

  /** The KVTable version entries (exposed for the broker's runtime info). */
  static versionEntries(): Record<string, string> {
    return { brokerVersionDesc: BROKER_VERSION_DESC, brokerVersion: String(BROKER_REMOTING_VERSION) };
  }
}
