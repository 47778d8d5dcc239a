/**
 * The SEND_MESSAGE side of transactions (RocketMQ: SendMessageProcessor's TRAN_MSG branch): a single
 * message with `TRAN_MSG=true` is stored as a half message, unless the broker refuses transactional
 * sends (`rejectTransactionMessage`).
 */
import { string2messageProperties } from '../../common/codec/index.js';
import { MessageConst } from '../../common/message.js';
import { ResponseCode, type RemotingResponse } from '../../protocol/index.js';
import type { MessageToStore, PutMessageResult } from '../../store/index.js';
import type { BrokerContext } from '../broker-context.js';
import { isTransactionPrepared } from './transactional-message-util.js';

export { isTransactionPrepared } from './transactional-message-util.js';

/** True when a send header's properties string carries `TRAN_MSG=true`. */
export function requestsHalfMessage(properties: string | undefined): boolean {
  if (properties === undefined || !properties.includes(MessageConst.TRAN_MSG)) return false;
  return isTransactionPrepared(string2messageProperties(properties));
}

/** Stores `msg` as a half message; the answer refusing it instead when transactions are refused here. */
export async function prepareHalfMessage(
  ctx: BrokerContext,
  msg: MessageToStore,
): Promise<PutMessageResult | RemotingResponse> {
  const service = ctx.transactionalMessageService;
  if (ctx.brokerConfig.rejectTransactionMessage || !service) {
    return {
      code: ResponseCode.NO_PERMISSION,
      header: {},
      remark: `the broker[${ctx.brokerIP}] sending transaction message is forbidden`,
    };
  }
  return service.prepareMessage(msg);
}
