/**
 * RocketMQ's plain-ACL check of one request (PlainAccessValidator.parse, then
 * PlainPermissionManager.validate): which topics and groups the request touches, then, in RocketMQ's
 * order, the global white list, the account, the account's white address, the signature, the admin-only
 * codes and each resource's permission. A refusal is what RocketMQ's broker answers: its RPC hook throws
 * an AclException, which NettyRemotingAbstract turns into SYSTEM_ERROR with
 * RemotingHelper.exceptionSimpleDesc's text (the exception, then its first stack frame).
 */
import { timingSafeEqual } from 'node:crypto';
import { ResponseCode } from '../../protocol/index.js';
import { parseLenientJson } from '../../protocol/lenient-json.js';
import { ACL_ACCESS_KEY, ACL_SIGNATURE, aclSignature, aclSignedContent } from '../../remoting/acl-signature.js';
import type { ExtFields } from '../../remoting/remoting-command-model.js';
import { normalizeAddress } from './remote-address.js';
import { Perm, RETRY_PREFIX, type PlainAccount, type PlainAclConfig } from './plain-acl-config.js';

/** One request as the check reads it: its ext fields as strings (the signed content) and body. */
export interface AclRequest {
  readonly code: number;
  readonly fields: Readonly<Record<string, string | null | undefined>> | null;
  readonly body: Buffer | null | undefined;
  /** The peer, `ip:port`. */
  readonly remoteAddress: string;
}

/** A refused request's answer. */
export interface AclRefusal {
  readonly code: number;
  readonly remark: string;
}

/** RocketMQ 4.9.8's Permission.ADMIN_CODE; DELETE_TOPIC_IN_NAMESRV and the ACL administration too. */
export const ADMIN_CODES: ReadonlySet<number> = new Set([
  17, // UPDATE_AND_CREATE_TOPIC
  25, // UPDATE_BROKER_CONFIG
  215, // DELETE_TOPIC_IN_BROKER
  200, // UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
  207, // DELETE_SUBSCRIPTIONGROUP
  216, // DELETE_TOPIC_IN_NAMESRV: RocketMQ's name server has no ACL; here it changes the broker's own topics
  // The ACL administration, which RocketMQ 4.9.8 lets any signed account ask (so any account could make
  // itself an admin); here only an admin may change or read the accounts.
  50, // UPDATE_AND_CREATE_ACL_CONFIG
  51, // DELETE_ACL_CONFIG
  52, // GET_BROKER_CLUSTER_ACL_INFO
  53, // UPDATE_GLOBAL_WHITE_ADDRS_CONFIG
]);

/**
 * Read-only name-server queries, which this broker answers as its own name server. RocketMQ's name
 * server checks no ACL, so an unsigned client reaches the broker (and is refused there, not at the route).
 */
export const NAME_SERVER_QUERIES: ReadonlySet<number> = new Set([
  101, // GET_KV_CONFIG
  105, // GET_ROUTEINFO_BY_TOPIC
  106, // GET_BROKER_CLUSTER_INFO
  206, // GET_ALL_TOPIC_LIST_FROM_NAMESERVER
  224, // GET_TOPICS_BY_CLUSTER
  304, // GET_SYSTEM_TOPIC_LIST_FROM_NS
  319, // GET_NAMESRV_CONFIG
]);

/** RocketMQ's TopicValidator.RMQ_SYS_TRACE_TOPIC: publishing message traces needs no topic permission. */
const TRACE_TOPIC = 'RMQ_SYS_TRACE_TOPIC';

const EXCEPTION = 'org.apache.rocketmq.acl.common.AclException';
/** Where RocketMQ 4.9.8 throws each refusal: the stack frame its remark names, kept so remarks read the same. */
const FRAMES = Object.freeze({
  parse: 'org.apache.rocketmq.acl.plain.PlainAccessValidator.parse(PlainAccessValidator.java:134)',
  noAccessKey: 'org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:664)',
  noAccount: 'org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:668)',
  signature: 'org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:684)',
  admin: 'org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:581)',
  defaultPerm: 'org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:606)',
  perm: 'org.apache.rocketmq.acl.plain.PlainPermissionManager.checkPerm(PlainPermissionManager.java:611)',
});

const refuse = (message: string, frame: string): AclRefusal => ({
  code: ResponseCode.SYSTEM_ERROR,
  remark: `${EXCEPTION}: ${message}, ${frame}`,
});

const retryTopic = (group: string | null | undefined): string | undefined =>
  group === null || group === undefined ? undefined : RETRY_PREFIX + group;

/** RocketMQ: PlainAccessResource.printStr. */
const printResource = (resource: string, isGroup: boolean): string =>
  isGroup ? `group:${resource.slice(RETRY_PREFIX.length)}` : `topic:${resource}`;

interface HeartbeatBody {
  consumerDataSet?: Array<{ groupName?: string; subscriptionDataSet?: Array<{ topic?: string }> }>;
}

/**
 * The resources a request touches and the permission each needs (RocketMQ: PlainAccessValidator.parse);
 * a group is checked as its retry topic. Throws when a heartbeat's body cannot be read.
 */
