/**
 * UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200): RocketMQ's AdminBrokerProcessor. The body is a
 * SubscriptionGroupConfig (validated by the HTTP layer with its schema, RocketMQ's defaults filled in).
 */
import { groupNameProblem } from '../../common/names.js';
import { ResponseCode, SubscriptionGroupConfigSchema } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const updateAndCreateSubscriptionGroup: Processor = (ctx, request) => {
  const parsed = SubscriptionGroupConfigSchema.safeParse(request.parsedBody);
  if (!parsed.success)
    return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, 'the subscription group config is invalid'));
  const problem = groupNameProblem(parsed.data.groupName);
  if (problem) return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, problem));
  ctx.subscriptionGroupManager.updateSubscriptionGroupConfig(parsed.data);
  return Promise.resolve(ok());
};
