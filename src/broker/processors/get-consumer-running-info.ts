/**
 * GET_CONSUMER_RUNNING_INFO (307, mqadmin consumerStatus), as RocketMQ's AdminBrokerProcessor.callConsumer:
 * the request goes on, unchanged, to the consumer over its own remoting connection, and the consumer's
 * answer comes back as it is. Refused SYSTEM_ERROR `The Consumer <group> <clientId> not online` when the
 * client is not a member of the group, or `... too low to finish ...` for a client older than
 * V3_1_8_SNAPSHOT; CONSUME_MSG_TIMEOUT when the consumer does not answer in time. A member that reached
 * the broker over HTTP has no connection the broker can call: SYSTEM_ERROR saying so.
 */
import { ResponseCode, type GetConsumerRunningInfoRequestHeader } from '../../protocol/index.js';
import { requestHeaderToExtFields } from '../../protocol/ext-fields.js';
import type { Processor } from '../broker-context.js';
import { V3_1_8_SNAPSHOT } from '../client-channel-table.js';
import { ClientCallError } from '../remoting/client-invoker.js';
import { fail } from './responses.js';

/** How long the broker waits for the consumer (RocketMQ: Broker2Client.callClient's timeout). */
const CALL_CLIENT_TIMEOUT_MS = 5000;

export const getConsumerRunningInfo: Processor = async (ctx, request) => {
  const h = request.header as GetConsumerRunningInfoRequestHeader;
  const member = ctx.consumerManager
    .getConsumerGroupInfo(h.consumerGroup)
    ?.getChannels()
    .some((c) => c.clientId === h.clientId);
  if (!member) return fail(ResponseCode.SYSTEM_ERROR, `The Consumer <${h.consumerGroup}> <${h.clientId}> not online`);
  const seen = ctx.ops.clients.get(h.clientId);
  if (seen && seen.version < V3_1_8_SNAPSHOT) {
    return fail(
      ResponseCode.SYSTEM_ERROR,
      `The Consumer <${h.clientId}> Version <${seen.version}> too low to finish, please upgrade it to V3_1_8_SNAPSHOT`,
    );
  }
  const call = ctx.ops.callClient(
    h.clientId,
    { code: request.code, extFields: requestHeaderToExtFields(request.code, h), body: request.body ?? null },
    CALL_CLIENT_TIMEOUT_MS,
  );
  if (!call) {
    return fail(
      ResponseCode.SYSTEM_ERROR,
      `invoke consumer <${h.consumerGroup}> <${h.clientId}> Exception: the consumer has no remoting connection to this broker`,
    );
  }
  try {
    const answer = await call;
    return {
      code: answer.code,
      remark: answer.remark ?? undefined,
      header: {},
      body: answer.body ?? undefined,
    };
  } catch (e) {
    if (e instanceof ClientCallError && e.kind === 'timeout') {
      return fail(
        ResponseCode.CONSUME_MSG_TIMEOUT,
        `consumer <${h.consumerGroup}> <${h.clientId}> Timeout: ${e.message}`,
      );
    }
    return fail(
      ResponseCode.SYSTEM_ERROR,
      `invoke consumer <${h.consumerGroup}> <${h.clientId}> Exception: ${(e as Error).message}`,
    );
  }
};
