/**
 * END_TRANSACTION (37): a transactional producer's decision on a half message (RocketMQ's
 * EndTransactionRequestHeader). `commitOrRollback` is a transaction type of MessageSysFlag: 0x8 commit,
 * 0xC rollback, 0x0 not decided (the answer to a check that is still UNKNOW). `tranStateTableOffset` is
 * the half message's queue offset and `commitLogOffset` its commit-log offset, both from the send
 * result (or from the broker's check). Sent oneway by RocketMQ's clients; the broker's answer is
 * SUCCESS, or SYSTEM_ERROR naming what does not match.
 *
 * CHECK_TRANSACTION_STATE (39): the broker asks a member of the producer group (oneway) what became of
 * a half message left undecided; the body is the message (the real topic and queue restored).
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

export const EndTransactionRequestHeader = z.object({
  producerGroup: str().min(1),
  tranStateTableOffset: long().min(0),
  commitLogOffset: long().min(0),
  commitOrRollback: int32(),
  fromTransactionCheck: z.boolean().optional(),
  msgId: str(),
  transactionId: str().optional(),
});
export type EndTransactionRequestHeader = z.infer<typeof EndTransactionRequestHeader>;

export const EndTransaction = defineCommand({
  code: RequestCode.END_TRANSACTION,
  name: 'END_TRANSACTION',
  requestHeader: EndTransactionRequestHeader,
  responseHeader: EmptyHeader,
});

/** RocketMQ's CheckTransactionStateRequestHeader, as the broker sends it and the client reads it. */
export const CheckTransactionStateRequestHeader = z.object({
  tranStateTableOffset: long(),
  commitLogOffset: long(),
  msgId: str().optional(),
  transactionId: str().optional(),
  offsetMsgId: str().optional(),
});
export type CheckTransactionStateRequestHeader = z.infer<typeof CheckTransactionStateRequestHeader>;
