/**
 * The NameServer role of the broker's remoting port: what RocketMQ's clients and `mqadmin` ask a name
 * server for, answered for this one broker, so `namesrvAddr=127.0.0.1:<remoting port>` works against the
 * bundled broker alone. Bodies are written as RocketMQ 4.9.8's name server writes them with fastjson
 * (bean properties in alphabetical order, null properties left out).
 *
 * - GET_ROUTEINFO_BY_TOPIC (105): the route the broker's own processor builds, with the broker's
 *   remoting address as master "0" and `filterServerTable: {}`. The 4.9.8 name server quotes the broker
 *   ids of `brokerAddrs` only for clients of version V4_9_4 (401) or later, or when the request says
 *   `acceptStandardJsonOnly=true`; older clients get fastjson's unquoted integer keys (`{0:"..."}`).
 * - GET_BROKER_CLUSTER_INFO (106): ClusterInfo with this broker in its cluster.
 * - GET_BROKER_RUNTIME_INFO (28): the broker's KVTable (versions, commit-log offsets, start time).
 * - QUERY_TOPIC_CONSUME_BY_WHO (300, a broker code mqadmin's queryMsgById uses): GroupList of the groups
 *   that subscribe to the topic or hold offsets on it.
 * @pure
 */
import type { TopicRouteData } from '../../protocol/index.js';

/** RocketMQ: MQVersion.Version.V4_9_4.ordinal(), from which the name server writes standard JSON. */
export const V4_9_4 = 401;
/** MQVersion.CURRENT_VERSION of RocketMQ 4.9.8, the version this broker answers with. */
export const BROKER_REMOTING_VERSION = 409;
/** The version name mqadmin's clusterList prints. */
export const BROKER_VERSION_DESC = 'V4_9_8';

/** fastjson's order: object keys sorted, recursively; arrays keep their order. */
export function sortedJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v) || Buffer.isBuffer(v)) return v;
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(v).sort()) out[k] = (v as Record<string, unknown>)[k];
    return out;
  });
}

/** Whether the name server writes standard JSON for this request (RocketMQ: ClientRequestProcessor). */
export function wantsStandardJson(requestVersion: number, acceptStandardJsonOnly: string | null | undefined): boolean {
  return requestVersion >= V4_9_4 || acceptStandardJsonOnly?.toLowerCase() === 'true';
}

/**
 * The route as the client gets it from a name server: this broker's remoting address as master "0" of
 * each broker entry, queue data as the broker registered them.
 */
export function encodeRouteForNameServer(
  route: TopicRouteData,
  remotingAddress: string,
  standardJson: boolean,
): Buffer {
  const wire = {
    brokerDatas: route.brokerDatas.map((b) => ({
      brokerAddrs: { '0': remotingAddress },
      brokerName: b.brokerName,
      cluster: b.cluster,
    })),
    filterServerTable: {},
    queueDatas: route.queueDatas.map((q) => ({
      brokerName: q.brokerName,
      perm: q.perm,
      readQueueNums: q.readQueueNums,
      topicSysFlag: q.topicSysFlag,
      writeQueueNums: q.writeQueueNums,
    })),
  };
  let json = sortedJson(wire);
  // fastjson writes a map's Long keys as bare numbers unless asked to quote them.
  if (!standardJson) json = json.replace(/"brokerAddrs":\{"0":/g, '"brokerAddrs":{0:');
  return Buffer.from(json, 'utf8');
}

export interface ThisBroker {
  clusterName: string;
  brokerName: string;
  remotingAddress: string;
}

/** RocketMQ's ClusterInfo for a one-broker cluster (broker ids as fastjson writes Long keys). */
export function encodeClusterInfo(b: ThisBroker): Buffer {
  const brokerData = sortedJson({
    brokerAddrs: { '0': b.remotingAddress },
    brokerName: b.brokerName,
    cluster: b.clusterName,
  });
  const json = `{"brokerAddrTable":{${JSON.stringify(b.brokerName)}:${brokerData.replace('{"0":', '{0:')}},"clusterAddrTable":${JSON.stringify({ [b.clusterName]: [b.brokerName] })}}`;
  return Buffer.from(json, 'utf8');
}

/** RocketMQ's GroupList. */
export function encodeGroupList(groups: readonly string[]): Buffer {
  return Buffer.from(JSON.stringify({ groupList: [...groups] }), 'utf8');
}

/** RocketMQ's KVTable: `{"table": {...}}` with string values. */
export function encodeKvTable(table: Readonly<Record<string, string>>): Buffer {
  return Buffer.from(sortedJson({ table }), 'utf8');
}
