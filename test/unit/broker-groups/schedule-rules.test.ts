import {
  correctDeliverTimestamp,
  delayTimeLevelOf,
  deliverTimestampOf,
  messageTimeUp,
  parseMessageDelayLevel,
  toScheduleMessage,
} from '../../../src/broker/schedule-rules.js';
import type { MessageExt } from '../../../src/common/message.js';
import type { MessageToStore } from '../../../src/store/index.js';

const msg = (properties: Record<string, string>, sysFlag = 0): MessageToStore => ({
  topic: 'T',
  queueId: 3,
  flag: 7,
  body: Buffer.from('hi'),
  properties,
  sysFlag,
  bornTimestamp: 1,
  bornHost: { ip: '10.0.0.1', port: 1 },
  reconsumeTimes: 2,
  preparedTransactionOffset: 0,
});

describe('delay level table (RocketMQ: parseDelayLevel)', () => {
  test("RocketMQ's default table: 18 levels, level 3 is 10 s", () => {
    const levels = parseMessageDelayLevel('1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h');
    expect(levels).toHaveLength(18);
    expect(levels[2]).toBe(10_000);
    expect(levels[17]).toBe(7_200_000);
  });

  test('units s, m, h, d and our ms extension; extra spaces are ignored', () => {
    expect(parseMessageDelayLevel(' 100ms  2s 3m 1h 1d')).toEqual([100, 2000, 180_000, 3_600_000, 86_400_000]);
  });

  test.each(['', '10', '10x', 'ms', '1.5s', '-1s', '0s'])('refuses %p naming the option', (spec) => {
    expect(() => parseMessageDelayLevel(spec)).toThrow(/messageDelayLevel/);
  });
});

describe('delay transform (RocketMQ: HookUtils.transformDelayLevelMessage)', () => {
  test('moves the message to SCHEDULE_TOPIC_XXXX queue level-1 and saves REAL_TOPIC / REAL_QID', () => {
    const m = toScheduleMessage(msg({ DELAY: '3', TAGS: 'a' }), 18);
    expect(m.topic).toBe('SCHEDULE_TOPIC_XXXX');
    expect(m.queueId).toBe(2);
    expect(m.properties).toEqual({ DELAY: '3', TAGS: 'a', REAL_TOPIC: 'T', REAL_QID: '3' });
  });

  test('clamps the level to the max level', () => {
    const m = toScheduleMessage(msg({ DELAY: '40' }), 18);
    expect(m.queueId).toBe(17);
    expect(m.properties.DELAY).toBe('18');
  });

  test.each<Record<string, string>>([{}, { DELAY: '0' }, { DELAY: '-1' }, { DELAY: 'x' }])(
    'leaves %p alone',
    (props) => {
      const m = toScheduleMessage(msg({ ...props }), 18);
      expect(m.topic).toBe('T');
      expect(m.queueId).toBe(3);
    },
  );

  test('not for PREPARED or ROLLBACK transaction records; COMMIT is delayed', () => {
    expect(toScheduleMessage(msg({ DELAY: '1' }, 0x4), 18).topic).toBe('T');
    expect(toScheduleMessage(msg({ DELAY: '1' }, 0xc), 18).topic).toBe('T');
    expect(toScheduleMessage(msg({ DELAY: '1' }, 0x8), 18).topic).toBe('SCHEDULE_TOPIC_XXXX');
  });

  test('delayTimeLevelOf reads the DELAY property', () => {
    expect(delayTimeLevelOf(null)).toBe(0);
    expect(delayTimeLevelOf({ DELAY: '5' })).toBe(5);
    expect(delayTimeLevelOf({ DELAY: 'five' })).toBe(0);
  });
});

describe('delivery (RocketMQ: ScheduleMessageService)', () => {
  test('a message is due at its store time plus its level delay; a far-future time is corrected to now', () => {
    expect(deliverTimestampOf([100, 200], 2, 1000)).toBe(1200);
    expect(deliverTimestampOf([100, 200], 5, 1000)).toBe(1200); // clamped
    expect(correctDeliverTimestamp(5000, 5100, 200)).toBe(5100);
    expect(correctDeliverTimestamp(5000, 9000, 200)).toBe(5000);
  });

  test('messageTimeUp restores the real topic and queue, keeps DELAY and the other properties as RocketMQ 4.9.8 stores them', () => {
    const stored: MessageExt = {
      topic: 'SCHEDULE_TOPIC_XXXX',
      flag: 7,
      body: Buffer.from('hi'),
      properties: { DELAY: '3', REAL_TOPIC: 'T', REAL_QID: '3', TAGS: 'a', UNIQ_KEY: 'u', TIMER_DELAY_MS: '5' },
      queueId: 2,
      queueOffset: 9,
      commitLogOffset: 100,
      sysFlag: 0,
      bornTimestamp: 11,
      bornHost: { ip: '10.0.0.1', port: 1 },
      storeTimestamp: 12,
      storeHost: { ip: '10.0.0.2', port: 2 },
      reconsumeTimes: 4,
      preparedTransactionOffset: 0,
      bodyCRC: 0,
      storeSize: 0,
      msgId: 'x',
    };
    const inner = messageTimeUp(stored);
    expect(inner).toEqual({
      topic: 'T',
      queueId: 3,
      flag: 7,
      body: Buffer.from('hi'),
      properties: { REAL_TOPIC: 'T', REAL_QID: '3', TAGS: 'a', UNIQ_KEY: 'u', DELAY: '3' },
      sysFlag: 0,
      bornTimestamp: 11,
      bornHost: { ip: '10.0.0.1', port: 1 },
      storeHost: { ip: '10.0.0.2', port: 2 },
      reconsumeTimes: 4,
      preparedTransactionOffset: 0,
    });
    expect(messageTimeUp({ ...stored, properties: { DELAY: '3' } })).toBeNull();
  });
});
