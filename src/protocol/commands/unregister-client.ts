/**
 * UNREGISTER_CLIENT (35): a client leaves (sent at shutdown). Header: clientID, producerGroup?,
 * consumerGroup?. The broker removes the client from the group and announces the change to the
 * remaining members at once.
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, str } from '../define.js';

export const UnregisterClientRequestHeader = z.object({
  clientID: str().min(1),
  producerGroup: str().optional(),
  consumerGroup: str().optional(),
});
export type UnregisterClientRequestHeader = z.infer<typeof UnregisterClientRequestHeader>;

export const UnregisterClient = defineCommand({
  code: RequestCode.UNREGISTER_CLIENT,
  name: 'UNREGISTER_CLIENT',
  requestHeader: UnregisterClientRequestHeader,
  responseHeader: EmptyHeader,
});
