/**
 * CHECK_CLIENT_CONFIG (46) — RocketMQ: ClientManageProcessor.checkClientConfig. A tag subscription (or
 * none) is always fine; another expression type needs the broker's property filter
 * (`enablePropertyFilter`) and must compile, so that a consumer learns at start that its SQL92
 * subscription cannot be served instead of seeing every pull fail.
 */
import { compileSql92, isTagType } from '../../filter/index.js';
import { ResponseCode, type CheckClientRequestBody } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const checkClientConfig: Processor = async (ctx, request) => {
  const body = request.parsedBody as CheckClientRequestBody;
  const sd = body.subscriptionData;
  if (!sd || isTagType(sd.expressionType)) return ok();
  if (!ctx.brokerConfig.enablePropertyFilter) {
    return fail(
      ResponseCode.SYSTEM_ERROR,
      `The broker does not support consumer to filter message by ${sd.expressionType}`,
    );
  }
  try {
    if (sd.expressionType !== 'SQL92') throw new Error(`no filter for expression type ${sd.expressionType}`);
    compileSql92(sd.subString);
  } catch (e) {
    return fail(ResponseCode.SUBSCRIPTION_PARSE_FAILED, (e as Error).message);
  }
  return ok();
};
