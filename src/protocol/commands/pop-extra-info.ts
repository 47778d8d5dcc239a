/**
 * The receipt handle of a popped message (RocketMQ's ExtraInfoUtil "extra info") and the POP retry topic
 * name (RocketMQ's KeyBuilder). Shared by the broker and the SimpleConsumer.
 * @pure
 */
import { RETRY_GROUP_TOPIC_PREFIX } from '../../common/message.js';

/** The revive queue id RocketMQ reserves for orderly POP (KeyBuilder.POP_ORDER_REVIVE_QUEUE). */
export const POP_ORDER_REVIVE_QUEUE = 999;

/** `0`: the topic itself; `1`: its POP retry topic. */
export type RetryMark = '0' | '1';

/** RocketMQ: KeyBuilder.buildPopRetryTopicV1 — `%RETRY%<group>_<topic>`. */
export const popRetryTopic = (topic: string, group: string): string => `${RETRY_GROUP_TOPIC_PREFIX}${group}_${topic}`;

/** The retry mark of a topic a message was read from. */
export const retryMarkOf = (storeTopic: string): RetryMark =>
  storeTopic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? '1' : '0';

/** The topic a handle's message is stored in, from the topic and group the ack names. */
export const storeTopicOf = (topic: string, group: string, mark: RetryMark): string =>
  mark === '1' && !topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) ? popRetryTopic(topic, group) : topic;

export interface ExtraInfo {
  ckOffset: number;
  popTime: number;
  invisibleTime: number;
  reviveQid: number;
  retry: RetryMark;
  brokerName: string;
  queueId: number;
  queueOffset: number;
}

/** RocketMQ: ExtraInfoUtil.buildExtraInfo (the eight-field form). */
export function buildExtraInfo(e: ExtraInfo): string {
  return [e.ckOffset, e.popTime, e.invisibleTime, e.reviveQid, e.retry, e.brokerName, e.queueId, e.queueOffset].join(
    ' ',
  );
}

const INT = /^-?\d{1,16}$/;

/** Parses a receipt handle; a string naming what is wrong when it is malformed. */
export function parseExtraInfo(s: string): ExtraInfo | string {
  const f = s.split(' ');
  if (f.length !== 8) return `the receipt handle has ${f.length} fields, expected 8`;
  const names = ['checkpoint offset', 'pop time', 'invisible time', 'revive queue id'] as const;
  for (let i = 0; i < 4; i++) if (!INT.test(f[i]!)) return `the receipt handle's ${names[i]} is not a number`;
  if (f[4] !== '0' && f[4] !== '1') return `the receipt handle's retry mark "${f[4]}" is neither 0 nor 1`;
  if (!INT.test(f[6]!) || !INT.test(f[7]!)) return "the receipt handle's queue id or queue offset is not a number";
  return {
    ckOffset: Number(f[0]),
    popTime: Number(f[1]),
    invisibleTime: Number(f[2]),
    reviveQid: Number(f[3]),
    retry: f[4],
    brokerName: f[5]!,
    queueId: Number(f[6]),
    queueOffset: Number(f[7]),
  };
}

/** RocketMQ: ExtraInfoUtil.buildStartOffsetInfo / buildMsgOffsetInfo, one queue. */
export const startOffsetInfoOf = (storeTopic: string, queueId: number, startOffset: number): string =>
  `${retryMarkOf(storeTopic)} ${queueId} ${startOffset}`;
export const msgOffsetInfoOf = (storeTopic: string, queueId: number, offsets: readonly number[]): string =>
  `${retryMarkOf(storeTopic)} ${queueId} ${offsets.join(',')}`;

/** java.util.BitSet.valueOf(bytes) as the set bit indexes (little-endian bytes, bit 0 first). */
export function bitSetIndexes(base64: string): number[] {
  const bytes = Buffer.from(base64, 'base64');
  const out: number[] = [];
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    for (let bit = 0; bit < 8; bit++) if ((b >> bit) & 1) out.push(i * 8 + bit);
  }
  return out;
}

/** java.util.BitSet.toByteArray of the given indexes, base64 (what a Java client sends). */
export function bitSetOf(indexes: readonly number[]): string {
  const max = indexes.reduce((m, i) => Math.max(m, i), -1);
  const bytes = Buffer.alloc(max < 0 ? 0 : (max >> 3) + 1);
  for (const i of indexes) bytes[i >> 3] = bytes[i >> 3]! | (1 << (i & 7));
  return bytes.toString('base64');
}
