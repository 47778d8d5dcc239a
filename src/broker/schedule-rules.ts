/**
 * The pure rules of delay levels (RocketMQ: ScheduleMessageService, HookUtils.transformDelayLevelMessage).
 *
 * - `parseMessageDelayLevel`: RocketMQ's `messageDelayLevel` string, items separated by spaces, each a
 *   whole number with the unit s, m, h or d; level = index + 1. Our documented extension: the unit `ms`
 *   (e.g. `"100ms 200ms 1s"`), so tests can use a fast table.
 * - `toScheduleMessage`: a message with DELAY > 0 (not a PREPARED / ROLLBACK transaction record) moves to
 *   SCHEDULE_TOPIC_XXXX, queue level-1, with REAL_TOPIC / REAL_QID saved; the level is clamped to the max.
 * - `messageTimeUp`: the stored delayed message turned back into what it was (real topic and queue, DELAY
 *   removed, WAIT=false, the same reconsumeTimes, born host/time, store host and other properties).
 * @pure
 */
import { MessageConst, SCHEDULE_TOPIC, type MessageExt } from '../common/message.js';
import { MessageSysFlag } from '../common/codec/constants.js';
import type { MessageToStore } from '../store/index.js';

export { DEFAULT_MESSAGE_DELAY_LEVEL, parseDelayLevels as parseMessageDelayLevel } from '../store/delay-levels.js';

/** RocketMQ: delayLevel2QueueId / queueId2DelayLevel. */
export const delayLevel2QueueId = (level: number): number => level - 1;
export const queueId2DelayLevel = (queueId: number): number => queueId + 1;

/** The DELAY property as RocketMQ's Message.getDelayTimeLevel reads it; 0 when absent or not a number. */
export function delayTimeLevelOf(properties: Readonly<Record<string, string>> | null | undefined): number {
  const raw = properties?.[MessageConst.DELAY];
  if (raw === undefined || !/^[+-]?\d{1,10}$/.test(raw.trim())) return 0;
  return Number(raw.trim());
}

const TIMER_PROPERTIES = ['TIMER_DELIVER_MS', 'TIMER_DELAY_SEC', 'TIMER_DELAY_MS'] as const;

/**
 * RocketMQ: HookUtils.handleScheduleMessage for a DELAY level message. Changes and returns `msg` when it is
 * to be delayed, else returns it untouched.
 */
export function toScheduleMessage(msg: MessageToStore, maxDelayLevel: number): MessageToStore {
  const tranType = msg.sysFlag & MessageSysFlag.TRANSACTION_MASK;
  if (tranType !== MessageSysFlag.TRANSACTION_NOT_TYPE && tranType !== MessageSysFlag.TRANSACTION_COMMIT_TYPE) {
    return msg;
  }
  let level = delayTimeLevelOf(msg.properties);
  if (level <= 0) return msg;
  // RocketMQ: checkIfTimerMessage clears the timer properties of a delay-level message.
  for (const p of TIMER_PROPERTIES) delete msg.properties[p];
  if (level > maxDelayLevel) {
    level = maxDelayLevel;
    msg.properties[MessageConst.DELAY] = String(level);
  }
  msg.properties[MessageConst.REAL_TOPIC] = msg.topic;
  msg.properties[MessageConst.REAL_QID] = String(msg.queueId);
  msg.topic = SCHEDULE_TOPIC;
  msg.queueId = delayLevel2QueueId(level);
  return msg;
}

/**
 * RocketMQ: ScheduleMessageService.correctDeliverTimestamp — a delivery time further away than the
 * level's delay (the clock went back, or the table shrank) is treated as due now.
 */
export function correctDeliverTimestamp(now: number, deliverTimestamp: number, levelDelayMs: number): number {
  return deliverTimestamp > now + levelDelayMs ? now : deliverTimestamp;
}

/** When a stored delayed message is due: its store time plus its level's delay (RocketMQ's tags code). */
export function deliverTimestampOf(levelsMs: readonly number[], level: number, storeTimestamp: number): number {
  const delayMs = levelsMs[Math.min(level, levelsMs.length) - 1];
  return storeTimestamp + (delayMs ?? 1000);
}

/**
 * RocketMQ: ScheduleMessageService.messageTimeUp. Returns null when the record lacks a usable
 * REAL_TOPIC / REAL_QID (it cannot be delivered anywhere).
 */
export function messageTimeUp(msgExt: MessageExt): MessageToStore | null {
  const properties: Record<string, string> = { ...(msgExt.properties ?? {}) };
  const realTopic = properties[MessageConst.REAL_TOPIC];
  const realQid = properties[MessageConst.REAL_QID];
  if (!realTopic || realQid === undefined || !/^\d{1,9}$/.test(realQid)) return null;
  // RocketMQ writes the stored properties string before it clears DELAY and sets WAIT=false on the
  // message object, so the delivered record keeps DELAY=<level> and the sender's WAIT.
  for (const p of TIMER_PROPERTIES) delete properties[p];
  return {
    topic: realTopic,
    queueId: Number(realQid),
    flag: msgExt.flag,
    body: msgExt.body ?? Buffer.alloc(0),
    properties,
    sysFlag: msgExt.sysFlag,
    bornTimestamp: msgExt.bornTimestamp,
    bornHost: { ...msgExt.bornHost },
    storeHost: { ...msgExt.storeHost },
    reconsumeTimes: msgExt.reconsumeTimes,
    preparedTransactionOffset: msgExt.preparedTransactionOffset,
  };
}
