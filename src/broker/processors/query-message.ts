/**
 * QUERY_MESSAGE (12): the messages of a topic carrying a key (RocketMQ's QueryMessageProcessor).
 *
 * RocketMQ answers from an index file of message keys. The bundled broker keeps no key index: it scans
 * each read queue of the topic backwards from its end, within the time range, looking at no more than
 * QUERY_MESSAGE_SCAN_LIMIT messages in all (shared between the queues), and answers the newest
 * `maxNum` matches (at most 64, RocketMQ's maxMsgsNumBatch). A key matches one of the space-separated
 * words of the KEYS property; with `_UNIQUE_KEY_QUERY` set it matches the UNIQ_KEY property (the
 * client message id). QUERY_NOT_FOUND `can not find message, maybe time range not correct` when none.
 */
import { decodeMessages } from '../../common/codec/index.js';
import { MessageConst } from '../../common/message.js';
import { QUERY_MESSAGE_SCAN_LIMIT, ResponseCode, type QueryMessageRequestHeader } from '../../protocol/index.js';
import type { BrokerContext, Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

/** RocketMQ: StoreConfig.maxMsgsNumBatch. */
const MAX_MSGS_NUM_BATCH = 64;
/** RocketMQ: BrokerConfig.defaultQueryMaxNum, used for unique-key queries. */
const DEFAULT_QUERY_MAX_NUM = 32;
const READ_BATCH = 32;

interface Hit {
  storeTimestamp: number;
  commitLogOffset: number;
  bytes: Buffer;
}

function matches(props: Record<string, string> | null | undefined, key: string, unique: boolean): boolean {
  if (!props) return false;
  if (unique) return props[MessageConst.UNIQ_KEY] === key;
  const keys = props[MessageConst.KEYS];
  return keys !== undefined && keys.split(MessageConst.KEY_SEPARATOR).includes(key);
}

/** Scans one queue over [from, to) forward; returns the matches inside the time range. */
async function scanQueue(
  ctx: BrokerContext,
  h: QueryMessageRequestHeader,
  queueId: number,
  from: number,
  to: number,
  unique: boolean,
): Promise<Hit[]> {
  const hits: Hit[] = [];
  let offset = from;
  while (offset < to) {
    const r = await ctx.store.getMessage('', h.topic, queueId, offset, Math.min(READ_BATCH, to - offset), null);
    if (r.status !== 'FOUND' || r.messages.length === 0) {
      if (r.nextBeginOffset <= offset) break;
      offset = r.nextBeginOffset;
      continue;
    }
    for (const record of r.messages) {
      const [m] = decodeMessages(record, { decompressBody: false });
      if (!m) continue;
      if (m.storeTimestamp < h.beginTimestamp || m.storeTimestamp > h.endTimestamp) continue;
      if (matches(m.properties, h.key, unique)) {
        hits.push({ storeTimestamp: m.storeTimestamp, commitLogOffset: m.commitLogOffset, bytes: Buffer.from(record) });
      }
    }
    offset = r.nextBeginOffset > offset ? r.nextBeginOffset : offset + r.messages.length;
  }
  return hits;
}

export const queryMessage: Processor = async (ctx, request) => {
  const h = request.header as QueryMessageRequestHeader;
  const unique = h._UNIQUE_KEY_QUERY === true || h._UNIQUE_KEY_QUERY === 'true';
  const maxNum = Math.min(unique ? DEFAULT_QUERY_MAX_NUM : h.maxNum, MAX_MSGS_NUM_BATCH);
  const cfg = ctx.topicConfigManager.selectTopicConfig(h.topic);
  const hits: Hit[] = [];
  if (cfg && cfg.readQueueNums > 0) {
    const budget = Math.max(1, Math.floor(QUERY_MESSAGE_SCAN_LIMIT / cfg.readQueueNums));
    for (let queueId = 0; queueId < cfg.readQueueNums; queueId++) {
      const min = ctx.store.getMinOffsetInQueue(h.topic, queueId);
      const max = ctx.store.getMaxOffsetInQueue(h.topic, queueId);
      if (max <= min) continue;
      const begin =
        h.beginTimestamp > 0 ? await ctx.store.getOffsetInQueueByTime(h.topic, queueId, h.beginTimestamp) : min;
      const from = Math.max(min, begin, max - budget);
      hits.push(...(await scanQueue(ctx, h, queueId, from, max, unique)));
    }
  }
  if (hits.length === 0)
    return fail(ResponseCode.QUERY_NOT_FOUND, 'can not find message, maybe time range not correct');
  hits.sort((a, b) => b.storeTimestamp - a.storeTimestamp || b.commitLogOffset - a.commitLogOffset);
  const chosen = hits.slice(0, maxNum);
  const header = {
    indexLastUpdateTimestamp: ctx.clock.now(),
    indexLastUpdatePhyoffset: ctx.store.getCommitLogMaxOffset(),
  };
  return ok(header, undefined, Buffer.concat(chosen.map((c) => c.bytes)));
};
