/**
 * INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223, mqadmin getConsumerStatus), as RocketMQ's
 * Broker2Client.getConsumeStatus: the broker asks each member of the group (or only `clientAddr`, a client
 * id, when given) with GET_CONSUMER_STATUS_FROM_CLIENT (221) over the member's own remoting connection,
 * and answers GetConsumerStatusBody `{"consumerTable":{"<clientId>":{<MessageQueue>:offset}},
 * "messageQueueTable":{}}` with the offsets each member holds for `topic`. A member that does not answer
 * in time, answers an error, or reached the broker over HTTP is left out, as RocketMQ leaves out a member
 * whose call fails. SYSTEM_ERROR `No Any Consumer online in the consumer group: [<g>]` when the group has
 * no live member; SYSTEM_ERROR `the client does not support this feature. version=<n>` for a member older
 * than V3_0_7_SNAPSHOT.
 */
import { FastJsonMap, parseFastJson } from '../../protocol/admin-body-json.js';
import { RequestCode, ResponseCode, toFastJson, type GetConsumerStatusRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

/** How long the broker waits for each member (RocketMQ: 5 s per invokeSync). */
const CALL_CLIENT_TIMEOUT_MS = 5000;
/** MQVersion.Version.V3_0_7_SNAPSHOT.ordinal(): the oldest client that answers GET_CONSUMER_STATUS_FROM_CLIENT. */
const V3_0_7_SNAPSHOT = 28;

export const getConsumerStatus: Processor = async (ctx, request) => {
  const h = request.header as GetConsumerStatusRequestHeader;
  const members = ctx.consumerManager.getConsumerGroupInfo(h.group)?.getChannels() ?? [];
  if (members.length === 0) {
    return fail(ResponseCode.SYSTEM_ERROR, `No Any Consumer online in the consumer group: [${h.group}]`);
  }
  const origin = h.clientAddr?.trim() ?? '';
  const consumerTable: Record<string, FastJsonMap> = {};
  for (const { clientId } of members) {
    const version = ctx.ops.clients.get(clientId)?.version;
    if (version !== undefined && version < V3_0_7_SNAPSHOT) {
      return fail(ResponseCode.SYSTEM_ERROR, `the client does not support this feature. version=${version}`);
    }
    if (origin !== '' && origin !== clientId) continue;
    const table = await askMember(ctx, clientId, h);
    if (table) consumerTable[clientId] = table;
    if (origin !== '') break;
  }
  return ok({}, undefined, Buffer.from(toFastJson({ consumerTable, messageQueueTable: {} }), 'utf8'));
};

/** One member's messageQueueTable, or undefined when it could not be had. */
async function askMember(
  ctx: Parameters<Processor>[0],
  clientId: string,
  h: GetConsumerStatusRequestHeader,
): Promise<FastJsonMap | undefined> {
  const call = ctx.ops.callClient(
    clientId,
    { code: RequestCode.GET_CONSUMER_STATUS_FROM_CLIENT, extFields: { topic: h.topic, group: h.group }, body: null },
    CALL_CLIENT_TIMEOUT_MS,
  );
  if (!call) {
    ctx.logger.warn({ group: h.group, clientId }, 'get consumer status: the member has no remoting connection');
    return undefined;
  }
  try {
    const answer = await call;
    if (answer.code !== ResponseCode.SUCCESS || !answer.body) return undefined;
    const body = parseFastJson(answer.body.toString('utf8')) as { messageQueueTable?: unknown } | null;
    const table = body?.messageQueueTable;
    if (table instanceof FastJsonMap) return table;
    // An empty map has no object key, so it reads as a plain object.
    return new FastJsonMap();
  } catch (e) {
    ctx.logger.warn({ err: e, group: h.group, clientId }, 'get consumer status: the member did not answer');
    return undefined;
  }
}
