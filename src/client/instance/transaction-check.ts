/**
 * CHECK_TRANSACTION_STATE (39) on the client — RocketMQ's ClientRemotingProcessor.checkTransactionState:
 * the broker asks what became of a half message left undecided. The message in the body names its
 * producer group (PGROUP); the producer of that group in this client answers with END_TRANSACTION. A
 * message for a group this client does not serve, or a body that does not decode, is only logged: the
 * request is oneway and the broker asks again later.
 * @pure
 */
import { decodeMessages } from '../../common/codec/index.js';
import type { Logger } from '../../common/logger.js';
import { MessageConst } from '../../common/message.js';
import type { RemotingRequest } from '../../protocol/command.js';
import type { CheckTransactionStateRequestHeader } from '../../protocol/commands/end-transaction.js';
import type { MQProducerInner } from './mq-consumer-inner.js';

const text = (h: Record<string, unknown>, key: string): string | undefined => {
  const v = h[key];
  return v === undefined || v === null ? undefined : String(v);
};

const offset = (h: Record<string, unknown>, key: string): number | undefined => {
  const v = text(h, key);
  return v !== undefined && /^\d+$/.test(v) ? Number(v) : undefined;
};

/** Serves one CHECK_TRANSACTION_STATE; never answers (oneway) and never throws. */
export function checkTransactionState(
  request: RemotingRequest,
  addr: string,
  deps: { selectProducer?(group: string): MQProducerInner | undefined; logger: Logger },
): undefined {
  const h = request.header as Record<string, unknown>;
  const tranStateTableOffset = offset(h, 'tranStateTableOffset');
  const commitLogOffset = offset(h, 'commitLogOffset');
  let msg;
  try {
    msg = request.body ? decodeMessages(request.body)[0] : undefined;
  } catch (err) {
    deps.logger.warn({ err, addr }, 'CHECK_TRANSACTION_STATE: the message does not decode');
    return undefined;
  }
  if (!msg || tranStateTableOffset === undefined || commitLogOffset === undefined) {
    deps.logger.warn({ addr, header: h }, 'CHECK_TRANSACTION_STATE without a message or its offsets');
    return undefined;
  }
  const props = msg.properties ?? {};
  const uniq = props[MessageConst.UNIQ_KEY];
  if (uniq) msg.transactionId = uniq;
  const group = props[MessageConst.PGROUP];
  const producer = group === undefined ? undefined : deps.selectProducer?.(group);
  if (!producer?.checkTransactionState) {
    deps.logger.debug({ addr, group }, 'CHECK_TRANSACTION_STATE for a producer group not in this client');
    return undefined;
  }
  const header: CheckTransactionStateRequestHeader = {
    tranStateTableOffset,
    commitLogOffset,
    msgId: text(h, 'msgId'),
    transactionId: text(h, 'transactionId'),
    offsetMsgId: text(h, 'offsetMsgId'),
  };
  producer.checkTransactionState(addr, msg, header);
  return undefined;
}
