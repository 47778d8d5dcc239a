/**
 * CHECK_CLIENT_CONFIG (46): before it starts, a consumer asks each broker whether it can serve a
 * subscription that is not a tag expression (RocketMQ: MQClientInstance.checkClientInBroker). No header;
 * the body is RocketMQ's CheckClientRequestBody as JSON: `clientId`, `group`, `subscriptionData`.
 *
 * Answers: SUCCESS when there is no subscription or it is a tag expression, or when it compiles;
 * SYSTEM_ERROR (1) "The broker does not support consumer to filter message by <type>" when the broker
 * does not serve property filters; SUBSCRIPTION_PARSE_FAILED (23) with the compiler's message when the
 * expression does not compile.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, str } from '../define.js';
import { SubscriptionDataSchema } from './heart-beat.js';

export const CheckClientRequestBodySchema = z.object({
  clientId: str().min(1),
  group: str().min(1),
  subscriptionData: SubscriptionDataSchema.nullable().optional(),
});
export type CheckClientRequestBody = z.infer<typeof CheckClientRequestBodySchema>;

export const CheckClientConfig = defineCommand({
  code: RequestCode.CHECK_CLIENT_CONFIG,
  name: 'CHECK_CLIENT_CONFIG',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  requestBody: CheckClientRequestBodySchema,
});
