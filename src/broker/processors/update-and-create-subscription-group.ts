/**
 * UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (200): RocketMQ's AdminBrokerProcessor. The body is a
 * SubscriptionGroupConfig, already validated by the listener with the command's schema (RocketMQ's
 * defaults filled in), as every command's body is.
 */
import { groupNameProblem } from '../../common/names.js';
import { ResponseCode, type SubscriptionGroupConfig } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const updateAndCreateSubscriptionGroup: Processor = (ctx, request) => {
  const config = request.parsedBody as SubscriptionGroupConfig;
  const problem = groupNameProblem(config.groupName);
  if (problem) return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, problem));
  ctx.subscriptionGroupManager.updateSubscriptionGroupConfig(config);
  return Promise.resolve(ok());
};
