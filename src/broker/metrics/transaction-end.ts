/**
 * The transaction metrics of an END_TRANSACTION the broker applied (RocketMQ: EndTransactionProcessor's
 * commitMessagesTotal, rollBackMessagesTotal and transactionFinishLatency): the half message is read back
 * for its real topic and born time, after the answer, so the producer does not wait for it.
 */
import { MessageSysFlag } from '../../common/codec/index.js';
import { MessageConst } from '../../common/message.js';
import type { EndTransactionRequestHeader } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';

export async function recordTransactionEnd(ctx: BrokerContext, h: EndTransactionRequestHeader): Promise<void> {
  const commit = h.commitOrRollback === MessageSysFlag.TRANSACTION_COMMIT_TYPE;
  if (!commit && h.commitOrRollback !== MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) return;
  const half = await ctx.lookMessageByOffset(h.commitLogOffset).catch(() => null);
  if (!half) return;
  const topic = half.properties?.[MessageConst.REAL_TOPIC] ?? half.topic;
  // RocketMQ records the finish latency in seconds, and only for commits.
  const seconds = Math.max(0, Math.floor((ctx.clock.now() - half.bornTimestamp) / 1000));
  ctx.ops.stats.metrics.onTransactionEnd(topic, commit, seconds);
}