export function requestResources(
  code: number,
  f: Readonly<Record<string, string | null | undefined>>,
  body: Buffer | null | undefined,
): Map<string, number> {
  const out = new Map<string, number>();
  const add = (resource: string | null | undefined, perm: number): void => {
    if (resource !== null && resource !== undefined) out.set(resource, perm);
  };
  const sendTo = (topic: string | null | undefined, group: string | null | undefined): void => {
    if (topic?.startsWith(RETRY_PREFIX)) add(retryTopic(group), Perm.SUB);
    else add(topic, Perm.PUB);
  };
  switch (code) {
    case 10: // SEND_MESSAGE (RocketMQ reads a "group" field here, which the header does not have)
      sendTo(f.topic, f.group);
      break;
    case 310: // SEND_MESSAGE_V2: SendMessageRequestHeaderV2's one-letter keys (b topic, a producer group)
    case 320: // SEND_BATCH_MESSAGE: checked as RocketMQ 5 does (4.9.8 checks no topic for it)
      sendTo(f.b ?? f.topic, f.a ?? f.producerGroup);
      break;
    case 36: // CONSUMER_SEND_MSG_BACK
      add(retryTopic(f.group), Perm.SUB);
      break;
    case 11: // PULL_MESSAGE
    case 361: // LITE_PULL_MESSAGE, POP and the membership watch (not in RocketMQ 4.9.8): read like a pull
    case 200050:
    case 200051:
    case 200052:
    case 200053:
    case 90001:
      add(f.topic, Perm.SUB);
      add(retryTopic(f.consumerGroup), Perm.SUB);
      break;
    case 12: // QUERY_MESSAGE
      add(f.topic, Perm.SUB);
      break;
    case 34: {
      // HEART_BEAT: every consumer group and the topics it subscribes to
      const data = (body && body.length > 0 ? parseLenientJson(body.toString('utf8')) : {}) as HeartbeatBody | null;
      for (const consumer of data?.consumerDataSet ?? []) {
        add(retryTopic(consumer.groupName), Perm.SUB);
        for (const s of consumer.subscriptionDataSet ?? []) add(s.topic, Perm.SUB);
      }
      break;
    }
    case 35: // UNREGISTER_CLIENT
    case 38: // GET_CONSUMER_LIST_BY_GROUP
      add(retryTopic(f.consumerGroup), Perm.SUB);
      break;
    case 15: // UPDATE_CONSUMER_OFFSET
      add(retryTopic(f.consumerGroup), Perm.SUB);
      add(f.topic, Perm.SUB);
      break;
    default:
      break;
  }
  return out;
}

/** RocketMQ: Permission.checkPermission. */
function permits(needed: number, owned: number): boolean {
  if ((owned & Perm.DENY) !== 0) return false;
  if ((needed & Perm.ANY) !== 0) return (owned & (Perm.PUB | Perm.SUB)) !== 0;
  return (needed & owned) !== 0;
}

function sameSignature(expected: string, given: string): boolean {
  const a = Buffer.from(expected, 'utf8');
  const b = Buffer.from(given, 'utf8');
  return a.length === b.length && timingSafeEqual(a, b);
}

/** RocketMQ: PlainPermissionManager.checkPerm. */
function checkPerm(code: number, needed: Map<string, number>, owned: PlainAccount): AclRefusal | undefined {
  if (ADMIN_CODES.has(code) && !owned.admin) {
    return refuse(
      `Need admin permission for request code=${code}, but accessKey=${owned.accessKey} is not`,
      FRAMES.admin,
    );
  }
  const ownedPerms = owned.resourcePerms;
  if (ownedPerms === undefined && owned.admin) return undefined;
  for (const [resource, perm] of needed) {
    const isGroup = resource.startsWith(RETRY_PREFIX);
    const listed = ownedPerms?.get(resource);
    if (listed === undefined) {
      if (!permits(perm, isGroup ? owned.defaultGroupPerm : owned.defaultTopicPerm)) {
        return refuse(`No default permission for ${printResource(resource, isGroup)}`, FRAMES.defaultPerm);
      }
    } else if (!permits(perm, listed)) {
      return refuse(`No default permission for ${printResource(resource, isGroup)}`, FRAMES.perm);
    }
  }
  return undefined;
}

/** Checks one request against the rules; undefined when it may go on, else what to answer. */
export function checkAccess(config: PlainAclConfig, request: AclRequest): AclRefusal | undefined {
  if (NAME_SERVER_QUERIES.has(request.code)) return undefined;
  // RocketMQ compares the address without its port.
  const raw = request.remoteAddress;
  const colon = raw.lastIndexOf(':');
  const host = normalizeAddress(colon >= 0 ? raw.slice(0, colon) : raw);
  const fields = request.fields ?? {};
  let needed: Map<string, number>;
  try {
    needed = requestResources(request.code, fields, request.body);
  } catch (e) {
    return refuse((e as Error).message, FRAMES.parse);
  }
  for (const white of config.globalWhiteRemoteAddresses) if (white(host)) return undefined;
  const accessKey = request.fields?.[ACL_ACCESS_KEY];
  if (accessKey === null || accessKey === undefined) return refuse('No accessKey is configured', FRAMES.noAccessKey);
  const account = config.accounts.get(accessKey);
  if (!account) return refuse(`No acl config for ${accessKey}`, FRAMES.noAccount);
  if (account.whiteRemoteAddress(host)) return undefined;
  const signature = fields[ACL_SIGNATURE];
  const expected = aclSignature(aclSignedContent(fields as ExtFields, request.body ?? null), account.secretKey);
  if (typeof signature !== 'string' || !sameSignature(expected, signature)) {
    return refuse(`Check signature failed for accessKey=${accessKey}`, FRAMES.signature);
  }
  if (needed.get(TRACE_TOPIC) === Perm.PUB) return undefined;
  return checkPerm(request.code, needed, account);
}
