/**
 * The AdminClient's topic commands (mqadmin `topicList`, `updateTopic`, `deleteTopic`, `topicStatus`).
 * The AdminClient's methods of the same names document them.
 */
import { InvalidArgumentError, RocketMQError } from '../../common/errors.js';
import type { MessageQueue } from '../../common/message.js';
import { RequestCode, ResponseCode, TopicListBody, errorFromResponse } from '../../protocol/index.js';
import { byQueue, checkTopic, num, offsetTableOf, type AdminTransport } from './admin-transport.js';

/** One queue of `topicStatus`: RocketMQ's TopicOffset. */
export interface TopicQueueStatus {
  mq: MessageQueue;
  minOffset: number;
  maxOffset: number;
  /** Store time of the queue's last message, ms (0 when empty). */
  lastUpdateTimestamp: number;
}

export interface CreateTopicOptions {
  /** Read and write queues. Default 8 (mqadmin's default). */
  queueNums?: number;
  /** PermName bits: 6 = read and write (default), 4 = read only, 2 = write only. */
  perm?: number;
  /** Marks the topic ordered. Default false. */
  order?: boolean;
  /** Read queues, when they should differ from `queueNums`. */
  readQueueNums?: number;
  /** Write queues, when they should differ from `queueNums`. */
  writeQueueNums?: number;
}

export async function topicList(t: AdminTransport): Promise<string[]> {
  const all = new Set<string>();
  const answers =
    t.namesrvAddr.length > 0
      ? [await t.nameServerCall(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER)]
      : await Promise.all(t.endpoints.map((addr) => t.call(addr, RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, {})));
  for (const res of answers) {
    const parsed = TopicListBody.safeParse(JSON.parse(res.body ? res.body.toString('utf8') : 'null'));
    if (!parsed.success) throw new RocketMQError('ERR_BAD_RESPONSE', 'malformed response: topic list body');
    for (const topic of parsed.data.topicList) all.add(topic);
  }
  return [...all].sort();
}

export async function createTopic(t: AdminTransport, topic: string, options: CreateTopicOptions): Promise<void> {
  checkTopic(topic);
  const queueNums = options.queueNums ?? 8;
  const readQueueNums = options.readQueueNums ?? queueNums;
  const writeQueueNums = options.writeQueueNums ?? queueNums;
  for (const [field, n] of [
    ['queueNums', queueNums],
    ['readQueueNums', readQueueNums],
    ['writeQueueNums', writeQueueNums],
  ] as const) {
    if (!Number.isInteger(n) || n < 1 || n > 1024)
      throw new InvalidArgumentError(field, `must be an integer from 1 to 1024, got ${String(n)}`);
  }
  const perm = options.perm ?? 6;
  if (![2, 4, 6].includes(perm)) throw new InvalidArgumentError('perm', `must be 2, 4 or 6, got ${String(perm)}`);
  for (const addr of await t.brokerAddresses()) {
    await t.call(addr, RequestCode.UPDATE_AND_CREATE_TOPIC, {
      topic,
      readQueueNums,
      writeQueueNums,
      perm,
      order: options.order ?? false,
      // the fields a RocketMQ broker requires, with mqadmin's values
      defaultTopic: 'TBW102',
      topicFilterType: 'SINGLE_TAG',
      topicSysFlag: 0,
    });
  }
}

export async function deleteTopic(t: AdminTransport, topic: string): Promise<void> {
  checkTopic(topic);
  for (const addr of await t.brokerAddresses()) await t.call(addr, RequestCode.DELETE_TOPIC_IN_BROKER, { topic });
  // As mqadmin: the NameServers forget the topic's route too (else it lingers until brokers re-register).
  for (const addr of t.namesrvAddr) await t.call(addr, RequestCode.DELETE_TOPIC_IN_NAMESRV, { topic });
}

export async function topicStatus(t: AdminTransport, topic: string): Promise<TopicQueueStatus[]> {
  checkTopic(topic);
  const rows: TopicQueueStatus[] = [];
  let found = false;
  for (const addr of await t.brokerAddresses()) {
    const res = await t.invoke(addr, RequestCode.GET_TOPIC_STATS_INFO, { topic });
    if (res.code === ResponseCode.TOPIC_NOT_EXIST) continue;
    if (res.code !== ResponseCode.SUCCESS) throw errorFromResponse(res.code, res.remark);
    found = true;
    for (const [mq, v] of offsetTableOf(res, 'GET_TOPIC_STATS_INFO').entries) {
      const o = v as Record<string, unknown>;
      rows.push({
        mq,
        minOffset: num(o.minOffset),
        maxOffset: num(o.maxOffset),
        lastUpdateTimestamp: num(o.lastUpdateTimestamp),
      });
    }
  }
  if (!found) throw errorFromResponse(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist`);
  return rows.sort(byQueue);
}
