/**
 * The AdminClient's message queries (mqadmin `queryMsgById`, `queryMsgByKey`). The AdminClient's
 * methods of the same names document them.
 */
import { InvalidArgumentError } from '../../common/errors.js';
import type { MessageExt } from '../../common/message.js';
import { decodeMessageId, decodeMessages } from '../../common/codec/index.js';
import { RequestCode, ResponseCode, UNIQUE_MSG_QUERY_FLAG, errorFromResponse } from '../../protocol/index.js';
import { checkTopic, type AdminTransport } from './admin-transport.js';

export interface QueryByKeyOptions {
  /** At most this many messages (the broker caps it at 64). Default 32. */
  maxNum?: number;
  /** Only messages stored at or after this time, ms. Default 0. */
  beginTimestamp?: number;
  /** Only messages stored at or before this time, ms. Default: no limit. */
  endTimestamp?: number;
}

export async function queryMsgById(t: AdminTransport, msgId: string, topic?: string): Promise<MessageExt> {
  if (typeof msgId !== 'string' || !/^[0-9A-Fa-f]{32}$|^[0-9A-Fa-f]{56}$/.test(msgId))
    throw new InvalidArgumentError('msgId', `must be a message id (32 or 56 hex digits), got '${String(msgId)}'`);
  let offset: number | undefined;
  try {
    offset = decodeMessageId(msgId).offset;
  } catch {
    offset = undefined;
  }
  if (offset !== undefined) {
    for (const addr of await t.brokerAddresses()) {
      const res = await t.invoke(addr, RequestCode.VIEW_MESSAGE_BY_ID, { offset });
      if (res.code !== ResponseCode.SUCCESS || !res.body) continue;
      const [m] = decodeMessages(res.body);
      if (m && (m.msgId === msgId.toUpperCase() || m.offsetMsgId === msgId.toUpperCase())) return m;
    }
  }
  if (topic !== undefined) {
    checkTopic(topic);
    const found = await query(t, topic, msgId, 32, 0, Number.MAX_SAFE_INTEGER, true);
    const m = found.find((x) => x.msgId === msgId.toUpperCase()) ?? found[0];
    if (m) return m;
  }
  throw errorFromResponse(
    ResponseCode.QUERY_NOT_FOUND,
    topic === undefined
      ? `no message with id ${msgId} (for a client message id, name its topic)`
      : `no message with id ${msgId} in topic ${topic}`,
  );
}

export async function queryMsgByKey(
  t: AdminTransport,
  topic: string,
  key: string,
  options: QueryByKeyOptions,
): Promise<MessageExt[]> {
  checkTopic(topic);
  if (typeof key !== 'string' || key === '') throw new InvalidArgumentError('key', 'must be a non-empty string');
  const maxNum = options.maxNum ?? 32;
  if (!Number.isInteger(maxNum) || maxNum < 1) throw new InvalidArgumentError('maxNum', 'must be an integer >= 1');
  return query(
    t,
    topic,
    key,
    maxNum,
    options.beginTimestamp ?? 0,
    options.endTimestamp ?? Number.MAX_SAFE_INTEGER,
    false,
  );
}

/** QUERY_MESSAGE on every broker (by key, or by UNIQ_KEY when `unique`), newest first. */
async function query(
  t: AdminTransport,
  topic: string,
  key: string,
  maxNum: number,
  begin: number,
  end: number,
  unique: boolean,
): Promise<MessageExt[]> {
  const out: MessageExt[] = [];
  for (const addr of await t.brokerAddresses()) {
    const res = await t.invoke(addr, RequestCode.QUERY_MESSAGE, {
      topic,
      key,
      maxNum,
      beginTimestamp: begin,
      endTimestamp: end,
      ...(unique ? { [UNIQUE_MSG_QUERY_FLAG]: 'true' } : {}),
    });
    if (res.code === ResponseCode.QUERY_NOT_FOUND) continue;
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    if (res.body) out.push(...decodeMessages(res.body));
  }
  return out.sort((a, b) => b.storeTimestamp - a.storeTimestamp).slice(0, maxNum);
}
