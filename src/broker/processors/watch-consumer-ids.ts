/**
 * WATCH_CONSUMER_IDS (90001, ours) — the HTTP stand-in for RocketMQ's oneway NOTIFY_CONSUMER_IDS_CHANGED
 * (docs/protocol.md, "Membership news"). Answered at once when the group's membership version differs
 * from the one in the header, otherwise held until it moves (a join, a leave, an eviction) or
 * `timeoutMillis` passes. Always SUCCESS: header `version`, body `{"consumerIdList": [...]}` (possibly
 * empty). The held call keeps the caller alive; when it ends the caller must watch again (or heartbeat)
 * within the broker's grace time. A call whose client went away is dropped.
 */
import type { WatchConsumerIdsRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const watchConsumerIds: Processor = async (ctx, request, connection) => {
  const h = request.header as WatchConsumerIdsRequestHeader;
  const snapshot =
    (await ctx.consumerManager.watch(h.consumerGroup, h.clientID, h.version, h.timeoutMillis, connection.signal)) ??
    ctx.consumerManager.snapshot(h.consumerGroup);
  const body = Buffer.from(JSON.stringify({ consumerIdList: snapshot.clientIds }), 'utf8');
  return ok({ version: snapshot.version }, undefined, body);
};
